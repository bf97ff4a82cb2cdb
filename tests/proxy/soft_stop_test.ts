/**
 * A soft stop of HAProxy running a configuration rendered from the real templates (what a proxy
 * pod does at the end of its drain, and what every reload does to the old worker): a client's idle
 * keep-alive connection is not closed under it — its next request is answered, with
 * `Connection: close`, so the client moves to a new connection without a failed request.
 */
import type { MapFile } from "../../lib/render/maps.ts";
import assert from "node:assert/strict";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { proxyUnderTest } from "./fixtures.ts";

/** Reads one HTTP/1.1 response (headers and a Content-Length body) from `conn`; "" at EOF. */
async function readResponse(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(64 * 1024);
  let text = "";
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) return text;
    text += new TextDecoder().decode(buf.subarray(0, n));
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) continue;
    const length = Number(/^content-length:\s*(\d+)/im.exec(text.slice(0, end))?.[1] ?? 0);
    if (text.length >= end + 4 + length) return text;
  }
}

Deno.test("rendered config: on a soft stop an idle keep-alive connection gets one more answer with Connection: close", async () => {
  await using p = await proxyUnderTest();
  const backend = await startBackend({ name: "web", host: p.bind });
  try {
    const { model, problems } = buildModel({
      ingresses: [ingress({
        name: "site",
        rules: [{ host: "site.example", paths: [{ path: "/", pathType: "Prefix", service: "web", port: 80 }] }],
      })],
      lookup: lookupFromLists({
        services: [service("web", [{ name: "http", port: 80, targetPort: backend.port }])],
        endpointSlices: [
          endpointSlice("web", [{ name: "http", port: backend.port }], [{ address: backend.address }]),
        ],
      }),
      allowLoopbackEndpoints: true,
    });
    assert.deepEqual(problems, []);
    const r = render(model, await loadTemplates(null));
    const applied = await p.applier.apply({
      config: r.config,
      crtList: r.crtList,
      pems: new Map(),
      maps: new Map(Object.entries(r.maps)) as Map<MapFile, string>,
    });
    assert.ok(applied.ok, applied.error ?? "");

    const conn = await Deno.connect({ hostname: p.bind, port: p.httpPort });
    try {
      const request = new TextEncoder().encode("GET /x HTTP/1.1\r\nHost: site.example\r\n\r\n");
      await conn.write(request);
      const first = await readResponse(conn);
      assert.match(first, /^HTTP\/1\.1 200 /);
      assert.doesNotMatch(first, /^connection: close/im, "a keep-alive connection");

      // Soft stop (SIGUSR1); the listener closes at once, the idle connection stays.
      const stopping = p.haproxy.stop(60_000);
      for (;;) {
        try {
          (await Deno.connect({ hostname: p.bind, port: p.httpPort })).close();
        } catch (err) {
          if (err instanceof Deno.errors.ConnectionRefused) break;
          throw err;
        }
        await new Promise((res) => setTimeout(res, 20));
      }
      await conn.write(request);
      const last = await readResponse(conn);
      assert.match(last, /^HTTP\/1\.1 200 /, `the request on the idle connection: ${JSON.stringify(last)}`);
      assert.match(last, /^connection: close/im, "the client is told to move on");
      assert.equal(await readResponse(conn), "", "then HAProxy closes it");
      await stopping;
    } finally {
      conn.close();
    }
  } finally {
    await backend.close();
  }
});
