/**
 * The rendered configuration routes real traffic as the Ingress semantics say: a real haproxy runs
 * the rendered config (with the IC_* environment the proxy command sets) in front of real test
 * backends, and curl sends requests by Host, path and SNI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { type Backend, startBackend } from "../../lib/localenv/backend.ts";
import { startHaproxy } from "../../lib/localenv/haproxy.ts";
import { freePorts } from "../../lib/localenv/ports.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";

interface Answer {
  status: number;
  backend: string | null;
  location: string;
  body: string;
}

async function curl(args: string[]): Promise<Answer> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--max-time", "10", "-w", "\n%{http_code} %{redirect_url}", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, `curl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  const cut = text.lastIndexOf("\n");
  const [status, location = ""] = text.slice(cut + 1).split(" ");
  const body = text.slice(0, cut);
  let backend: string | null = null;
  try {
    backend = JSON.parse(body).name ?? null;
  } catch { /* not a backend answer */ }
  return { status: Number(status), backend, location, body };
}

async function tlsSecretFrom(name: string, ca: Awaited<ReturnType<typeof createCA>>, dnsNames: string[]) {
  const leaf = await issueCertificate(ca, { commonName: dnsNames[0], dnsNames, usages: ["serverAuth"] });
  return {
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/tls",
      metadata: { namespace: "default", name },
      data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) },
    },
    pem: `${leaf.certPem.trimEnd()}\n${leaf.keyPem.trimEnd()}\n`,
  };
}

