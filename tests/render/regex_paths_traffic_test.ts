/**
 * Regex paths, capture rewrites and the per-Ingress default backend through a real haproxy: the
 * rendered configuration and map files (routes-regex.map, docs/routing-maps.md) are served in front
 * of real test backends on loopback, and curl shows which backend answered and the path it got.
 */
import assert from "node:assert/strict";
import { lookupFromLists } from "../../lib/render/model.ts";
import { type Backend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, type PathSpec, service } from "./fixtures.ts";
import { curl, withProxy } from "./live.ts";

const A = "ingress-controller.io/";
const REGEX = { [`${A}path-regex`]: "true" };

/** Services named after the backends (port 80, one endpoint each), plus Services without endpoints. */
function lookup(backends: Backend[], empty: string[] = []) {
  return lookupFromLists({
    services: [...backends.map((b) => b.name), ...empty].map((n) => service(n, [{ port: 80 }])),
    endpointSlices: backends.map((b) =>
      endpointSlice(b.name, [{ name: "", port: b.port }], [{ address: "127.0.0.1" }], { name: b.name })
    ),
  });
}

const regexPath = (path: string, svc: string): PathSpec => ({
  path,
  pathType: "ImplementationSpecific",
  service: svc,
  port: 80,
});

Deno.test("regex paths: matched from the start, case-insensitively, longest first, between Exact and Prefix", async () => {
  await using re = await startBackend({ name: "re" });
  await using longer = await startBackend({ name: "longer" });
  await using exact = await startBackend({ name: "exact" });
  await using root = await startBackend({ name: "root" });
  await using wild = await startBackend({ name: "wild" });
  await using any = await startBackend({ name: "any" });
  const objects = {
    ingresses: [
      ingress({
        name: "regex",
        annotations: REGEX,
        rules: [{
          host: "a.example.com",
          paths: [
            regexPath("/api/v[0-9]+/.*", "re"),
            regexPath("/api/v[0-9]+/users/.*", "longer"),
            { path: "/api/v1/users/me", pathType: "Exact", service: "exact", port: 80 },
            { path: "/api/v1/users/admin", pathType: "Prefix", service: "root", port: 80 },
            { path: "/", pathType: "Prefix", service: "root", port: 80 },
          ],
        }, { host: "*.w.example.com", paths: [regexPath("/w[0-9]$", "wild")] }],
      }),
      ingress({ name: "anyhost", annotations: REGEX, rules: [{ paths: [regexPath("/any[0-9]+(/|$)", "any")] }] }),
      // without path-regex, ImplementationSpecific is a prefix and `.` a character
      ingress({ name: "plain", rules: [{ host: "p.example.com", paths: [regexPath("/a.c", "re")] }] }),
    ],
    lookup: lookup([re, longer, exact, root, wild, any]),
  };
  await withProxy(objects, {}, async ({ http }) => {
    const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    const cases: [string, string, string | null][] = [
      ["a.example.com", "/api/v2/x", "re"],
      ["a.example.com", "/API/V2/X", "re"], // case-insensitive, as ingress-nginx's ~* locations
      ["a.example.com", "/api/v2/users/1", "longer"], // the longer regex first
      ["a.example.com", "/api/v1/users/me", "exact"], // Exact before regex
      ["a.example.com", "/api/v1/users/admin", "longer"], // regex before Prefix (ingress-nginx: regex locations win)
      ["a.example.com", "/api/vx/", "root"],
      ["a.example.com", "/x/api/v2/x", "root"], // anchored at the start of the path
      ["a.example.com", "/any1", "root"], // the host's own routes before host-less ones
      ["b.example.com", "/any12/x", "any"],
      ["b.example.com", "/any12x", null], // (/|$) ends the match
      ["b.example.com", "/api/v2/x", null], // a.example.com's regexes stay on their host
      ["x.w.example.com", "/w1", "wild"],
      ["x.w.example.com", "/w1/", null], // $ at the end anchors the end
      ["x.y.w.example.com", "/w1", null], // a wildcard matches one label
      ["p.example.com", "/a.c/d", "re"],
      ["p.example.com", "/abc", null],
    ];
    for (const [host, path, want] of cases) {
      const r = await get(host, path);
      assert.equal(r.backend, want, `${host}${path}: ${r.status}`);
      if (want === null) assert.equal(r.status, 404, `${host}${path}`);
    }
  });
});

