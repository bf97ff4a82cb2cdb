/**
 * Adversarial tests of the renderer and the audit log, with the real parts:
 * - hostile request paths sent byte for byte (raw HTTP/1.1, plain and TLS) to a real haproxy running
 *   a rendered configuration: each is refused with 400 or reaches exactly the backend its
 *   normalized path routes to, and that backend receives the normalized path;
 * - hostile endpoint addresses in EndpointSlices: none reaches a server line;
 * - hostile headers sent with curl (HTTP/1.1 and HTTP/2) to the real secure port with a real
 *   auditor writing real log files: every event stays on one safe line and the Audit-ID the
 *   client sees is bounded and is the one in the events.
 */
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import type { AccessReviewer } from "../../lib/auth/authorizer.ts";
import type { TokenReviewer } from "../../lib/auth/token.ts";
import { createAuditor, maxAuditIDLength } from "../../lib/audit/auditor.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { validateConfig } from "../../lib/render/validate.ts";
import { startServing } from "../../lib/serving/server.ts";
import { defaultSettings } from "../../lib/serving/settings.ts";
import { allRequestResponse, assertSafeLine, logSettings, settings, withDir, writePolicy } from "../audit/helpers.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { withProxy } from "../render/live.ts";

// ---------------------------------------------------------------------------------------------
// Hostile paths through haproxy

const HOST = "adv.example.com";

/** The route table of the test ingress, applied to a normalized path. */
function routeOf(path: string): string {
  if (path === "/exact") return "exact";
  for (const p of ["/public", "/admin"]) if (path === p || path.startsWith(`${p}/`)) return p.slice(1);
  return "dflt";
}

const HOSTILE_PATHS = [
  "/public/../admin/x",
  "/public/%2e%2e/admin/x",
  "/public/%2E%2E/admin",
  "/public/.%2e/admin",
  "/public/%2e./admin",
  "/public/%2e%2e%2fadmin",
  "/public/..%2fadmin",
  "/public/..%2Fadmin",
  "/public/%2e%2e%5cadmin",
  "/public/..\\admin",
  "/public\\..\\admin",
  "/public/..;/admin",
  "/public/.;/admin",
  "/public/%2e%2e;x=1/admin",
  "/public/%252e%252e/admin",
  "/public/%%32%65%%32%65/admin",
  "/public/%zz/../admin",
  "/public/%2",
  "//admin",
  "///admin//x",
  "/./admin/x",
  "/.//./admin",
  "/../admin",
  "/../../../../admin/x",
  "/admin/../public/x",
  "/admin/./../public",
  "/admin/%2e%2e/public",
  "/public/x/../../admin",
  "/public/./x/%2E/../y",
  "/%70ublic/%2e%2e/%61dmin",
  "/%2fadmin",
  "/public%2f..%2fadmin",
  "/public#/../admin",
  "/public?/../admin",
  "/public/x?q=/../admin#frag",
  "/exact/.",
  "/exact/./",
  "/exact%2f",
  "/.%2e/exact",
  "/public/%00/../admin",
  "/public/%0a/../admin",
  "/public/\u00e9/../admin",
  "/public/" + "../".repeat(200) + "admin",
  "/public/" + "a/".repeat(300) + "../".repeat(300) + "admin",
];

interface RawAnswer {
  status: number;
  backend: string | null;
  target: string | null;
}

