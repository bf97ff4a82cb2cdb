/**
 * Custom error pages as configuration (lib/render/features/error_pages.ts): the backend lines capture the
 * request before any rewrite and run the Lua action with validated, single-quoted arguments; each
 * Ingress gets its own variant (X-Ingress-Name); the internal frontend binds only the proxy's unix
 * socket (mode 600) and selects only the default backends in use; error-codes without
 * default-backend is reported and renders nothing; `haproxy -c` passes.
 */
import assert from "node:assert/strict";
import { buildModel, lookupFromLists } from "../../../lib/render/model.ts";
import { loadTemplates, render } from "../../../lib/render/render.ts";
import { validateConfig } from "../../../lib/render/validate.ts";
import { errorPageLines } from "../../../lib/render/features/error_pages.ts";
import { endpointSlice, ingress, service } from "../fixtures.ts";

const A = "ingress-controller.io/";

function build(annotations: Record<string, string>[]) {
  return buildModel({
    ingresses: annotations.map((a, i) =>
      ingress({
        name: `app-${i}`,
        annotations: a,
        rules: [{ host: `a${i}.example.com`, paths: [{ path: "/", service: "web", port: 80 }] }],
      })
    ),
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }]), service("pages", [{ port: 8080 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port: 8080 }], [{ address: "10.0.0.1" }])],
    }),
  });
}

Deno.test("error-codes renders the capture lines, the action per Ingress and the internal frontend", async () => {
  const pages = { [`${A}error-codes`]: "503,404", [`${A}default-backend`]: "pages" };
  const { model, problems } = build([pages, pages]);
  assert.deepEqual(problems, []);
  const out = render(model, await loadTemplates(null));
  const actions = out.config.split("\n").filter((l) => l.includes("lua.ic_error_page")).map((l) => l.trim()).sort();
  assert.deepEqual(actions, [
    "http-response lua.ic_error_page 'be_default_pages_8080' '404,503' 'default' 'app-0' 'web' '80'",
    "http-response lua.ic_error_page 'be_default_pages_8080' '404,503' 'default' 'app-1' 'web' '80'",
  ], "one variant per Ingress");
  assert.match(out.config, /^ {4}http-request set-var\(txn\.ic_ep_uri\) pathq$/m);
  assert.match(out.config, /^ {4}lua-load-per-thread "\$\{IC_LUA_DIR\}\/ic_error_pages\.lua"$/m);
  const frontend = out.config.slice(out.config.indexOf("frontend ic_error_pages"));
  const binds = frontend.slice(0, frontend.indexOf("\n\n")).split("\n").filter((l) => /^\s*bind /.test(l));
  assert.deepEqual(binds, ['    bind "unix@${IC_RUNTIME_SOCKET}.errors" mode 600'], "no network listener");
  assert.match(
    frontend,
    /^ {4}use_backend be_default_pages_8080 if \{ var\(txn\.ic_ep_backend\) -m str be_default_pages_8080 \} \{ nbsrv\(be_default_pages_8080\) gt 0 \}$/m,
  );
  assert.equal(frontend.match(/use_backend/g)!.length, 1, "only the default backends in use");
  assert.equal((out.config.match(/x-ic-error-backend/gi) ?? []).length, 2, "read and removed by that frontend only");
  const check = await validateConfig(out, { timeoutMs: 20_000 });
  assert.ok(check.ok, check.errors.join("\n"));
});

Deno.test("error-codes without default-backend is reported and renders nothing", async () => {
  const { model, problems } = build([{ [`${A}error-codes`]: "404" }]);
  assert.deepEqual(problems.map((p) => p.message), [
    "annotation ingress-controller.io/error-codes has no effect without default-backend; ignored",
  ]);
  const out = render(model, await loadTemplates(null));
  assert.doesNotMatch(out.config, /ic_error_page|lua-load/);
});

Deno.test("unvalidated error page values are a bug, never a line", () => {
  const ok = { fallback: "be_a_b_80", codes: [404], namespace: "a", ingress: "i", service: "s", port: 80 };
  assert.equal(errorPageLines(ok).length, 4);
  for (const bad of [{ fallback: "be a" }, { codes: [200] }, { ingress: "x' y" }, { port: "http'" }, { codes: [] }]) {
    assert.throws(() => errorPageLines({ ...ok, ...bad }), /^Error: bug: unvalidated error pages/);
  }
});
