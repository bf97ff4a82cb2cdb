/**
 * The analytics part against a real HTTP receiver on 127.0.0.1 (cluster facts from a plain
 * in-memory reader here; tests/analytics/cluster_test.ts reads them from the real API server).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type AnalyticsHandle, startAnalytics } from "../../lib/analytics/analytics.ts";
import type { AnalyticsEvent } from "../../lib/analytics/event.ts";
import type { ApiReader } from "../../lib/analytics/facts.ts";
import { eventsSent, sendFailures } from "../../lib/analytics/metrics.ts";
import type { AnalyticsSettings } from "../../lib/analytics/settings.ts";
import { type Level, log, textSink } from "../../lib/log/logger.ts";
import { deadEndpoint, startReceiver } from "./receiver.ts";

const secretName = "zz-secret-shop-ingress-7f3a";
const secretHost = "checkout.secret-shop.example";

/** An in-memory API server answer set; counts requests. */
function fakeCluster(answers: Record<string, unknown> = {}): ApiReader & { calls: string[] } {
  const calls: string[] = [];
  const ingress = (name: string, ns: string, cls: string | null, hosts: string[]) => ({
    metadata: { name, namespace: ns, ...(cls ? { annotations: { "kubernetes.io/ingress.class": cls } } : {}) },
    spec: { tls: [{ hosts, secretName: `${name}-tls` }], rules: hosts.map((host) => ({ host })) },
  });
  return {
    calls,
    // deno-lint-ignore require-await
    async request(_method: string, path: string) {
      calls.push(path);
      if (path in answers) return answers[path];
      if (path === "/api/v1/namespaces/kube-system") return { metadata: { name: "kube-system", uid: "uid-1234" } };
      if (path === "/version") return { gitVersion: "v1.34.4", platform: "linux/amd64" };
      if (path === "/apis/networking.k8s.io/v1/ingresses") {
        return {
          items: [
            ingress(secretName, "shop", null, [secretHost, "www.secret-shop.example"]),
            ingress("second", "shop", "other", [secretHost]),
            ingress("third", "blog", null, [secretHost]),
          ],
          metadata: {},
        };
      }
      throw new Error(`unexpected ${path}`);
    },
  } as ApiReader & { calls: string[] };
}

function captureLog(): { lines: { level: Level; msg: string; fields: Record<string, unknown> }[]; restore(): void } {
  const lines: { level: Level; msg: string; fields: Record<string, unknown> }[] = [];
  log.configure({ sink: { write: (level, msg, fields) => lines.push({ level, msg, fields }) }, level: "info" });
  return { lines, restore: () => log.configure({ sink: textSink(), level: "info", verbosity: 0 }) };
}

async function counterValue(c: typeof eventsSent | typeof sendFailures, labels: Record<string, string> = {}) {
  const m = await c.get();
  return m.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k as never] === x))?.value ?? 0;
}

const base = (over: Partial<AnalyticsSettings>): Partial<AnalyticsSettings> => ({
  release: "A",
  version: "9.0.0",
  heartbeatMs: 3_600_000,
  sendTimeoutMs: 2_000,
  stopTimeoutMs: 1_000,
  features: { audit: true, rbac: false, validateProxyConfig: true, customTemplates: false },
  ...over,
});

/** Stops the handle even when an assertion failed. */
async function using<T>(h: AnalyticsHandle, body: (h: AnalyticsHandle) => Promise<T>): Promise<T> {
  try {
    return await body(h);
  } finally {
    await h.stop();
  }
}

