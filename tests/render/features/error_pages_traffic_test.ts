/**
 * Custom error pages through a real haproxy (`error-codes` with `default-backend`, the Lua action of
 * templates/ic_error_pages.lua): an app on loopback answers `/status/NNN` with NNN, an error-page
 * Service answers with the X-Code it receives (as ingress-nginx's custom-error-pages) and records
 * each request. Shown: a listed code gets the error Service's page (its status, headers and body),
 * fetched as a GET of `/` with the headers ingress-nginx sends (its status too: ingress-nginx does not change
 * the error backend's answer); other codes are untouched; a page over
 * 64 KiB, an error Service without ready endpoint or one that is down keep the original answer.
 */
import assert from "node:assert/strict";
import { lookupFromLists } from "../../../lib/render/model.ts";
import { endpointSlice, ingress, service } from "../fixtures.ts";
import { curl, withProxy } from "../live.ts";

const A = "ingress-controller.io/";

interface Seen {
  method: string;
  target: string;
  headers: Record<string, string>;
}

/** The app: `/status/NNN` answers NNN with `app NNN`; HEAD too. */
function startApp() {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const status = Number(/\/status\/([0-9]{3})/.exec(new URL(req.url).pathname)?.[1] ?? 200);
    return new Response(`app ${status}\n`, { status, headers: { "x-from": "app" } });
  });
  return { port: server.addr.port, [Symbol.asyncDispose]: () => server.shutdown() };
}

/**
 * The error pages: status X-Code, body `page <code>`; an X-Original-URI containing `huge` gets 70,000
 * bytes, one containing `as200` status 200.
 */
function startPages() {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    seen.push({ method: req.method, target: url.pathname + url.search, headers: Object.fromEntries(req.headers) });
    const code = Number(req.headers.get("x-code") ?? 200);
    const uri = req.headers.get("x-original-uri") ?? "";
    const huge = uri.includes("huge");
    return new Response(huge ? "x".repeat(70_000) : `page ${code}\n`, {
      status: uri.includes("as200") ? 200 : code,
      headers: { "content-type": "text/plain", "x-from": "pages" },
    });
  });
  return {
    port: server.addr.port,
    seen,
    stop: () => server.shutdown(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const ERRORS = { [`${A}error-codes`]: "404,503" };

function objects(app: number, pages: number) {
  return {
    ingresses: [
      ingress({
        name: "shop",
        annotations: { ...ERRORS, [`${A}default-backend`]: "pages" },
        rules: [{ host: "shop.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
      ingress({
        name: "empty",
        annotations: { ...ERRORS, [`${A}default-backend`]: "nopages:80" },
        rules: [{ host: "empty.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
    ],
    lookup: lookupFromLists({
      services: [
        service("web", [{ port: 80 }]),
        service("pages", [{ port: 8080 }]),
        service("nopages", [{ port: 80 }]),
      ],
      endpointSlices: [
        endpointSlice("web", [{ name: "", port: app }], [{ address: "127.0.0.1" }]),
        endpointSlice("pages", [{ name: "", port: pages }], [{ address: "127.0.0.1" }]),
      ],
    }),
  };
}

Deno.test("error-codes: a listed code gets the default backend's page, with ingress-nginx's headers", async () => {
  await using app = startApp();
  await using pages = startPages();
  await withProxy(objects(app.port, pages.port), {}, async ({ http }) => {
    const get = (path: string, ...args: string[]) =>
      curl(["-H", "Host: shop.example.com", ...args, `http://127.0.0.1:${http}${path}`]);

    const r404 = await get("/status/404?q=1", "-H", "Accept: application/json", "-H", "X-Request-ID: req-1");
    assert.deepEqual([r404.status, r404.body], [404, "page 404\n"]);
    assert.equal(pages.seen.length, 1);
    const seen = pages.seen[0];
    assert.deepEqual([seen.method, seen.target], ["GET", "/"]);
    assert.deepEqual(
      Object.fromEntries(
        [
          "host",
          "x-code",
          "x-format",
          "x-original-uri",
          "x-namespace",
          "x-ingress-name",
          "x-service-name",
          "x-service-port",
          "x-request-id",
        ].map((h) => [h, seen.headers[h]]),
      ),
      {
        host: "shop.example.com",
        "x-code": "404",
        "x-format": "application/json",
        "x-original-uri": "/status/404?q=1",
        "x-namespace": "default",
        "x-ingress-name": "shop",
        "x-service-name": "web",
        "x-service-port": "80",
        "x-request-id": "req-1",
      },
    );
    assert.equal(seen.headers["x-ic-error-backend"], undefined, "the routing header never reaches the page");

    const headers = await new Deno.Command("curl", {
      args: [
        "-sS",
        "-D",
        "-",
        "-o",
        "/dev/null",
        "-H",
        "Host: shop.example.com",
        `http://127.0.0.1:${http}/status/503`,
      ],
      stdout: "piped",
    }).output();
    const head = new TextDecoder().decode(headers.stdout);
    assert.match(head, /^HTTP\/1\.1 503/);
    assert.match(head, /^x-from: pages\r$/m, "the page's own headers");
    assert.doesNotMatch(head, /x-ic-error-page/i, "the internal mark is not sent");
    assert.equal(pages.seen.at(-1)!.headers["x-request-id"], undefined, "no X-Request-ID when the request had none");

    for (const code of [200, 500, 403]) {
      const r = await get(`/status/${code}`);
      assert.deepEqual([r.status, r.body], [code, `app ${code}\n`], `code ${code} is not listed`);
    }
    assert.equal(pages.seen.length, 2, "unlisted codes fetch no page");

    const as200 = await get("/status/404/as200");
    assert.deepEqual([as200.status, as200.body], [200, "page 404\n"], "the page's status, as nginx: unchanged");

    const huge = await get("/status/404/huge");
    assert.deepEqual([huge.status, huge.body], [404, "app 404\n"], "a page over 64 KiB keeps the original answer");

    const empty = await curl(["-H", "Host: empty.example.com", `http://127.0.0.1:${http}/status/404`]);
    assert.deepEqual([empty.status, empty.body], [404, "app 404\n"], "no ready endpoint: the original answer");

    await pages.stop();
    const down = await get("/status/503");
    assert.deepEqual([down.status, down.body], [503, "app 503\n"], "the page Service down: the original answer");
  });
});
