/**
 * The validating webhook under attack, on the real secure port (TLS, authentication,
 * authorization, audit hook) with the real review workers and haproxy:
 * - anonymous and unauthorized callers are refused even with the webhook path on
 *   `--authorization-always-allow-paths` (what the README used to advise);
 * - a body above 3 MiB gets 413 while it is still being sent (never buffered whole), announced
 *   by Content-Length or chunked;
 * - a full review queue answers 429 at once while the queued reviews are still undecided;
 * - `/healthz` answers while maximum-size reviews are being decided: it is asked the moment the
 *   first review's body has been read, and must answer before any review does.
 * The token and access reviews are plain functions (the real kube-apiserver is in
 * tests/admission/cluster_test.ts). Fail-safes turn a hang of the old behaviour into a failure.
 */
import assert from "node:assert/strict";
import https from "node:https";
import { join } from "node:path";
import { type AdmissionRoute, admissionRoute, MAX_BODY_BYTES, WEBHOOK_PATH } from "../../lib/admission/handler.ts";
import type { AuditHandle, Auditor } from "../../lib/audit/types.ts";
import type { AccessReviewer } from "../../lib/auth/authorizer.ts";
import type { TokenReviewer } from "../../lib/auth/token.ts";
import { startServing } from "../../lib/serving/server.ts";
import { defaultSettings } from "../../lib/serving/settings.ts";
import { ingress } from "../render/fixtures.ts";
import { tempDir } from "../serving/helpers.ts";
import { type Answer, openPost, postReview } from "../admission/helpers.ts";

const CALLER = "kube-apiserver-webhook-caller";
const tokens: Record<string, string> = { "caller-token": CALLER, "mallory-token": "mallory" };
const tokenReviewer: TokenReviewer = (t) =>
  Promise.resolve(
    tokens[t] ? { authenticated: true, user: { name: tokens[t], groups: [], extra: {} } } : { authenticated: false },
  );
/** As the README's ClusterRole: only the caller may create ingressvalidators; /healthz for all. */
const accessReviewer: AccessReviewer = (a) =>
  Promise.resolve(
    a.path === "/healthz" ||
      (a.user.name === CALLER && a.verb === "create" && a.resource?.resource === "ingressvalidators")
      ? { allowed: true, reason: "test policy" }
      : { allowed: false, reason: "test policy" },
  );

function post(port: number, body: string, token?: string): Promise<Answer> {
  return postReview(port, body, { token });
}

function get(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    https.get({ host: "127.0.0.1", port, path, rejectUnauthorized: false, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on("error", reject);
  });
}

let uids = 0;
function review(object: unknown, operation = "CREATE"): string {
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `adv-${++uids}`,
      kind: { group: "networking.k8s.io", version: "v1", kind: "Ingress" },
      operation,
      namespace: "default",
      name: "w",
      object,
      ...(operation === "UPDATE" ? { oldObject: object } : {}),
    },
  });
}

const small = () =>
  review(ingress({ name: "w", rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }] }));

/** An UPDATE review just under the body limit: thousands of hosts, the costliest shape to decide. */
function maxSizeReview(): string {
  const hosts = (n: number) =>
    ingress({
      name: "big",
      rules: Array.from({ length: n }, (_, i) => String(i).padStart(6, "0")).map((i) => ({
        host: `h${i}.big.example.com`,
        paths: [{ path: `/p${i}`, service: `s${i}`, port: 80 }],
      })),
    });
  const perHost = review(hosts(2), "UPDATE").length - review(hosts(1), "UPDATE").length;
  const n = Math.floor((MAX_BODY_BYTES - review(hosts(0), "UPDATE").length - 4096) / perHost);
  return review(hosts(n), "UPDATE");
}

/** A secure port with the webhook mounted, configured as the README used to advise (always-allow). */
async function serve(
  dir: string,
  route: AdmissionRoute,
  auditor?: Auditor,
): Promise<{ port: number; [Symbol.asyncDispose](): Promise<void> }> {
  const h = await startServing({
    ...defaultSettings,
    bindAddress: "127.0.0.1",
    certDir: join(dir, "certs"),
    authenticationSkipLookup: true,
    authorizationAlwaysAllowPaths: ["/healthz", WEBHOOK_PATH],
  }, { tokenReviewer, accessReviewer, ephemeralPorts: true, bodyRoutes: [route], ...(auditor ? { auditor } : {}) });
  return {
    port: h.secure!.port,
    async [Symbol.asyncDispose]() {
      await h.stop();
      route.close();
    },
  };
}

const noXray = { ingressClass: null, restrictToNamespace: null, xray: null };

/** Rejects after `ms` unless cleared: turns a hang into a failure (not a speed assertion). */
function failSafe<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`fail-safe: ${what}`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("anonymous and unauthorized callers are refused even when the path is always-allowed", async () => {
  using tmp = tempDir("adv-webhook-");
  await using s = await serve(tmp.dir, await admissionRoute({ review: noXray, timeoutSeconds: 10 }));

  const anonymous = await post(s.port, small());
  assert.equal(anonymous.status, 401, anonymous.body);
  assert.match(JSON.parse(anonymous.body).message, /needs an authenticated caller/);

  const mallory = await post(s.port, small(), "mallory-token");
  assert.equal(mallory.status, 403, mallory.body);
  assert.match(JSON.parse(mallory.body).message, /User "mallory" cannot create resource "ingressvalidators"/);

  const caller = await post(s.port, small(), "caller-token");
  assert.equal(caller.status, 200, caller.body);
  assert.equal(JSON.parse(caller.body).response.allowed, true);
});

