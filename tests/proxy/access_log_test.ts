/**
 * HAProxy writes the access log to the stdout of the process running it (the proxy container's)
 * itself, and nothing else goes there: a child Deno process runs lib/proxy/haproxy.ts's HAProxy
 * (stdout inherited, as the `proxy` command does) with a rendered configuration, sends requests,
 * a request HTTP cannot parse and a TLS handshake for a name no certificate serves, reloads and
 * stops it; the child's stdout, read here as a container runtime reads it, holds one JSON line for
 * each, and none of HAProxy's notices (a frontend stopped at the reload and at the stop).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { pemFile, realTlsSecret } from "../render/fixtures.ts";
import { ACCESS_LOG_LINE, DEFAULT_PROXY_OPTIONS, type ProxyOptions } from "../../lib/render/proxy_options.ts";

const templates = await loadTemplates(null);

/** Renders one TLS Ingress (`a.example` → `backendPort`) into `dir` as the proxy would lay it out. */
async function layOut(dir: string, backendPort: number, options: ProxyOptions): Promise<string> {
  const ca = await createCA({ commonName: "access-log-ca" });
  const leaf = await issueCertificate(ca, { commonName: "a.example", dnsNames: ["a.example"], usages: ["serverAuth"] });
  const { model } = buildModel({
    ingresses: [{
      metadata: { namespace: "default", name: "a", annotations: { "ingress-controller.io/ssl-redirect": "false" } },
      spec: {
        tls: [{ hosts: ["a.example"], secretName: "tls" }],
        rules: [{
          host: "a.example",
          http: {
            paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
          },
        }],
      },
    }],
    lookup: lookupFromLists({
      services: [{ metadata: { namespace: "default", name: "web" }, spec: { ports: [{ port: 80 }] } }],
      endpointSlices: [{
        addressType: "IPv4",
        metadata: { namespace: "default", name: "web", labels: { "kubernetes.io/service-name": "web" } },
        ports: [{ name: "", port: backendPort }],
        endpoints: [{ addresses: ["127.0.0.1"] }],
      }],
      secrets: [realTlsSecret("tls", leaf)],
    }),
    allowLoopbackEndpoints: true,
  });
  const rendered = render(model, templates, options);
  const certDir = join(dir, "certs");
  await Deno.mkdir(certDir);
  await Deno.writeTextFile(join(dir, "haproxy.cfg"), rendered.config);
  await Deno.writeTextFile(join(certDir, "crt-list"), rendered.crtList);
  for (const [file, text] of Object.entries(rendered.maps)) await Deno.writeTextFile(join(certDir, file), text);
  assert.equal(rendered.secrets.length, 1);
  await Deno.writeTextFile(join(certDir, rendered.secrets[0].file!), pemFile(leaf));
  return ca.certPem;
}

/** The child's script: HAProxy with its stdout inherited, the client's steps, a reload, a stop. */
function childScript(dir: string, haproxy: string, ports: number[], caPem: string): string {
  const [http, https, stats] = ports;
  const haproxyModule = new URL("../../lib/proxy/haproxy.ts", import.meta.url).href;
  const logModule = new URL("../../lib/log/logger.ts", import.meta.url).href;
  return `
    import { HAProxy } from ${JSON.stringify(haproxyModule)};
    import { log } from ${JSON.stringify(logModule)};
    // HAProxy's stderr reaches this process's log at debug
    log.configure({ level: "debug" });
    import tls from "node:tls";
    const h = new HAProxy({ binary: ${JSON.stringify(haproxy)}, workDir: ${JSON.stringify(dir)},
      bindAddress: "127.0.0.1", httpPort: ${http}, httpsPort: ${https}, statsPort: ${stats},
      runtimeSocket: ${JSON.stringify(join(dir, "runtime.sock"))}, certDir: ${JSON.stringify(join(dir, "certs"))} });
    const exchange = async (conn, text) => {
      await conn.write(new TextEncoder().encode(text));
      const buf = new Uint8Array(65536);
      let out = "";
      for (;;) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        out += new TextDecoder().decode(buf.subarray(0, n));
      }
      conn.close();
      return out.split("\\r\\n")[0];
    };
    const plain = (text) => Deno.connect({ hostname: "127.0.0.1", port: ${http} }).then((c) => exchange(c, text));
    const get = (path) => "GET " + path + " HTTP/1.1\\r\\nHost: a.example\\r\\nConnection: close\\r\\n\\r\\n";
    await h.start();
    const steps = [];
    steps.push(await plain(get("/hello?x=1")));
    steps.push(await plain("NOT HTTP AT ALL\\r\\n\\r\\n"));
    // node:tls: Deno.connectTls sends no SNI for an address
    const tlsGet = (servername, path) => new Promise((resolve) => {
      const socket = tls.connect({ host: "127.0.0.1", port: ${https}, servername, ca: [${JSON.stringify(caPem)}] });
      let out = "";
      socket.on("secureConnect", () => socket.write(get(path)));
      socket.on("data", (d) => out += d);
      socket.on("end", () => resolve(out.split("\\r\\n")[0]));
      socket.on("error", () => resolve(out ? out.split("\\r\\n")[0] : "refused"));
    });
    steps.push(await tlsGet("a.example", "/secure"));
    steps.push(await tlsGet("unknown.example", "/never"));
    const reload = await h.reload();
    steps.push(reload.ok ? "reloaded" : "reload failed: " + reload.error);
    steps.push(await plain(get("/after-reload")));
    // the old worker's frontends stop after the reload: give them the time to say so (on stderr only)
    await new Promise((r) => setTimeout(r, 300));
    await h.stop();
    console.error("STEPS " + JSON.stringify(steps));
  `;
}