/** One HTTP/1.1 request with `target` written byte for byte (no client normalizes it). */
function rawRequest(socket: net.Socket, target: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer for ${JSON.stringify(target)}`)));
    socket.on("data", (c: Uint8Array) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      chunks.reduce((at, c) => (bytes.set(c, at), at + c.length), 0);
      const text = new TextDecoder().decode(bytes);
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      let answer: { name?: string; target?: string } = {};
      try {
        answer = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
      } catch { /* haproxy's own answer */ }
      resolve({ status, backend: answer.name ?? null, target: answer.target ?? null });
    });
    const head = `GET ${target} HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`;
    socket.end(Uint8Array.from(head, (c) => c.charCodeAt(0) & 0xff));
  });
}

/** What a backend may receive: a normalized path (no dot segments, no `//`, canonical escapes). */
function assertNormalized(path: string, what: string): void {
  assert.ok(!/\/\/|\/\.\.?(?:\/|;|$)|\\|%2f|%5c/i.test(path), `${what}: backend received ${JSON.stringify(path)}`);
  // escapes of unreserved characters are decoded, the others upper-case
  assert.ok(!/%(?:2[DE]|3\d|[46][1-9A-F]|5[0-9AF]|7[0-9AE])/i.test(path), `${what}: ${path} has a decodable escape`);
  assert.ok(!/%[0-9A-F]?[a-f]/.test(path), `${what}: ${path} has lower-case hex`);
}

Deno.test("adversarial paths through haproxy: refused with 400 or routed by their normalized path", async () => {
  const names = ["public", "admin", "exact", "dflt"];
  const backends = await Promise.all(names.map((name) => startBackend({ name })));
  const ca = await createCA({ commonName: "adversarial-ca" });
  const leaf = await issueCertificate(ca, { commonName: HOST, dnsNames: [HOST], usages: ["serverAuth"] });
  try {
    const port = (name: string) => backends[names.indexOf(name)].port;
    const objects = {
      ingresses: [ingress({
        name: "adv",
        annotations: { "ingress.kubernetes.io/ssl-redirect": "false" },
        defaultBackend: { service: "dflt", port: 80 },
        tls: [{ hosts: [HOST], secretName: "adv-tls" }],
        rules: [{
          host: HOST,
          paths: [
            { path: "/public", service: "public", port: 80 },
            { path: "/admin", service: "admin", port: 80 },
            { path: "/exact", pathType: "Exact", service: "exact", port: 80 },
          ],
        }],
      })],
      lookup: lookupFromLists({
        services: names.map((n) => service(n, [{ port: 80 }])),
        endpointSlices: names.map((n) => endpointSlice(n, [{ name: "", port: port(n) }], [{ address: "127.0.0.1" }])),
        secrets: [{
          apiVersion: "v1",
          kind: "Secret",
          type: "kubernetes.io/tls",
          metadata: { namespace: "default", name: "adv-tls" },
          data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) },
        }],
      }),
    };
    const pems = { "default_adv-tls.pem": `${leaf.certPem.trimEnd()}\n${leaf.keyPem.trimEnd()}\n` };
    await withProxy(objects, pems, async ({ http, https }) => {
      const via = {
        http: () => net.connect({ host: "127.0.0.1", port: http }),
        https: () => tls.connect({ host: "127.0.0.1", port: https, servername: HOST, ca: ca.certPem }),
      };
      const tally = { routed: 0, refused: 0 };
      for (const target of HOSTILE_PATHS) {
        for (const [scheme, connect] of Object.entries(via)) {
          const what = `${scheme} ${JSON.stringify(target.slice(0, 80))}`;
          const got = await rawRequest(connect(), target);
          if (got.status === 400) {
            tally.refused++;
            continue;
          }
          assert.equal(got.status, 200, what);
          assert.ok(got.target !== null && got.backend !== null, what);
          const path = got.target.split("?")[0];
          assertNormalized(path, what);
          assert.equal(got.backend, routeOf(path), `${what}: answered by ${got.backend}, received ${got.target}`);
          tally.routed++;
        }
      }
      // Known cases (beyond tests/render/routing_test.ts), so that "refuse everything" cannot pass: routed …
      const must: [string, string, string][] = [
        ["/public/%2e./admin", "admin", "/admin"],
        ["/.//./admin", "admin", "/admin"],
        ["/admin/%2e%2e/public", "public", "/public"],
        ["/exact/.", "dflt", "/exact/"], // RFC 3986: "/a/." is "/a/", which Exact "/exact" does not match
        ["/public/" + "../".repeat(200) + "admin", "admin", "/admin"],
      ];
      for (const [target, backend, received] of must) {
        const got = await rawRequest(via.http(), target);
        assert.deepEqual([got.status, got.backend, got.target], [200, backend, received], target);
      }
      // … and these refused: an encoded slash or backslash, a raw backslash, `..;`, a broken escape.
      for (
        const target of ["/public/..%2Fadmin", "/public/%2e%2e%5cadmin", "/public\\..\\admin", "/public/..;/admin"]
      ) {
        assert.equal((await rawRequest(via.https(), target)).status, 400, target);
      }
      assert.equal((await rawRequest(via.http(), "/public/%zz/../admin")).status, 400);
      assert.ok(tally.routed > 0 && tally.refused > 0, JSON.stringify(tally));
    });
  } finally {
    for (const b of backends) await b.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Hostile endpoint addresses

const HOSTILE_V4 = [
  "127.0.0.1",
  "127.255.255.254",
  "0.0.0.0",
  "169.254.169.254",
  "224.0.0.1",
  "127.1",
  "0127.0.0.1",
  "2130706433",
  "0x7f.0.0.1",
  "localhost",
  "127.0.0.1 ",
  " 10.0.0.1",
  "10.0.0.1\n    server evil 127.0.0.1:22",
  "10.0.0.1:80",
  "",
];
const HOSTILE_V6 = [
  "::1",
  "::",
  "0::1",
  "0:0::0:1",
  "0000:0000:0000:0000:0000:0000:0000:0001",
  "::ffff:127.0.0.1",
  "::FFFF:7F00:1",
  "::ffff:0:0",
  "::ffff:169.254.169.254",
  "fe80::1",
  "fe80::1%lo",
  "FE9F:ffff::1",
  "ff02::1",
  "[::1]",
  "::1 ",
  "fd00::1]:80 [::1",
];

Deno.test("adversarial endpoint addresses never reach a server line", async () => {
  const slice = (name: string, addressType: string, addresses: string[]) =>
    endpointSlice("web", [{ name: "", port: 8080 }], addresses.map((address) => ({ address })), { name, addressType });
  const { model, problems } = buildModel({
    ingresses: [ingress({ name: "x", rules: [{ paths: [{ path: "/", service: "web", port: 80 }] }] })],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [
        slice("v4", "IPv4", [...HOSTILE_V4, "10.0.0.1"]),
        slice("v6", "IPv6", [...HOSTILE_V6, "fd00::1", "::127.0.0.1"]),
      ],
    }),
  });
  // `::127.0.0.1` is IPv4-compatible, not IPv4-mapped: no route to the host's loopback (Kubernetes accepts it)
  assert.deepEqual(model.backends[0].servers.map((s) => s.address), ["10.0.0.1", "[::127.0.0.1]", "[fd00::1]"]);
  assert.equal(problems.length, HOSTILE_V4.length + HOSTILE_V6.length, problems.map((p) => p.message).join("\n"));
  for (const p of problems) assert.deepEqual([p.kind, p.reason], ["EndpointSlice", "InvalidEndpoints"], p.message);

  const rendered = render(model, await loadTemplates(null));
  const servers = rendered.config.split("\n").filter((l) => /^\s*server /.test(l));
  for (const line of servers) {
    assert.match(
      line,
      /^ {4}server s\d+ (?:10\.0\.0\.1:8080|\[::127\.0\.0\.1\]:8080|\[fd00::1\]:8080|127\.0\.0\.1:1 disabled)$/,
    );
  }
  const check = await validateConfig(rendered);
  assert.ok(check.ok, check.errors.join("\n"));
});