async function withProxy(
  objects: Parameters<typeof buildModel>[0],
  pems: Record<string, string>,
  fn: (ports: { http: number; https: number; stats: number }) => Promise<void>,
): Promise<void> {
  // The backends listen on the host's loopback; no API server in between.
  const { model, problems } = buildModel({ ...objects, allowLoopbackEndpoints: true });
  assert.deepEqual(problems, []);
  const rendered = render(model, await loadTemplates(null));
  const dir = await Deno.makeTempDir({ prefix: "ic-routing-test-" });
  try {
    const certDir = join(dir, "certs");
    await Deno.mkdir(certDir);
    await Deno.writeTextFile(join(dir, "haproxy.cfg"), rendered.config);
    await Deno.writeTextFile(join(certDir, "crt-list"), rendered.crtList);
    for (const s of rendered.secrets) await Deno.writeTextFile(join(certDir, s.file), pems[s.file]);
    const [http, https, stats] = freePorts(3);
    const env = {
      IC_BIND_ADDR: "127.0.0.1",
      IC_HTTP_PORT: String(http),
      IC_HTTPS_PORT: String(https),
      IC_STATS_PORT: String(stats),
      IC_RUNTIME_SOCKET: join(dir, "runtime.sock"),
      IC_CERT_DIR: certDir,
    };
    const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env });
    try {
      await fn({ http, https, stats });
    } finally {
      await proxy.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("rendered config routes by host, path type, wildcard, default backend, TLS SNI and redirect", async () => {
  const names = ["web", "api", "wild", "dflt", "secure"];
  const backends: Backend[] = [];
  try {
    for (const name of names) backends.push(await startBackend({ name }));
    const port = (name: string) => backends[names.indexOf(name)].port;
    const ca1 = await createCA({ commonName: "routing-test-ca-1" });
    const ca2 = await createCA({ commonName: "routing-test-ca-2" });
    const secure = await tlsSecretFrom("secure-tls", ca1, ["secure.example.com"]);
    const wild = await tlsSecretFrom("wild-tls", ca2, ["*.example.org"]);
    const dir = await Deno.makeTempDir({ prefix: "ic-routing-ca-" });
    try {
      await Deno.writeTextFile(join(dir, "ca1.pem"), ca1.certPem);
      await Deno.writeTextFile(join(dir, "ca2.pem"), ca2.certPem);

      const objects = {
        ingresses: [
          ingress({
            name: "routes",
            defaultBackend: { service: "dflt", port: 80 },
            rules: [
              {
                host: "foo.example.com",
                paths: [
                  { path: "/app/", pathType: "Prefix", service: "web", port: "http" },
                  { path: "/app/exact", pathType: "Exact", service: "api", port: 80 },
                  { path: "/legacy", pathType: "ImplementationSpecific", service: "api", port: 80 },
                ],
              },
              { paths: [{ path: "/any", pathType: "Prefix", service: "api", port: 80 }] },
            ],
          }),
          ingress({
            name: "secure",
            tls: [{ hosts: ["secure.example.com"], secretName: "secure-tls" }, {
              hosts: ["*.example.org"],
              secretName: "wild-tls",
            }],
            rules: [
              { host: "secure.example.com", paths: [{ path: "/", service: "secure", port: 80 }] },
              { host: "*.example.org", paths: [{ path: "/", service: "wild", port: 80 }] },
            ],
          }),
        ],
        lookup: lookupFromLists({
          services: names.map((n) => service(n, [{ name: "http", port: 80, targetPort: "web" }])),
          endpointSlices: names.map((n) =>
            endpointSlice(n, [{ name: "http", port: port(n) }], [{ address: "127.0.0.1" }])
          ),
          secrets: [secure.secret, wild.secret],
        }),
      };
      const pems = { "default_secure-tls.pem": secure.pem, "default_wild-tls.pem": wild.pem };
      await withProxy(objects, pems, async ({ http, https, stats }) => {
        const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
        const cases: [string, string, string][] = [
          ["foo.example.com", "/app", "web"],
          ["foo.example.com", "/app/", "web"],
          ["foo.example.com", "/app/x/y?q=1", "web"],
          ["foo.example.com", "/apple", "dflt"], // element-wise prefix: /app does not match /apple
          ["foo.example.com", "/app/exact", "api"],
          ["foo.example.com", "/app/exact/more", "web"], // Exact does not match below itself
          ["foo.example.com", "/legacy/x", "api"], // ImplementationSpecific is a prefix match
          ["FOO.Example.com:8080", "/app", "web"], // host compared without port, lower-cased
          ["other.example.com", "/any/thing", "api"], // rule without host
          ["other.example.com", "/anything", "dflt"],
          ["b.example.net", "/", "dflt"],
        ];
        for (const [host, path, want] of cases) {
          const got = await get(host, path);
          assert.equal(got.status, 200, `${host}${path}: ${got.body}`);
          assert.equal(got.backend, want, `${host}${path}`);
        }
        const redirect = await get("secure.example.com", "/p?x=1");
        assert.equal(redirect.status, 308);
        assert.equal(redirect.location, "https://secure.example.com/p?x=1");
        assert.equal((await get("a.example.org", "/")).status, 308);
        assert.equal((await get("a.b.example.org", "/")).backend, "dflt", "a wildcard matches exactly one label");

        const tls = (host: string, ca: string) =>
          curl([
            "--resolve",
            `${host}:${https}:127.0.0.1`,
            "--cacert",
            join(dir, ca),
            `https://${host}:${https}/hello`,
          ]);
        const s = await tls("secure.example.com", "ca1.pem");
        assert.equal(s.backend, "secure");
        assert.equal(JSON.parse(s.body).headers["x-forwarded-proto"], "https");
        assert.equal((await tls("x.example.org", "ca2.pem")).backend, "wild");
        // the certificate chosen by SNI is the one of the matching Secret (the other CA fails)
        const wrong = await new Deno.Command("curl", {
          args: [
            "-sS",
            "--resolve",
            `x.example.org:${https}:127.0.0.1`,
            "--cacert",
            join(dir, "ca1.pem"),
            `https://x.example.org:${https}/`,
          ],
          stdout: "null",
          stderr: "null",
        }).output();
        assert.equal(wrong.success, false);

        const metrics = await curl([`http://127.0.0.1:${stats}/metrics`]);
        assert.equal(metrics.status, 200);
        assert.match(metrics.body, /^haproxy_process_/m);
        const page = await curl([`http://127.0.0.1:${stats}/;csv`]);
        assert.match(page.body, /^# pxname,svname,/);
        assert.match(page.body, /^be_default_web_http,s1,/m);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    for (const b of backends) await b.close();
  }
});

Deno.test("without a default backend an unmatched request gets the built-in 404", async () => {
  await using web = await startBackend({ name: "web" });
  const objects = {
    ingresses: [
      ingress({ name: "one", rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }] }),
    ],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port: web.port }], [{ address: "127.0.0.1" }])],
    }),
  };
  await withProxy(objects, {}, async ({ http }) => {
    assert.equal((await curl(["-H", "Host: a.example.com", `http://127.0.0.1:${http}/x`])).backend, "web");
    const miss = await curl(["-H", "Host: b.example.com", `http://127.0.0.1:${http}/x`]);
    assert.equal(miss.status, 404);
    assert.match(miss.body, /no route/);
  });
});