async function runChild(options: ProxyOptions): Promise<{ steps: string[]; lines: string[]; stderr: string }> {
  const haproxy = await ensureHaproxy();
  const dir = await Deno.makeTempDir({ prefix: "ic-access-log-" });
  await using backend = await startBackend({ name: "web" });
  try {
    const caPem = await layOut(dir, backend.port, options);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", childScript(dir, haproxy, freePorts(3), caPem)],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const steps = JSON.parse(/^STEPS (.*)$/m.exec(stderr)?.[1] ?? "null");
    const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
    return { steps, lines, stderr };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("access log: HAProxy writes one JSON line per request to its stdout itself, and nothing else", async () => {
  const { steps, lines, stderr } = await runChild(DEFAULT_PROXY_OPTIONS);
  assert.deepEqual(steps, [
    "HTTP/1.1 200 OK",
    "HTTP/1.1 400 Bad request",
    "HTTP/1.1 200 OK",
    "refused",
    "reloaded",
    "HTTP/1.1 200 OK",
  ]);
  for (const line of lines) assert.match(line, ACCESS_LOG_LINE);
  const entries = lines.map((l) => JSON.parse(l));
  // the order of HAProxy's writes: the 400 is written by the parser at once, the others at their ends
  const byPath = (path: string) => entries.filter((e) => e.path === path);
  assert.equal(entries.length, 5, lines.join("\n"));
  const [hello] = byPath("/hello");
  assert.equal(hello.host, "a.example");
  assert.equal(hello.status, 200);
  assert.equal(hello.frontend, "http");
  assert.equal(hello.tls, "-");
  assert.equal(hello.error, undefined, "a routed request's line has no error field");
  const [secure] = byPath("/secure");
  assert.equal(secure.frontend, "https");
  assert.match(secure.tls, /^TLSv1\.[23]$/);
  assert.equal(byPath("/after-reload")[0]?.status, 200);
  const bad = entries.find((e) => e.status === 400);
  assert.equal(bad?.frontend, "http");
  assert.equal(bad?.termination, "PR--");
  assert.equal(bad?.error, "-", "an HTTP error's line names no connection error");
  const handshake = entries.find((e) => e.status === 0);
  assert.equal(handshake?.frontend, "https");
  assert.match(handshake?.error ?? "", /SSL handshake failure/);
  // HAProxy's own notices are on stderr (the proxy's log), never on stdout
  assert.doesNotMatch(lines.join("\n"), /Proxy \S+ stopped|Stopping|Exiting/);
  assert.match(stderr, /Proxy http stopped/);
});

Deno.test("access log: the text format, one line each the same way", async () => {
  const { lines } = await runChild({ ...DEFAULT_PROXY_OPTIONS, accessLog: "text" });
  assert.equal(lines.length, 5, lines.join("\n"));
  for (const line of lines) assert.match(line, ACCESS_LOG_LINE);
  assert.ok(lines.some((l) => / http GET "a\.example" "\\\/hello" 200 /.test(l)), lines.join("\n"));
  assert.ok(lines.some((l) => / https .* "SSL handshake failure"$/.test(l)), lines.join("\n"));
});

Deno.test("access log: off writes nothing to stdout", async () => {
  const { steps, lines } = await runChild({ ...DEFAULT_PROXY_OPTIONS, accessLog: "off" });
  assert.equal(steps[0], "HTTP/1.1 200 OK");
  assert.deepEqual(lines, []);
});
