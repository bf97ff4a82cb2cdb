import assert from "node:assert/strict";
import { createAuditor } from "../../lib/audit/auditor.ts";
import { batchSize, eventsDropped, eventsWritten, webhookErrors, webhookRetries } from "../../lib/audit/metrics.ts";
import { defaultBatch, noTruncate, type WebhookSettings } from "../../lib/audit/settings.ts";
import { SetupError } from "../../lib/common/errors.ts";
import {
  allRequestResponse,
  metricValue,
  type Receiver,
  request,
  settings,
  startReceiver,
  writePolicy,
} from "./helpers.ts";

function webhook(configFile: string, over: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    configFile,
    mode: "blocking",
    version: "audit.k8s.io/v1",
    initialBackoffMs: 20,
    batch: { ...defaultBatch, maxBatchWaitMs: 0, throttleEnable: false },
    truncate: noTruncate,
    ...over,
  };
}

const metadataPolicy =
  "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n";

async function withReceiver(fn: (dir: string, r: Receiver) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  const r = await startReceiver();
  try {
    await fn(dir, r);
  } finally {
    await r.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("webhook: blocking mode POSTs an EventList over HTTPS with the client certificate and waits for it", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, allRequestResponse);
    const auditor = await createAuditor(settings(policyFile, {
      webhook: webhook(await r.kubeconfig(dir), { version: "audit.k8s.io/v1beta1" }),
    }));
    const h = auditor.begin(request({ auditID: "w-1" }))!;
    h.annotate("authorization.k8s.io/decision", "allow");
    await h.complete(200, { ok: true });
    // Blocking: both stages arrived before complete() resolved.
    assert.equal(r.events().length, 2);
    await auditor.shutdown();
    assert.equal(r.lists.length, 2);
    for (const list of r.lists) {
      assert.equal(list.kind, "EventList");
      assert.equal(list.apiVersion, "audit.k8s.io/v1beta1");
    }
    const [received, complete] = r.events();
    assert.equal(received.stage, "RequestReceived");
    assert.equal(complete.stage, "ResponseComplete");
    assert.equal(complete.auditID, "w-1");
    assert.deepEqual(complete.responseObject, { ok: true });
    assert.match(complete.metadata.creationTimestamp, /Z$/);
    assert.deepEqual(r.clientNames, ["ingress-controller", "ingress-controller"]);
  }));

Deno.test("webhook: a bearer token from the kubeconfig", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor(settings(policyFile, { webhook: webhook(await r.kubeconfig(dir, "s3cret")) }));
    await auditor.begin(request())!.complete(200);
    await auditor.shutdown();
    assert.deepEqual(r.authorizations, ["Bearer s3cret"]);
  }));

Deno.test("webhook: failed requests are retried with backoff until accepted", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor(settings(policyFile, { webhook: webhook(await r.kubeconfig(dir)) }));
    const retries0 = await metricValue(webhookRetries, {});
    const errors0 = await metricValue(webhookErrors, {});
    r.failNext(2, 503);
    await auditor.begin(request({ auditID: "after-503" }))!.complete(200);
    assert.equal(r.attempts, 3);
    r.failNext(1, 0); // connection dropped without an answer
    await auditor.begin(request({ auditID: "after-reset" }))!.complete(200);
    await auditor.shutdown();
    assert.deepEqual(r.events().map((e) => e.auditID), ["after-503", "after-reset"]);
    // The runtime's HTTP client may itself resend on a connection closed under it, so at least the 503s count.
    assert.ok(r.attempts >= 4);
    assert.ok(await metricValue(webhookRetries, {}) - retries0 >= 2);
    assert.ok(await metricValue(webhookErrors, {}) - errors0 >= 2);
  }));

Deno.test("webhook: a client error is not retried; the batch is dropped and counted", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor(settings(policyFile, { webhook: webhook(await r.kubeconfig(dir)) }));
    const dropped0 = await metricValue(eventsDropped, { backend: "webhook", reason: "webhook_error" });
    r.failNext(1, 400);
    await auditor.begin(request())!.complete(200);
    await auditor.shutdown();
    assert.equal(r.attempts, 1);
    assert.equal(await metricValue(eventsDropped, { backend: "webhook", reason: "webhook_error" }) - dropped0, 1);
  }));