// ---------------------------------------------------------------------------------------------
// Hostile audit headers through the real secure port

const noTokens: TokenReviewer = () => Promise.resolve({ authenticated: false });
const allowAll: AccessReviewer = () => Promise.resolve({ allowed: true, reason: "adversarial test\u2028allows all" });

/**
 * The runtime's HTTP/1.1 parser refuses a header value with a control character (400, or the
 * connection closed without an answer): such a request never reaches the auditor. HTTP/2 requests
 * are always answered (the runtime drops such a header instead).
 */
const refusedByParser = (proto: string, value: string, status: number) =>
  // deno-lint-ignore no-control-regex
  proto === "--http1.1" && /[\x00-\x08\x0a-\x1f\x7f]/.test(value) && (status === 400 || status === 0);

/** curl against the secure port; returns the status and the Audit-ID response header. */
async function curlSecure(port: number, proto: "--http1.1" | "--http2", headers: string[]) {
  const out = await new Deno.Command("curl", {
    args: [
      "-sk",
      proto,
      "--max-time",
      "10",
      "-o",
      "/dev/null",
      "-D",
      "-",
      ...headers.flatMap((h) => ["-H", h]),
      `https://127.0.0.1:${port}/healthz?q=%E2%80%A8`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const head = new TextDecoder().decode(out.stdout);
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(head)?.[1] ?? 0);
  const auditID = /^audit-id: ([^\r\n]*)\r?$/im.exec(head)?.[1] ?? null;
  return { status, auditID };
}

Deno.test("adversarial audit headers via the secure port: one safe line per event, bounded Audit-IDs", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(dir, allRequestResponse);
    const logs = { json: `${dir}/audit.json.log`, legacy: `${dir}/audit.legacy.log` };
    for (const format of ["json", "legacy"] as const) {
      const auditor = await createAuditor(settings(policyFile, { log: logSettings(logs[format], { format }) }));
      const serving = await startServing(
        { ...defaultSettings, bindAddress: "127.0.0.1", certDir: `${dir}/certs`, authenticationSkipLookup: true },
        { tokenReviewer: noTokens, accessReviewer: allowAll, ephemeralPorts: true, auditor },
      );
      const seen: string[] = [];
      try {
        const port = serving.secure!.port;
        const agents = [
          "ua\u2028line\u2029para\u0085nel",
          "ua\x1b[2J\x1b[31mred",
          "ua\u00e9\u00ff\ufeff\ud83d\ude00",
          "ua\x01ctl",
          "ua\x7fdel",
          "x".repeat(5000),
        ];
        const ids = ["a".repeat(maxAuditIDLength + 1), "a".repeat(10_000), "id\x01ctl", "id\u2028sep", "ok-id-1"];
        for (const proto of ["--http1.1", "--http2"] as const) {
          for (const ua of agents) {
            const r = await curlSecure(port, proto, [`User-Agent: ${ua}`]);
            if (refusedByParser(proto, ua, r.status)) continue;
            assert.equal(r.status, 200, `${proto} ${JSON.stringify(ua.slice(0, 30))}`);
            assert.ok(r.auditID, "the Audit-ID response header is set");
            seen.push(r.auditID);
          }
          for (const id of ids) {
            const r = await curlSecure(port, proto, [`Audit-ID: ${id}`]);
            if (refusedByParser(proto, id, r.status)) continue;
            assert.equal(r.status, 200, `${proto} Audit-ID ${JSON.stringify(id.slice(0, 30))}`);
            assert.ok(r.auditID !== null && r.auditID.length <= maxAuditIDLength, `${proto}: ${r.auditID?.length}`);
            assert.match(r.auditID, /^[!-~](?:[ -~]*[!-~])?$/);
            assert.equal(
              r.auditID === id,
              id === "ok-id-1",
              `${proto}: ${JSON.stringify(id.slice(0, 30))} → ${r.auditID}`,
            );
            seen.push(r.auditID);
          }
        }
      } finally {
        await serving.stop();
        await auditor.shutdown();
      }
      const text = await Deno.readTextFile(logs[format]);
      const lines = text.slice(0, -1).split("\n");
      assert.equal(lines.length, seen.length * 2, `${format}: RequestReceived and ResponseComplete per request`);
      for (const line of lines) {
        assertSafeLine(line, format);
      }
      if (format === "json") {
        const events = lines.map((l) => JSON.parse(l));
        assert.deepEqual(new Set(events.map((e) => e.auditID)), new Set(seen));
        const agentsSeen = new Set(events.map((e) => e.userAgent));
        assert.ok(agentsSeen.has("ua\u2028line\u2029para\u0085nel"), [...agentsSeen].join(" | "));
        assert.ok(agentsSeen.has("ua\u00e9\u00ff\ufeff\ud83d\ude00"));
        assert.ok(events.every((e) => e.annotations === undefined || e.annotations["authorization.k8s.io/reason"]));
      } else {
        for (const id of seen) assert.ok(lines.some((l) => l.includes(` AUDIT: id="${id}" `)), id);
      }
    }
  }));
