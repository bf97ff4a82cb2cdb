/**
 * The proxy ships the Lua file of external authentication itself: a configuration rendered with
 * `auth-url` (which loads `${IC_LUA_DIR}/ic_ext_auth.lua`) passes the Applier's `haproxy -c`,
 * starts and reloads in a fresh work dir where nothing else wrote the file, and the real HAProxy
 * asks the auth service before the backend. The auth service listens on a private address (loopback
 * ones are refused as auth targets), so this runs in a private network namespace (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import type { DesiredState } from "../../lib/proxy/plan.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { EXT_AUTH_LUA, luaSources } from "../../lib/render/lua.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { get, proxyUnderTest } from "./fixtures.ts";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";

if (!inPrivateNetwork()) {
  Deno.test("the proxy's ext-auth test (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the test failed inside the private network namespace: see its output above");
  });
} else {
  Deno.test("the proxy writes the ext-auth Lua file into its work dir: check, start and reload pass", async () => {
    await using web = await startBackend({ name: "web" });
    let asked = 0;
    const auth = Deno.serve({ hostname: privateAddress(70), port: 0, onListen: () => {} }, () => {
      asked++;
      return new Response(null, { status: 401 });
    });
    await using p = await proxyUnderTest();
    try {
      const templates = await loadTemplates(null);
      const desired = (signin: string): DesiredState => {
        const annotations = {
          "ingress-controller.io/auth-url": `http://${privateAddress(70)}:${auth.addr.port}/auth`,
          "ingress-controller.io/auth-signin": signin,
        };
        const { model, problems } = buildModel({
          ingresses: [
            ingress({
              name: "site",
              annotations,
              rules: [{ host: "site.example", paths: [{ path: "/", service: "web", port: 80 }] }],
            }),
          ],
          lookup: lookupFromLists({
            services: [service("web", [{ name: "http", port: 80 }])],
            endpointSlices: [endpointSlice("web", [{ name: "http", port: web.port }], [{ address: "127.0.0.1" }])],
          }),
          allowLoopbackEndpoints: true,
        });
        assert.deepEqual(problems, []);
        const r = render(model, templates);
        return {
          config: r.config,
          crtList: r.crtList,
          pems: new Map(),
          maps: new Map(Object.entries(r.maps)) as never,
        };
      };
      const url = `http://${p.bind}:${p.httpPort}/page`;

      const first = await p.applier.apply(desired("/login"));
      assert.ok(first.ok, first.error ?? "");
      assert.equal(first.kind, "start");
      const lua = await Deno.readTextFile(join(p.workDir, "lua", EXT_AUTH_LUA));
      assert.equal(lua, (await luaSources()).get(EXT_AUTH_LUA));
      const a = await get(url, "site.example");
      assert.deepEqual([a.status, a.headers.location], [302, "/login?rd=http://site.example/page"]);

      const second = await p.applier.apply(desired("/signin"));
      assert.ok(second.ok, second.error ?? "");
      assert.equal(second.kind, "reload");
      const b = await get(url, "site.example");
      assert.deepEqual([b.status, b.headers.location], [302, "/signin?rd=http://site.example/page"]);
      assert.equal(asked, 2);
      assert.equal(web.requests, 0);
    } finally {
      await auth.shutdown();
    }
  });
}