Deno.test("webhook: in batch mode a hanging webhook never blocks a request; shutdown flushes in batches", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor(settings(policyFile, {
      webhook: webhook(await r.kubeconfig(dir), {
        mode: "batch",
        batch: {
          bufferSize: 1000,
          maxBatchSize: 7,
          maxBatchWaitMs: 50,
          throttleEnable: true,
          throttleQPS: 100,
          throttleBurst: 2,
        },
      }),
    }));
    const sizes0 = await metricValue(batchSize, { backend: "webhook" }, "_count");
    const written0 = await metricValue(eventsWritten, { backend: "webhook" });
    const release = r.hold();
    for (let i = 0; i < 30; i++) await auditor.begin(request({ auditID: `b-${i}` }))!.complete(200);
    // Every request completed while the webhook hung.
    assert.equal(r.events().length, 0);
    release();
    await auditor.shutdown();
    const ids = r.events().map((e) => e.auditID);
    assert.deepEqual(ids, Array.from({ length: 30 }, (_, i) => `b-${i}`));
    for (const list of r.lists) assert.ok(list.items.length <= 7, `batch of ${list.items.length}`);
    assert.equal(await metricValue(batchSize, { backend: "webhook" }, "_count") - sizes0, r.lists.length);
    assert.equal(await metricValue(eventsWritten, { backend: "webhook" }) - written0, 30);
  }));

Deno.test("webhook: a webhook that is down drops batches after the retries, requests are unaffected", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor(settings(policyFile, {
      webhook: webhook(await r.kubeconfig(dir), {
        mode: "batch",
        maxAttempts: 3,
        initialBackoffMs: 10,
        batch: { ...defaultBatch, maxBatchSize: 100, maxBatchWaitMs: 0, throttleEnable: false },
      }),
    }));
    const dropped0 = await metricValue(eventsDropped, { backend: "webhook", reason: "webhook_error" });
    r.failNext(1_000_000, 500);
    for (let i = 0; i < 5; i++) await auditor.begin(request())!.complete(200);
    await auditor.shutdown();
    assert.equal(r.events().length, 0);
    assert.ok(r.attempts >= 3);
    assert.equal(await metricValue(eventsDropped, { backend: "webhook", reason: "webhook_error" }) - dropped0, 5);
  }));

Deno.test("webhook: shutdown gives up at its deadline and counts what is left", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor({
      ...settings(policyFile, {
        webhook: webhook(await r.kubeconfig(dir), {
          mode: "batch",
          batch: { ...defaultBatch, maxBatchSize: 2, maxBatchWaitMs: 0, throttleEnable: false },
        }),
      }),
      shutdownTimeoutMs: 200,
    });
    const dropped0 = await metricValue(eventsDropped, { backend: "webhook", reason: "shutdown" });
    const release = r.hold();
    for (let i = 0; i < 6; i++) await auditor.begin(request())!.complete(200);
    await auditor.shutdown();
    release();
    assert.equal(await metricValue(eventsDropped, { backend: "webhook", reason: "shutdown" }) - dropped0, 6);
  }));

Deno.test("webhook: truncation splits a batch over the maximum batch size", () =>
  withReceiver(async (dir, r) => {
    const policyFile = await writePolicy(dir, metadataPolicy);
    const auditor = await createAuditor(settings(policyFile, {
      webhook: webhook(await r.kubeconfig(dir), {
        mode: "batch",
        batch: { ...defaultBatch, maxBatchSize: 100, maxBatchWaitMs: 600_000, throttleEnable: false },
        truncate: { enabled: true, maxEventSize: 900, maxBatchSize: 1000 },
      }),
    }));
    for (let i = 0; i < 10; i++) await auditor.begin(request({ auditID: `t-${i}` }))!.complete(200);
    await auditor.shutdown(); // one batch of 10 events of about 440 bytes: split into POSTs of 2
    assert.equal(r.events().length, 10);
    assert.ok(r.lists.length >= 5, `${r.lists.length} requests`);
    for (const list of r.lists) {
      const items = list.items.map((e: unknown) => JSON.stringify(e)).join("");
      assert.ok(new TextEncoder().encode(items).length <= 1000);
    }
  }));

Deno.test("webhook: an unusable kubeconfig is a SetupError", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const policyFile = await writePolicy(dir, metadataPolicy);
    await Deno.writeTextFile(
      `${dir}/plain.kubeconfig`,
      `apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: a, user: u}}]
current-context: c
`,
    );
    for (const file of [`${dir}/missing.kubeconfig`, `${dir}/plain.kubeconfig`]) {
      await assert.rejects(
        createAuditor(settings(policyFile, { webhook: webhook(file) })),
        (err: Error) => err instanceof SetupError && err.message.startsWith(`--audit-webhook-config-file ${file}: `),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