Deno.test("rewrite-target with $n: the whole path becomes the target with the regex's captures, query kept", async () => {
  await using web = await startBackend({ name: "web" });
  const objects = {
    ingresses: [
      ingress({
        name: "classic",
        annotations: { ...REGEX, [`${A}rewrite-target`]: "/$2" },
        rules: [{ host: "a.example.com", paths: [regexPath("/something(/|$)(.*)", "web")] }],
      }),
      ingress({
        name: "middle",
        annotations: { ...REGEX, [`${A}rewrite-target`]: "/users/$2/version/$1%2F$3" },
        rules: [{ host: "b.example.com", paths: [regexPath("/api/(v[0-9]+)/users/([a-z0-9]+)", "web")] }],
      }),
      ingress({
        name: "whole",
        annotations: { ...REGEX, [`${A}rewrite-target`]: "/static" },
        rules: [{ host: "c.example.com", paths: [regexPath("/assets/\\d+/.*", "web")] }],
      }),
    ],
    lookup: lookup([web]),
  };
  await withProxy(objects, {}, async ({ http }) => {
    const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    const cases: [string, string, string][] = [
      ["a.example.com", "/something/foo", "/foo"],
      ["a.example.com", "/something/foo/bar?x=1&y=2", "/foo/bar?x=1&y=2"],
      ["a.example.com", "/something", "/"],
      ["a.example.com", "/SomeThing/Foo", "/Foo"],
      // captures in the middle, a missing one ($3) is empty, %2F stays an escape (log-format % doubled)
      ["b.example.com", "/api/v2/users/42/extra?q", "/users/42/version/v2%2F?q"],
      // without $n the whole path is replaced, as ingress-nginx's rewrite … break
      ["c.example.com", "/assets/12/app.js?v=3", "/static?v=3"],
    ];
    for (const [host, path, target] of cases) {
      const r = await get(host, path);
      assert.deepEqual([r.backend, r.target], ["web", target], `${host}${path}`);
    }
  });
});

Deno.test("default-backend answers while the path's Service has no ready endpoint", async () => {
  await using errors = await startBackend({ name: "errors" });
  await using web = await startBackend({ name: "web" });
  const ing = (name: string, host: string, svc: string, annotations: Record<string, string>) =>
    ingress({ name, annotations, rules: [{ host, paths: [{ path: "/", service: svc, port: 80 }] }] });
  const objects = {
    ingresses: [
      ing("fallback", "a.example.com", "down", { [`${A}default-backend`]: "errors" }),
      ing("explicit-port", "b.example.com", "down", { [`${A}default-backend`]: "errors:80" }),
      ing("up", "c.example.com", "web", { [`${A}default-backend`]: "errors" }),
      ing("none", "d.example.com", "down", {}),
    ],
    lookup: lookup([errors, web], ["down"]),
  };
  await withProxy(objects, {}, async ({ http }) => {
    const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    const a = await get("a.example.com", "/some/page?x=1");
    assert.deepEqual([a.status, a.backend, a.target], [200, "errors", "/some/page?x=1"]);
    assert.equal((await get("b.example.com", "/")).backend, "errors");
    assert.equal((await get("c.example.com", "/")).backend, "web", "a Service with endpoints answers itself");
    const d = await get("d.example.com", "/");
    assert.deepEqual([d.status, d.backend], [503, null], "without default-backend: 503");
  });
});
