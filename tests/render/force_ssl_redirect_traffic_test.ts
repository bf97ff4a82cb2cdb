/**
 * `force-ssl-redirect` through a real haproxy: a proxy without any TLS (terminated in front of it)
 * redirects the plain HTTP requests of the Ingress's hosts to HTTPS with the same path and query
 * (308, or `ssl-redirect-code`), even with `ssl-redirect: "false"`; other hosts are served.
 */
import assert from "node:assert/strict";
import { lookupFromLists } from "../../lib/render/model.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";
import { curl, withProxy } from "./live.ts";

const A = "ingress-controller.io/";

Deno.test("force-ssl-redirect: hosts without TLS are redirected to HTTPS, others are served", async () => {
  await using web = await startBackend({ name: "web" });
  const route = (host: string) => ({ host, paths: [{ path: "/", service: "web", port: 80 }] });
  const objects = {
    ingresses: [
      ingress({
        name: "forced",
        annotations: { [`${A}force-ssl-redirect`]: "true", [`${A}ssl-redirect`]: "false" },
        rules: [route("shop.example.com")],
      }),
      ingress({
        name: "code",
        annotations: { [`${A}force-ssl-redirect`]: "true", [`${A}ssl-redirect-code`]: "301" },
        rules: [route("old.example.com")],
      }),
      ingress({ name: "plain", rules: [route("plain.example.com")] }),
    ],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port: web.port }], [{ address: "127.0.0.1" }])],
    }),
  };
  await withProxy(objects, {}, async ({ http }) => {
    const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    const forced = await get("shop.example.com", "/cart/?item=1");
    assert.deepEqual([forced.status, forced.location, forced.backend], [
      308,
      "https://shop.example.com/cart/?item=1",
      null,
    ]);
    const code = await get("old.example.com", "/");
    assert.deepEqual([code.status, code.location], [301, "https://old.example.com/"]);
    const plain = await get("plain.example.com", "/x");
    assert.deepEqual([plain.status, plain.backend, plain.target], [200, "web", "/x"]);
  });
});
