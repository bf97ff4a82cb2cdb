import assert from "node:assert/strict";
import type { AuditEvent } from "../../lib/audit/event.ts";
import { microTime, responseStatus, rfc3339Nano } from "../../lib/audit/event.ts";
import { eventJSON, eventLegacy, eventListJSON, goQuote } from "../../lib/audit/serialize.ts";

// 2026-11-22T01:02:03.004005Z and 250ms later
const received = Date.UTC(2026, 10, 22, 1, 2, 3) * 1000 + 4005;
const event: AuditEvent = {
  level: "Request",
  auditID: "6a1f8e7c-0000-4000-8000-000000000001",
  stage: "ResponseComplete",
  requestURI: "/apis/networking.k8s.io/v1/namespaces/prod/ingresses/web",
  verb: "patch",
  user: { username: "alice", uid: "u-1", groups: ["devs", "system:authenticated"], extra: { scopes: ["a"] } },
  impersonatedUser: { username: "bob", groups: ["ops"] },
  sourceIPs: ["10.0.0.1", "127.0.0.1"],
  userAgent: "kubectl/v1.30 (linux)",
  objectRef: { resource: "ingresses", namespace: "prod", name: "web", apiGroup: "networking.k8s.io", apiVersion: "v1" },
  responseStatus: responseStatus(200),
  requestObject: { spec: { rules: [] } },
  requestReceivedTimestamp: received,
  stageTimestamp: received + 250_000,
  annotations: { "authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": "RBAC: allowed" },
};

Deno.test("serialize: audit.k8s.io/v1 JSON has Kubernetes' field names and order, microsecond UTC times", () => {
  const json = eventJSON(event, "audit.k8s.io/v1");
  const obj = JSON.parse(json);
  assert.deepEqual(Object.keys(obj), [
    "kind",
    "apiVersion",
    "level",
    "auditID",
    "stage",
    "requestURI",
    "verb",
    "user",
    "impersonatedUser",
    "sourceIPs",
    "userAgent",
    "objectRef",
    "responseStatus",
    "requestObject",
    "requestReceivedTimestamp",
    "stageTimestamp",
    "annotations",
  ]);
  assert.equal(obj.kind, "Event");
  assert.equal(obj.apiVersion, "audit.k8s.io/v1");
  assert.equal(obj.requestReceivedTimestamp, "2026-11-22T01:02:03.004005Z");
  assert.equal(obj.stageTimestamp, "2026-11-22T01:02:03.254005Z");
  assert.deepEqual(obj.responseStatus, { metadata: {}, code: 200 });
  assert.deepEqual(Object.keys(obj.objectRef), ["resource", "namespace", "name", "apiGroup", "apiVersion"]);
  assert.ok(!json.includes("\n"));
});

Deno.test("serialize: audit.k8s.io/v1beta1 adds metadata.creationTimestamp (stage) and timestamp (received), in seconds", () => {
  const obj = JSON.parse(eventJSON(event, "audit.k8s.io/v1beta1"));
  assert.deepEqual(Object.keys(obj).slice(0, 6), ["kind", "apiVersion", "metadata", "level", "timestamp", "auditID"]);
  assert.equal(obj.apiVersion, "audit.k8s.io/v1beta1");
  assert.deepEqual(obj.metadata, { creationTimestamp: "2026-11-22T01:02:03Z" });
  assert.equal(obj.timestamp, "2026-11-22T01:02:03Z");
  assert.equal(obj.requestReceivedTimestamp, "2026-11-22T01:02:03.004005Z");
});

Deno.test("serialize: the legacy line is kube-apiserver's EventString layout", () => {
  assert.equal(
    eventLegacy(event),
    `2026-11-22T01:02:03.004005Z AUDIT: id="6a1f8e7c-0000-4000-8000-000000000001" stage="ResponseComplete" ` +
      `ip="10.0.0.1" method="patch" user="alice" groups="\\"devs\\",\\"system:authenticated\\"" as="bob" ` +
      `asgroups="\\"ops\\"" user-agent="kubectl/v1.30 (linux)" namespace="prod" ` +
      `uri="/apis/networking.k8s.io/v1/namespaces/prod/ingresses/web" response="200"`,
  );
  const bare: AuditEvent = {
    level: "Metadata",
    auditID: "x",
    stage: "RequestReceived",
    requestURI: "/healthz",
    verb: "get",
    user: {},
    requestReceivedTimestamp: Date.UTC(2026, 0, 1) * 1000,
    stageTimestamp: Date.UTC(2026, 0, 1) * 1000,
  };
  assert.equal(
    eventLegacy(bare),
    `2026-01-01T00:00:00Z AUDIT: id="x" stage="RequestReceived" ip="<unknown>" method="get" user="<none>" ` +
      `groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="/healthz" response="<deferred>"`,
  );
});

Deno.test("serialize: Go %q quoting and RFC3339Nano trimming", () => {
  assert.equal(goQuote('a"b\\c\n\t\x01\x7fé€😀\u00a0'), '"a\\"b\\\\c\\n\\t\\x01\\x7fé€😀\\u00a0"');
  assert.equal(rfc3339Nano(Date.UTC(2026, 0, 1) * 1000 + 120_000), "2026-01-01T00:00:00.12Z");
  assert.equal(microTime(Date.UTC(2026, 0, 1) * 1000 + 7), "2026-01-01T00:00:00.000007Z");
});

Deno.test("serialize: EventList wraps items", () => {
  const list = JSON.parse(eventListJSON([eventJSON(event, "audit.k8s.io/v1")], "audit.k8s.io/v1"));
  assert.equal(list.kind, "EventList");
  assert.equal(list.apiVersion, "audit.k8s.io/v1");
  assert.equal(list.items.length, 1);
  assert.equal(list.items[0].auditID, event.auditID);
});

Deno.test("serialize: responseStatus of errors as metav1.Status", () => {
  assert.deepEqual(responseStatus(403), {
    metadata: {},
    code: 403,
    status: "Failure",
    message: "Forbidden",
    reason: "Forbidden",
  });
  assert.deepEqual(
    responseStatus(403, {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: 'forbidden: User "bob" cannot get path "/metrics"',
      reason: "Forbidden",
      details: {},
      code: 403,
    }),
    {
      metadata: {},
      status: "Failure",
      message: 'forbidden: User "bob" cannot get path "/metrics"',
      reason: "Forbidden",
      details: {},
      code: 403,
    },
  );
  assert.deepEqual(responseStatus(500, "boom\n"), {
    metadata: {},
    code: 500,
    status: "Failure",
    message: "boom",
    reason: "InternalError",
  });
});

Deno.test("serialize: audit.k8s.io/v1alpha1 folds the API group into objectRef.apiVersion", () => {
  const obj = JSON.parse(eventJSON(event, "audit.k8s.io/v1alpha1"));
  assert.equal(obj.apiVersion, "audit.k8s.io/v1alpha1");
  assert.deepEqual(obj.objectRef, {
    resource: "ingresses",
    namespace: "prod",
    name: "web",
    apiVersion: "networking.k8s.io/v1",
  });
  assert.equal(obj.timestamp, "2026-11-22T01:02:03Z");
});
