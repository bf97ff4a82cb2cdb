/**
 * External authentication as configuration (lib/render/ext_auth.ts): the action's arguments are
 * the validated values, single-quoted (`-` for none), followed by the fail-closed deny; hostile
 * values are refused with a problem and render no line; auth-signin and auth-response-headers
 * without auth-url are reported; the `global` section loads the Lua file only when a backend uses
 * it, and `haproxy -c` passes with it.
 */
import assert from "node:assert/strict";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { validateConfig } from "../../lib/render/validate.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";

const A = "ingress-controller.io/";

function rendered(annotations: Record<string, string>) {
  const { model, problems } = buildModel({
    ingresses: [
      ingress({
        name: "app",
        annotations,
        rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
    ],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port: 8080 }], [{ address: "10.0.0.1" }])],
    }),
  });
  return { problems: problems.map((p) => p.message), model };
}

const configOf = async (model: ReturnType<typeof rendered>["model"]) => render(model, await loadTemplates(null));
const authLines = (config: string) =>
  config.split("\n").filter((l) => /ic_auth|lua-load|^\s*httpclient\./.test(l)).map((l) => l.trim());

Deno.test("auth-url renders the Lua action with quoted arguments, the fail-closed deny and the lua-load line", async () => {
  const url = "https://auth.example.com:8443/oauth2/auth;v=1?app=shop&x=%41,*!+@:";
  const { model, problems } = rendered({
    [`${A}auth-url`]: url,
    [`${A}auth-signin`]: "https://auth.example.com/start?rd=https://a.example.com/",
    [`${A}auth-response-headers`]: "X-Auth-Request-User , Authorization",
  });
  assert.deepEqual(problems, []);
  const out = await configOf(model);
  assert.deepEqual(authLines(out.config), [
    'lua-load-per-thread "${IC_LUA_DIR}/ic_common.lua"',
    'lua-load-per-thread "${IC_LUA_DIR}/ic_ext_auth.lua"',
    "httpclient.ssl.verify none",
    `http-request lua.ic_auth_request '${url}' 'https://auth.example.com/start?rd=https://a.example.com/' 'X-Auth-Request-User,Authorization'`,
    "http-request deny deny_status 500 if !{ var(txn.ic_auth) -m str ok }",
    "http-response lua.ic_auth_cookies",
  ]);
  const check = await validateConfig(out, { timeoutMs: 20_000 });
  assert.deepEqual(check.errors, []);

  const bare = rendered({ [`${A}auth-url`]: "http://10.0.0.5:4180/oauth2/auth" });
  assert.deepEqual(authLines((await configOf(bare.model)).config).slice(3, 4), [
    "http-request lua.ic_auth_request 'http://10.0.0.5:4180/oauth2/auth' '-' '-'",
  ]);
});

Deno.test("hostile auth values are refused with a problem and render no Lua line", async () => {
  const hostile = [
    "http://auth.example.com/x' '/evil",
    "http://auth.example.com/${HOME}",
    "http://auth.example.com/%[req.hdr(host)]",
    "http://auth.example.com/a\n    http-request allow",
    'http://auth.example.com/"x"',
    "http://auth.example.com/a b",
    "http://auth.example.com/\\x",
    "http://$host/oauth2/auth",
    "file:///etc/passwd",
    "/oauth2/auth",
    "-",
  ];
  for (const raw of hostile) {
    const { model, problems } = rendered({ [`${A}auth-url`]: raw, [`${A}auth-signin`]: raw });
    assert.ok(problems.some((p) => p.includes("auth-url")), `${JSON.stringify(raw)}: ${problems}`);
    const lines = authLines((await configOf(model)).config);
    assert.deepEqual(lines, [], JSON.stringify(raw));
  }
  const names = rendered({ [`${A}auth-url`]: "http://a.example.com/", [`${A}auth-response-headers`]: "X-A, X'B" });
  assert.ok(names.problems.some((p) => p.includes("auth-response-headers")));
  assert.match(authLines((await configOf(names.model)).config)[3], / '-'$/, "the bad list is ignored, not the key");
});

Deno.test("auth-signin and auth-response-headers alone are reported and render nothing", async () => {
  const { model, problems } = rendered({ [`${A}auth-signin`]: "/login", [`${A}auth-response-headers`]: "X-User" });
  assert.deepEqual(problems.filter((p) => /without auth-url/.test(p)).length, 2, problems.join("; "));
  assert.deepEqual(authLines((await configOf(model)).config), []);
});
