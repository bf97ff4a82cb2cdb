/**
 * External authentication as configuration (lib/render/features/ext_auth.ts): the address found before the
 * action (a literal, or a name resolved by do-resolve through the `ic_auth` resolvers section) and
 * dropped when in a refused range; the action's arguments are the validated values, single-quoted
 * (`-` for none), followed by the fail-closed deny; hostile, refused or disallowed values are
 * reported and make the route a plain 500 (never an unauthenticated pass); auth-signin and
 * auth-response-headers without auth-url are reported; the `global` section loads the Lua file only
 * when a backend uses it, and `haproxy -c` passes with it.
 */
import assert from "node:assert/strict";
import { buildModel, lookupFromLists, type ModelInput } from "../../../lib/render/model.ts";
import { REFUSED_PATTERNS } from "../../../lib/render/features/ext_auth.ts";
import { loadTemplates, render } from "../../../lib/render/render.ts";
import { validateConfig } from "../../../lib/render/validate.ts";
import { endpointSlice, ingress, service } from "../fixtures.ts";

const A = "ingress-controller.io/";

function rendered(annotations: Record<string, string>, layers: ModelInput["layers"] = {}) {
  const { model, problems } = buildModel({
    layers,
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
/** The backend of a.example.com's route: its lines, trimmed. */
const backendLines = (config: string) => {
  const start = config.indexOf("\nbackend be_default_web_80_");
  assert.ok(start >= 0, "the route's backend variant");
  const end = config.indexOf("\nbackend ", start + 1);
  return config.slice(start, end < 0 ? undefined : end).split("\n").map((l) => l.trim()).filter((l) => l);
};
const REFUSED_ACL = `acl ic_auth_refused var(txn.ic_auth_dst) -m ip ${REFUSED_PATTERNS.join(" ")}`;

Deno.test("auth-url renders the address, the Lua action with quoted arguments, the fail-closed deny and the lua-load line", async () => {
  const url = "https://auth.example.com:8443/oauth2/auth;v=1?app=shop&x=%41,*!+@:";
  const { model, problems } = rendered({
    [`${A}auth-url`]: url,
    [`${A}auth-signin`]: "https://auth.example.com/start?rd=https://a.example.com/",
    [`${A}auth-response-headers`]: "X-Auth-Request-User , Authorization",
    [`${A}auth-request-headers`]: "X-Api-Key, Accept",
  });
  assert.deepEqual(problems, []);
  const out = await configOf(model);
  assert.deepEqual(authLines(out.config), [
    'lua-load-per-thread "${IC_LUA_DIR}/ic_common.lua"',
    'lua-load-per-thread "${IC_LUA_DIR}/ic_ext_auth.lua"',
    "httpclient.ssl.verify none",
    "resolvers ic_auth",
    "http-request do-resolve(txn.ic_auth_dst,ic_auth,ipv4) str(auth.example.com)",
    REFUSED_ACL,
    "http-request set-var(txn.ic_auth_refused) var(txn.ic_auth_dst) if ic_auth_refused",
    "http-request unset-var(txn.ic_auth_dst) if ic_auth_refused",
    `http-request lua.ic_auth_request '${url}' '8443' 'https://auth.example.com/start?rd=https://a.example.com/' ` +
    `'X-Auth-Request-User,Authorization' 'X-Api-Key,Accept'`,
    "http-request deny deny_status 500 if !{ var(txn.ic_auth) -m str ok }",
    "http-response lua.ic_auth_cookies",
  ]);
  assert.match(out.config, /\nresolvers ic_auth\n {4}parse-resolv-conf\n/);
  const check = await validateConfig(out, { timeoutMs: 20_000 });
  assert.deepEqual(check.errors, []);

  // A literal address is set as it is (no resolvers section), and checked by the same ACL.
  for (
    const [raw, set, port] of [
      ["http://10.0.0.5:4180/oauth2/auth", "ipv4(10.0.0.5)", "4180"],
      ["https://[fd00:0::5]/check", "ipv6(fd00::5)", "443"],
    ]
  ) {
    const bare = rendered({ [`${A}auth-url`]: raw });
    const lines = authLines((await configOf(bare.model)).config);
    assert.deepEqual(lines.slice(3, 5), [`http-request set-var(txn.ic_auth_dst) ${set}`, REFUSED_ACL]);
    assert.equal(lines[7], `http-request lua.ic_auth_request '${raw}' '${port}' '-' '-' '-'`);
    assert.ok(!(await configOf(bare.model)).config.includes("resolvers ic_auth"));
    assert.deepEqual((await validateConfig(await configOf(bare.model), { timeoutMs: 20_000 })).errors, []);
  }
});

Deno.test("hostile, refused or unusable auth values are reported and make the route a plain 500", async () => {
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
    "http://169.254.169.254/latest/meta-data/",
    "http://127.0.0.1:8080/",
    "http://2852039166/",
    "http://[::ffff:169.254.169.254]/",
    "http://metadata.google.internal/",
    "http://oauth2-proxy.auth.svc.cluster.local:56789/",
  ];
  for (const raw of hostile) {
    const { model, problems } = rendered({ [`${A}auth-url`]: raw, [`${A}auth-signin`]: "/login" });
    assert.ok(
      problems.some((p) => p.includes("auth-url") && p.includes("every request of the route gets 500")),
      `${JSON.stringify(raw)}: ${problems}`,
    );
    const config = (await configOf(model)).config;
    assert.deepEqual(authLines(config), [], JSON.stringify(raw));
    assert.ok(backendLines(config).includes("http-request deny deny_status 500"), JSON.stringify(raw));
  }
  // As ingress-nginx denies the location: a bad companion key fails the route closed too.
  for (
    const [key, value] of [
      ["auth-response-headers", "X-A, X'B"],
      ["auth-request-headers", "Host"],
      ["auth-signin", "http://169.254.169.254/start"],
    ]
  ) {
    const bad = rendered({ [`${A}auth-url`]: "http://auth.example.com/", [`${A}${key}`]: value });
    assert.ok(bad.problems.some((p) => p.includes(key) && p.includes("gets 500")), `${key}: ${bad.problems}`);
    const config = (await configOf(bad.model)).config;
    assert.deepEqual(authLines(config), [], key);
    assert.ok(backendLines(config).includes("http-request deny deny_status 500"), key);
  }
  // Disabled by the risk limit: still never an unauthenticated pass.
  const { model, problems } = buildModel({
    disableRiskAtOrAbove: "high",
    ingresses: [ingress({
      name: "app",
      annotations: { [`${A}auth-url`]: "http://auth.example.com/" },
      rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    })],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port: 8080 }], [{ address: "10.0.0.1" }])],
    }),
  });
  assert.ok(
    problems.some((p) => /auth-url is disabled.*gets 500/.test(p.message)),
    problems.map((p) => p.message).join(),
  );
  assert.ok(backendLines((await configOf(model)).config).includes("http-request deny deny_status 500"));
});