Deno.test("a body above 3 MiB gets 413 while it is still being sent", async (t) => {
  using tmp = tempDir("adv-webhook-");
  await using s = await serve(tmp.dir, await admissionRoute({ review: noXray, timeoutSeconds: 10 }));
  const chunk = "x".repeat(64 * 1024);

  await t.step("announced by Content-Length: refused before any of it is read", async () => {
    const r = openPost(s.port, { token: "caller-token", headers: { "Content-Length": String(16 * 1024 * 1024) } });
    r.req.write(chunk); // and nothing more: the rest never comes
    const a = await failSafe("no answer to a 16 MiB Content-Length", 30_000, r.answer).finally(() => r.req.destroy());
    assert.equal(a.status, 413);
    assert.match(JSON.parse(a.body).message, new RegExp(`larger than ${MAX_BODY_BYTES} bytes`));
  });

  await t.step("chunked: refused as soon as it passes the limit, the request still open", async () => {
    const r = openPost(s.port, { token: "caller-token" });
    let sent = 0;
    while (sent <= MAX_BODY_BYTES) {
      r.req.write(chunk);
      sent += chunk.length;
    }
    const a = await failSafe("no answer to a chunked body past the limit", 30_000, r.answer).finally(() =>
      r.req.destroy()
    );
    assert.equal(a.status, 413);
  });
});

Deno.test("a full review queue answers 429 at once while the queued reviews are undecided", async () => {
  using tmp = tempDir("adv-webhook-");
  // haproxy behind a gate: the xray of every review waits until the test opens it.
  const gate = join(tmp.dir, "open");
  const wrapper = join(tmp.dir, "gated-haproxy");
  await Deno.writeTextFile(
    wrapper,
    `#!/bin/sh\ntouch "${tmp.dir}/started.$$"\nwhile [ ! -e "${gate}" ]; do sleep 0.02; done\nexec haproxy "$@"\n`,
    { mode: 0o755 },
  );
  const started = () => [...Deno.readDirSync(tmp.dir)].filter((e) => e.name.startsWith("started.")).length;
  const isOpen = () => {
    try {
      return Deno.statSync(gate).isFile;
    } catch {
      return false;
    }
  };
  const route = await admissionRoute({
    review: { ...noXray, xray: { customTemplates: null, haproxy: wrapper, timeoutMs: Infinity } },
    timeoutSeconds: 10,
    limits: { smallCapacity: 2 },
  });
  await using s = await serve(tmp.dir, route);
  const opened = setTimeout(() => Deno.writeTextFileSync(gate, ""), 30_000); // fail-safe
  try {
    const queued = [post(s.port, small(), "caller-token"), post(s.port, small(), "caller-token")];
    while (started() < 2) await new Promise((r) => setTimeout(r, 20));

    const extra = await post(s.port, small(), "caller-token");
    assert.equal(started(), 2, "answered without starting a third check");
    assert.equal(isOpen(), false, "still undecided");
    assert.equal(extra.status, 429, extra.body);
    assert.equal(extra.headers["retry-after"], "1");
    assert.match(JSON.parse(extra.body).message, /^ingress-controller webhook busy: 2 reviews .* queued; retry$/);

    Deno.writeTextFileSync(gate, "");
    for (const a of await Promise.all(queued)) {
      assert.equal(a.status, 200, a.body);
      assert.equal(JSON.parse(a.body).response.allowed, true);
    }
  } finally {
    clearTimeout(opened);
    Deno.writeTextFileSync(gate, "");
  }
});

Deno.test("/healthz answers while maximum-size reviews are being decided", async () => {
  using tmp = tempDir("adv-webhook-");
  const REVIEWS = 3;
  const order: string[] = [];
  let probe: Promise<void> | null = null;
  let bodiesRead = 0;
  let port = 0;
  // Request-level audit sees each body once it has been read, just before its review starts:
  // once the last body is in, every review is queued or being decided, and /healthz is asked.
  const auditor: Auditor = {
    enabled: true,
    begin: (): AuditHandle => ({
      auditID: crypto.randomUUID(),
      level: "Request",
      annotate: () => {},
      requestBody: () => {
        if (++bodiesRead === REVIEWS) probe = get(port, "/healthz").then((a) => void order.push(`healthz ${a.status}`));
      },
      responseStarted: () => {},
      complete: () => Promise.resolve(),
      panic: () => Promise.resolve(),
    }),
    shutdown: () => Promise.resolve(),
  };
  await using s = await serve(tmp.dir, await admissionRoute({ review: noXray, timeoutSeconds: 10 }), auditor);
  port = s.port;
  const body = maxSizeReview();
  assert.ok(body.length <= MAX_BODY_BYTES && body.length > MAX_BODY_BYTES - 64 * 1024, `${body.length} bytes`);

  const reviews = Array.from({ length: REVIEWS }, () =>
    post(s.port, body, "caller-token").then((a) => {
      order.push(`review ${a.status}`);
      return a;
    }));
  const answers = await Promise.all(reviews);
  await probe;
  // Asked after every review had started, /healthz must come back before the last review does.
  assert.ok(order.indexOf("healthz 200") >= 0, order.join(", "));
  assert.ok(order.indexOf("healthz 200") < REVIEWS, `answered in this order: ${order.join(", ")}`);
  for (const a of answers) {
    assert.equal(a.status, 200, a.body.slice(0, 300));
    assert.equal(JSON.parse(a.body).response.allowed, true);
  }
});