Deno.test("started, heartbeats and stopped: documented fields only, no names, hosts or addresses", async () => {
  await using rx = startReceiver();
  const cluster = fakeCluster();
  const sentBefore = await counterValue(eventsSent, { event: "heartbeat" });
  const h = await startAnalytics(base({ endpoint: rx.url, heartbeatMs: 40 }), { client: cluster });
  assert.equal(h.active, true);
  await using(h, async () => {
    await h.started;
    await rx.waitFor(3); // started + 2 heartbeats
  });
  const events = rx.received.map((r) => r.json as AnalyticsEvent);
  assert.equal(events[0].event, "controller_started");
  assert.equal(events[1].event, "heartbeat");
  assert.equal(events.at(-1)!.event, "controller_stopped");
  assert.equal(events.filter((e) => e.event === "controller_stopped").length, 1);
  for (const r of rx.received) {
    assert.equal(r.method, "POST");
    assert.equal(r.path, "/v1/events");
    assert.equal(r.contentType, "application/json");
    for (const leak of [secretName, "secret-shop", "shop", "blog", "second", "third", "uid-1234", "127.0.0.1"]) {
      assert.ok(!r.body.includes(leak), `body leaks ${leak}: ${r.body}`);
    }
  }
  const e = events[1];
  assert.deepEqual(Object.keys(e).sort(), [
    "counts",
    "event",
    "features",
    "installationId",
    "kubernetesVersion",
    "release",
    "schema",
    "time",
    "version",
  ]);
  assert.equal(e.schema, 1);
  assert.equal(e.release, "A");
  assert.equal(e.version, "9.0.0");
  assert.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const salted = createHash("sha256").update("ingress-controller/analytics/installation-id/v1\nuid-1234").digest("hex");
  assert.equal(e.installationId, salted);
  assert.notEqual(e.installationId, createHash("sha256").update("uid-1234").digest("hex"));
  assert.equal(e.kubernetesVersion, "v1.34.4");
  // No --ingress-class: all three are handled; two distinct TLS host names.
  assert.deepEqual(e.counts, { ingresses: 3, proxies: 3, tlsHosts: 2 });
  assert.deepEqual(e.features, { audit: true, rbac: false, validateProxyConfig: true, customTemplates: false });
  assert.ok((await counterValue(eventsSent, { event: "heartbeat" })) >= sentBefore + 1);
});

Deno.test("counts follow --ingress-class and --restrict-to-operator-namespace", async () => {
  await using rx = startReceiver();
  // The namespaced list answers differently from the all-namespaces one: the restricted scope must use it.
  const scoped = fakeCluster({
    "/apis/networking.k8s.io/v1/namespaces/blog/ingresses": {
      items: [{ metadata: { name: "third", namespace: "blog" } }],
      metadata: {},
    },
  });
  const h = await startAnalytics(
    base({ endpoint: rx.url, restrictToOperatorNamespace: true, operatorNamespace: "blog" }),
    { client: scoped },
  );
  await using(h, () => h.started);
  assert.deepEqual(rx.received[0].json.counts, { ingresses: 1, proxies: 1, tlsHosts: 0 });
  assert.ok(scoped.calls.includes("/apis/networking.k8s.io/v1/namespaces/blog/ingresses"));
  assert.ok(!scoped.calls.includes("/apis/networking.k8s.io/v1/ingressclasses"), "no class asked: no class list");

  // --ingress-class other: only the ingress annotated "other" (no default IngressClass in the cluster).
  const classed = fakeCluster({ "/apis/networking.k8s.io/v1/ingressclasses": { items: [], metadata: {} } });
  const h2 = await startAnalytics(base({ endpoint: rx.url, ingressClass: "other" }), { client: classed });
  await using(h2, () => h2.started);
  assert.deepEqual(rx.received.at(-2)!.json.counts, { ingresses: 1, proxies: 1, tlsHosts: 1 });
});

Deno.test("disabled: no request, no cluster read, no timer", async () => {
  await using rx = startReceiver();
  const cluster = fakeCluster();
  const cap = captureLog();
  try {
    const h = await startAnalytics(base({ enabled: false, endpoint: rx.url, heartbeatMs: 5 }), { client: cluster });
    assert.equal(h.active, false);
    await h.started;
    // Deliberately not stopped: a timer (or any other pending op) left by a disabled handle makes
    // the op sanitizer fail this test, whatever the timing; a stopped handle would have cleared it.
  } finally {
    cap.restore();
  }
  assert.equal(rx.received.length, 0);
  assert.deepEqual(cluster.calls, []);
});