Deno.test("auth-url-allowed-hosts: the class's list (else the global one) decides which hosts auth-url may name", async () => {
  const url = (host: string) => ({ [`${A}auth-url`]: `http://${host}/oauth2/auth` });
  const global = { "auth-url-allowed-hosts": "oauth2-proxy.auth.svc.cluster.local,*.sso.svc.cluster.local" };
  for (const host of ["oauth2-proxy.auth.svc.cluster.local", "dex.sso.svc.cluster.local"]) {
    const ok = rendered(url(host), { global });
    assert.deepEqual(ok.problems, [], host);
    assert.ok(authLines((await configOf(ok.model)).config).some((l) => l.includes(`str(${host})`)), host);
  }
  for (const host of ["web.team-b.svc.cluster.local", "10.0.0.5"]) {
    const refused = rendered(url(host), { global });
    assert.ok(
      refused.problems.some((p) => p.includes(`host ${host} is not in the class's auth-url-allowed-hosts`)),
      refused.problems.join(),
    );
    assert.ok(backendLines((await configOf(refused.model)).config).includes("http-request deny deny_status 500"));
  }
  // A class's list replaces the global one.
  const cls = { "auth-url-allowed-hosts": "web.team-b.svc.cluster.local" };
  assert.deepEqual(rendered(url("web.team-b.svc.cluster.local"), { global, class: cls }).problems, []);
  assert.equal(rendered(url("oauth2-proxy.auth.svc.cluster.local"), { global, class: cls }).problems.length, 1);
});

Deno.test("auth-signin, auth-response-headers and auth-request-headers alone are reported and render nothing", async () => {
  const { model, problems } = rendered({
    [`${A}auth-signin`]: "/login",
    [`${A}auth-response-headers`]: "X-User",
    [`${A}auth-request-headers`]: "X-Api-Key",
  });
  assert.deepEqual(problems.filter((p) => /without auth-url/.test(p)).length, 3, problems.join("; "));
  assert.deepEqual(authLines((await configOf(model)).config), []);
});
