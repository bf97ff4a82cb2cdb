import assert from "node:assert/strict";
import { createAuditor, PolicyAuditor } from "../../lib/audit/auditor.ts";
import { BufferedSink } from "../../lib/audit/delivery.ts";
import { eventsDropped, eventsTruncated, eventsWritten } from "../../lib/audit/metrics.ts";
import {
  alice,
  allRequestResponse,
  batchOf,
  logSettings,
  metricValue,
  readEvents,
  request,
  settings,
  withDir,
  writePolicy,
} from "./helpers.ts";

const levelsPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  nonResourceURLs: ["/meta"]
- level: Request
  nonResourceURLs: ["/req"]
- level: RequestResponse
  nonResourceURLs: ["/rr", "/watch"]
- level: RequestResponse
  resources: [{group: "networking.k8s.io", resources: ["ingresses"]}]
- level: Metadata
  nonResourceURLs: ["/quiet"]
  omitStages: ["RequestReceived"]
`;

Deno.test("auditor: the content of events at each level, in a real log file", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(dir, levelsPolicy);
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, { log: logSettings(path) }));
    assert.equal(auditor.enabled, true);
    assert.equal(auditor.begin(request({ requestURI: "/nothing" })), null, "no matching rule means None");

    const body = { kind: "Thing", spec: { a: 1 } };
    const answer = { kind: "Answer", ok: true };
    const ids: Record<string, string> = {};
    for (const uri of ["/meta", "/req", "/rr"]) {
      const h = auditor.begin(request({
        requestURI: `${uri}?x=1`,
        method: "POST",
        verb: "post",
        headers: new Headers({ "user-agent": "curl/8", "x-forwarded-for": "10.0.0.9", "x-real-ip": "10.0.0.8" }),
        remoteAddress: "::ffff:127.0.0.1",
        impersonatedUser: { name: "bob", groups: ["ops"], extra: {} },
      }))!;
      assert.ok(h, uri);
      assert.match(h.auditID, /^[0-9a-f-]{36}$/);
      ids[uri] = h.auditID;
      h.annotate("authorization.k8s.io/decision", "allow");
      h.annotate("authorization.k8s.io/reason", 'RBAC: allowed by ClusterRoleBinding "x"');
      h.annotate("authorization.k8s.io/decision", "forbid"); // the first value stays
      h.requestBody(JSON.stringify(body));
      await h.complete(201, answer);
    }
    await auditor.shutdown();

    const events = await readEvents(path);
    assert.equal(events.length, 6);
    for (const [uri, level] of [["/meta", "Metadata"], ["/req", "Request"], ["/rr", "RequestResponse"]]) {
      const mine = events.filter((e) => e.auditID === ids[uri]);
      assert.deepEqual(mine.map((e) => e.stage), ["RequestReceived", "ResponseComplete"], uri);
      const [received, complete] = mine;
      for (const e of mine) {
        assert.equal(e.kind, "Event");
        assert.equal(e.apiVersion, "audit.k8s.io/v1");
        assert.equal(e.level, level);
        assert.equal(e.requestURI, `${uri}?x=1`);
        assert.equal(e.verb, "post");
        assert.deepEqual(e.user, { username: "alice", uid: "u-1", groups: ["devs", "system:authenticated"] });
        assert.deepEqual(e.impersonatedUser, { username: "bob", groups: ["ops"] });
        assert.deepEqual(e.sourceIPs, ["10.0.0.9", "10.0.0.8", "127.0.0.1"]);
        assert.equal(e.userAgent, "curl/8");
        assert.equal(e.objectRef, undefined);
        assert.match(e.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
        assert.match(e.stageTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      }
      assert.equal(received.stageTimestamp, received.requestReceivedTimestamp);
      assert.ok(complete.stageTimestamp >= complete.requestReceivedTimestamp);
      assert.equal(received.annotations, undefined, "authorization comes after RequestReceived");
      assert.equal(received.responseStatus, undefined);
      assert.equal(received.requestObject, undefined);
      assert.deepEqual(complete.annotations, {
        "authorization.k8s.io/decision": "allow",
        "authorization.k8s.io/reason": 'RBAC: allowed by ClusterRoleBinding "x"',
      });
      assert.deepEqual(complete.responseStatus, { metadata: {}, code: 201 });
      assert.deepEqual(complete.requestObject, level === "Metadata" ? undefined : body, uri);
      assert.deepEqual(complete.responseObject, level === "RequestResponse" ? answer : undefined, uri);
    }
  }));

Deno.test("auditor: Audit-ID from the request, objectRef, ResponseStarted for long-running, Panic, omitStages, errors", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(dir, levelsPolicy);
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, { log: logSettings(path) }));

    const watch = auditor.begin(request({
      requestURI: "/watch",
      headers: new Headers({ "Audit-ID": "given-id-1" }),
      longRunning: true,
    }))!;
    assert.equal(watch.auditID, "given-id-1");
    watch.responseStarted();
    await watch.complete(200);

    const ing = auditor.begin(request({
      auditID: "given-id-2",
      requestURI: "/apis/networking.k8s.io/v1/namespaces/prod/ingresses/web",
      verb: "delete",
      objectRef: {
        apiGroup: "networking.k8s.io",
        apiVersion: "v1",
        resource: "ingresses",
        namespace: "prod",
        name: "web",
      },
    }))!;
    await ing.complete(403, {
      kind: "Status",
      status: "Failure",
      message: 'ingresses "web" is forbidden',
      reason: "Forbidden",
      code: 403,
    });

    const boom = auditor.begin(request({ auditID: "given-id-3", requestURI: "/rr" }))!;
    await boom.panic(new Error("nil map"));
    await boom.complete(500); // ignored after the panic

    const quiet = auditor.begin(request({ auditID: "given-id-4", requestURI: "/quiet" }))!;
    await quiet.complete(200);
    await auditor.shutdown();

    const events = await readEvents(path);
    const stages = (id: string) => events.filter((e) => e.auditID === id).map((e) => e.stage);
    assert.deepEqual(stages("given-id-1"), ["RequestReceived", "ResponseStarted", "ResponseComplete"]);
    assert.deepEqual(events.find((e) => e.stage === "ResponseStarted")!.responseStatus, { metadata: {}, code: 200 });
    assert.deepEqual(stages("given-id-2"), ["RequestReceived", "ResponseComplete"]);
    const denied = events.find((e) => e.auditID === "given-id-2" && e.stage === "ResponseComplete")!;
    assert.deepEqual(denied.objectRef, {
      resource: "ingresses",
      namespace: "prod",
      name: "web",
      apiGroup: "networking.k8s.io",
      apiVersion: "v1",
    });
    assert.deepEqual(denied.responseStatus, {
      metadata: {},
      status: "Failure",
      message: 'ingresses "web" is forbidden',
      reason: "Forbidden",
      code: 403,
    });
    assert.deepEqual(stages("given-id-3"), ["RequestReceived", "Panic"]);
    const panic = events.find((e) => e.stage === "Panic")!;
    assert.equal(panic.responseStatus.code, 500);
    assert.equal(panic.responseStatus.reason, "InternalError");
    assert.match(panic.responseStatus.message, /nil map/);
    assert.deepEqual(stages("given-id-4"), ["ResponseComplete"]);
  }));

Deno.test("auditor: legacy format and audit.k8s.io/v1beta1", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(dir, allRequestResponse);
    const legacy = `${dir}/legacy.log`;
    const beta = `${dir}/beta.log`;
    for (
      const log of [
        logSettings(legacy, { format: "legacy" }),
        logSettings(beta, { version: "audit.k8s.io/v1beta1", mode: "batch" }),
      ]
    ) {
      const auditor = await createAuditor(settings(policyFile, { log }));
      const h = auditor.begin(request({ auditID: "id-1" }))!;
      await h.complete(200);
      await auditor.shutdown();
    }
    const lines = (await Deno.readTextFile(legacy)).split("\n").filter(Boolean);
    assert.equal(lines.length, 2);
    const re =
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z AUDIT: id="id-1" stage="(RequestReceived|ResponseComplete)" ip="127\.0\.0\.1" method="get" user="alice" groups="\\"devs\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl\/v1\.30" namespace="<none>" uri="\/healthz\?verbose=1" response="(<deferred>|200)"$/;
    for (const l of lines) assert.match(l, re);
    assert.match(lines[0], /stage="RequestReceived".*response="<deferred>"$/);
    assert.match(lines[1], /stage="ResponseComplete".*response="200"$/);

    const events = await readEvents(beta);
    assert.equal(events.length, 2);
    for (const e of events) {
      assert.equal(e.apiVersion, "audit.k8s.io/v1beta1");
      assert.match(e.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.match(e.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(e.timestamp, e.requestReceivedTimestamp.slice(0, 19) + "Z");
    }
  }));

Deno.test("auditor: blocking waits for the write; batch returns at once and shutdown flushes the batch", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(dir, allRequestResponse);
    const blockingPath = `${dir}/blocking.log`;
    const blocking = await createAuditor(settings(policyFile, { log: logSettings(blockingPath) }));
    const h1 = blocking.begin(request({ auditID: "b-1" }))!;
    await h1.complete(200);
    assert.deepEqual((await readEvents(blockingPath)).map((e) => e.stage), ["RequestReceived", "ResponseComplete"]);
    await blocking.shutdown();

    const batchPath = `${dir}/batch.log`;
    const batch = await createAuditor(settings(policyFile, {
      log: logSettings(batchPath, {
        mode: "batch",
        batch: batchOf({ bufferSize: 100, maxBatchSize: 50, maxBatchWaitMs: 600_000 }),
      }),
    }));
    for (let i = 0; i < 3; i++) await batch.begin(request({ auditID: `q-${i}` }))!.complete(200);
    // The batch waits for 50 events or ten minutes: nothing written yet.
    assert.equal((await Deno.readTextFile(batchPath)).length, 0);
    await batch.shutdown();
    const events = await readEvents(batchPath);
    assert.equal(events.length, 6);
    assert.deepEqual(events.filter((e) => e.stage === "ResponseComplete").map((e) => e.auditID), ["q-0", "q-1", "q-2"]);
  }));

Deno.test("auditor: a full buffer drops events, counts them and never blocks", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(
      dir,
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    );
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, {
      log: logSettings(path, {
        mode: "batch",
        // The worker waits for 100 events that never fit in a buffer of 10: the buffer stays full.
        batch: batchOf({ bufferSize: 10, maxBatchSize: 100, maxBatchWaitMs: 600_000 }),
      }),
    }));
    const dropped0 = await metricValue(eventsDropped, { backend: "log", reason: "buffer_full" });
    const written0 = await metricValue(eventsWritten, { backend: "log" });
    for (let i = 0; i < 25; i++) await auditor.begin(request({ auditID: `e-${i}` }))!.complete(200);
    assert.equal(await metricValue(eventsDropped, { backend: "log", reason: "buffer_full" }) - dropped0, 15);
    await auditor.shutdown();
    assert.equal(await metricValue(eventsWritten, { backend: "log" }) - written0, 10);
    const events = await readEvents(path);
    assert.deepEqual(events.map((e) => e.auditID), Array.from({ length: 10 }, (_, i) => `e-${i}`));
  }));

Deno.test("auditor: batch mode loses no event while the buffer is not full (100,000 requests)", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(
      dir,
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    );
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, {
      log: logSettings(path, {
        mode: "batch",
        batch: batchOf({ bufferSize: 10000, maxBatchSize: 400, maxBatchWaitMs: 5 }),
      }),
    })) as PolicyAuditor;
    const sink = auditor.sinks[0] as BufferedSink;
    const dropped0 = await metricValue(eventsDropped, { backend: "log" });
    const written0 = await metricValue(eventsWritten, { backend: "log" });
    const total = 100_000;
    let i = 0;
    let rounds = 0;
    while (i < total) {
      // Feed while there is room, then let the writer catch up (bounded: each round must make progress).
      const room = 10000 - sink.queued;
      for (let n = 0; n < room && i < total; n++, i++) {
        await auditor.begin(request({ auditID: `n-${i}`, user: alice }))!.complete(200);
      }
      await new Promise((r) => setTimeout(r, 1));
      assert.ok(++rounds < 100_000, "the writer makes progress");
    }
    await auditor.shutdown();
    assert.equal(await metricValue(eventsDropped, { backend: "log" }) - dropped0, 0);
    assert.equal(await metricValue(eventsWritten, { backend: "log" }) - written0, total);
    const text = await Deno.readTextFile(path);
    const ids = new Set<string>();
    let lines = 0;
    for (const l of text.split("\n")) {
      if (!l) continue;
      lines++;
      ids.add(JSON.parse(l).auditID);
    }
    assert.equal(lines, total);
    assert.equal(ids.size, total);
  }));

Deno.test("auditor: truncation removes objects over the event size, marks them, and drops what is still too large", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(dir, allRequestResponse);
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, {
      log: logSettings(path, { truncate: { enabled: true, maxEventSize: 2000, maxBatchSize: 10_000 } }),
    }));
    const truncated0 = await metricValue(eventsTruncated, { backend: "log" });
    const tooLarge0 = await metricValue(eventsDropped, { backend: "log", reason: "too_large" });

    const small = auditor.begin(request({ auditID: "small" }))!;
    small.requestBody({ a: 1 });
    await small.complete(200, { b: 2 });

    const big = auditor.begin(request({ auditID: "big" }))!;
    big.requestBody({ data: "x".repeat(5000) });
    await big.complete(200, { data: "y".repeat(5000) });

    const huge = auditor.begin(request({ auditID: "huge", requestURI: "/" + "z".repeat(3000) }))!;
    await huge.complete(200);
    await auditor.shutdown();

    const events = await readEvents(path);
    assert.deepEqual(events.map((e) => `${e.auditID}/${e.stage}`), [
      "small/RequestReceived",
      "small/ResponseComplete",
      "big/RequestReceived",
      "big/ResponseComplete",
    ]);
    const s = events[1];
    assert.deepEqual(s.requestObject, { a: 1 });
    assert.equal(s.annotations, undefined);
    const b = events[3];
    assert.equal(b.requestObject, undefined);
    assert.equal(b.responseObject, undefined);
    assert.deepEqual(b.annotations, { "audit.k8s.io/truncated": "true" });
    assert.equal(await metricValue(eventsTruncated, { backend: "log" }) - truncated0, 1);
    assert.equal(await metricValue(eventsDropped, { backend: "log", reason: "too_large" }) - tooLarge0, 2);
  }));

Deno.test("auditor: without a policy nothing is audited", async () => {
  const off = await createAuditor({ policyFile: null, log: logSettings("/nonexistent/x.log"), webhook: null });
  assert.equal(off.enabled, false);
  assert.equal(off.begin(request()), null);
  await off.shutdown();
});

Deno.test("auditor: throttling holds batches back to the rate; shutdown lifts it and flushes", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(
      dir,
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
    );
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, {
      log: logSettings(path, {
        mode: "batch",
        // one batch of one event per 1000 seconds, burst 1
        batch: batchOf({
          bufferSize: 100,
          maxBatchSize: 1,
          maxBatchWaitMs: 0,
          throttleEnable: true,
          throttleQPS: 0.001,
          throttleBurst: 1,
        }),
      }),
    }));
    for (let i = 0; i < 3; i++) await auditor.begin(request({ auditID: `th-${i}` }))!.complete(200);
    const lines = async () => (await Deno.readTextFile(path)).split("\n").filter(Boolean).length;
    // Wait until the worker holds the next batch back (or, with a broken throttle, wrote them all).
    const sink = (auditor as PolicyAuditor).sinks[0] as BufferedSink;
    for (let i = 0; i < 1000; i++) {
      const written = await lines();
      if ((sink.throttled && written >= 1) || written === 3) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(sink.throttled, true, "the worker waits for the throttle");
    assert.equal(await lines(), 1, "only the burst went out");
    await auditor.shutdown();
    assert.deepEqual((await readEvents(path)).map((e) => e.auditID), ["th-0", "th-1", "th-2"]);
  }));

Deno.test("auditor: omitManagedFields drops metadata.managedFields from the logged objects", () =>
  withDir(async (dir) => {
    const policyFile = await writePolicy(
      dir,
      "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nrules:\n- level: RequestResponse\n",
    );
    const path = `${dir}/audit.log`;
    const auditor = await createAuditor(settings(policyFile, { log: logSettings(path) }));
    const h = auditor.begin(request())!;
    h.requestBody({ metadata: { name: "a", managedFields: [{ manager: "kubectl" }] } });
    await h.complete(200, { kind: "List", items: [{ metadata: { name: "b", managedFields: [] } }] });
    await auditor.shutdown();
    const complete = (await readEvents(path)).find((e) => e.stage === "ResponseComplete")!;
    assert.deepEqual(complete.requestObject, { metadata: { name: "a" } });
    assert.deepEqual(complete.responseObject, { kind: "List", items: [{ metadata: { name: "b" } }] });
  }));