Deno.test("enabled without INGRESS_CONTROLLER_ANALYTICS_URL: one info line naming the variable and the flag, nothing sent", async () => {
  for (const [release, flag] of [["A", "--enable-analytics=false"], ["C", "--analytics=false"]] as const) {
    const cluster = fakeCluster();
    const cap = captureLog();
    let h: AnalyticsHandle;
    try {
      h = await startAnalytics(base({ release, endpoint: null, heartbeatMs: 5 }), { client: cluster });
      await h.stop();
    } finally {
      cap.restore();
    }
    assert.equal(h.active, false);
    assert.deepEqual(cluster.calls, []);
    assert.equal(cap.lines.length, 1);
    assert.equal(cap.lines[0].level, "info");
    assert.match(cap.lines[0].msg, /analytics is enabled but has no endpoint/);
    assert.ok(cap.lines[0].msg.includes("INGRESS_CONTROLLER_ANALYTICS_URL"), cap.lines[0].msg);
    assert.ok(cap.lines[0].msg.includes(flag), cap.lines[0].msg);
  }
});

Deno.test("an endpoint that is not an http(s) URL: a warning, nothing sent", async () => {
  const cluster = fakeCluster();
  const cap = captureLog();
  try {
    const h = await startAnalytics(base({ endpoint: "ftp://user:pw@example.invalid/x" }), { client: cluster });
    assert.equal(h.active, false);
    await h.stop();
  } finally {
    cap.restore();
  }
  assert.deepEqual(cluster.calls, []);
  assert.equal(cap.lines.length, 1);
  assert.equal(cap.lines[0].level, "warn");
  assert.ok(!JSON.stringify(cap.lines).includes("pw@"), "the URL's credentials are not logged");
});

Deno.test("receiver down: the part keeps running, failures are counted and warned about once", async () => {
  const failuresBefore = await counterValue(sendFailures);
  const outcomes: boolean[] = [];
  const cap = captureLog();
  try {
    const h = await startAnalytics(base({ endpoint: deadEndpoint(), heartbeatMs: 20 }), {
      client: fakeCluster(),
      onEvent: (_e, delivered) => outcomes.push(delivered),
    });
    await using(h, async () => {
      await h.started;
      for (let i = 0; i < 200 && outcomes.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    });
  } finally {
    cap.restore();
  }
  assert.ok(outcomes.length >= 4, `started, heartbeats and stopped were all attempted (${outcomes.length})`);
  assert.ok(outcomes.every((d) => d === false));
  assert.ok((await counterValue(sendFailures)) >= failuresBefore + outcomes.length);
  const warns = cap.lines.filter((l) => l.level === "warn");
  assert.equal(warns.length, 1, "failures are logged at most once per hour");
  assert.match(warns[0].msg, /analytics: event not delivered/);
  assert.ok(!JSON.stringify(warns).includes("/events"), "only the endpoint's origin is logged");
});

Deno.test("receiver slow or failing: each POST is bounded and counted as a failure; stop is bounded", async () => {
  await using rx = startReceiver("slow");
  const failuresBefore = await counterValue(sendFailures);
  const outcomes: [string, boolean][] = [];
  const cap = captureLog();
  try {
    const h = await startAnalytics(base({ endpoint: rx.url, sendTimeoutMs: 150, stopTimeoutMs: 150 }), {
      client: fakeCluster(),
      onEvent: (e, delivered) => outcomes.push([e.event, delivered]),
    });
    await using(h, () => h.started);
    rx.mode = "fail";
    const h2 = await startAnalytics(base({ endpoint: rx.url }), {
      client: fakeCluster(),
      onEvent: (e, delivered) => outcomes.push([e.event, delivered]),
    });
    await using(h2, () => h2.started);
  } finally {
    cap.restore();
  }
  assert.deepEqual(outcomes, [
    ["controller_started", false],
    ["controller_stopped", false],
    ["controller_started", false],
    ["controller_stopped", false],
  ]);
  assert.equal(rx.received.length, 4, "no retries");
  assert.equal(await counterValue(sendFailures), failuresBefore + 4);
});
