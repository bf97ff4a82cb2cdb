import assert from "node:assert/strict";
import { driftOf } from "../../lib/controller/drift.ts";
import { ownedShape } from "../../lib/controller/cached_shapes.ts";
import { type Desired, proxyObjects, sharedTarget } from "../../lib/controller/objects.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import { defaultClassParams } from "../../lib/controller/class_params.ts";
import { defaultPlatform } from "../../lib/controller/platform.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { PART_SHA_ANNOTATION } from "../../lib/transport/parts.ts";

const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };
const secrets = [{ namespace: "team-a", name: "web-tls" }];

/** Every object of a shared proxy with --rbac, by kind and namespace. */
function desired(params = defaultClassParams): Desired[] {
  const target = sharedTarget("web", undefined, "ops");
  return proxyObjects(target, data, secrets, { ...defaultSettings, rbac: true }, defaultPlatform, params);
}

function find(list: Desired[], kind: string, ns = "ops"): KubeObject {
  return list.find((d) => d.object.kind === kind && d.object.metadata.namespace === ns)!.object;
}

/** What the API server makes of an object: a copy with the fields it sets and the defaults it adds. */
function served(o: KubeObject): KubeObject {
  const s = structuredClone(o);
  s.metadata = { ...s.metadata, uid: "u-1", resourceVersion: "7", creationTimestamp: "2026-01-01T00:00:00Z" };
  s.metadata.annotations = { ...s.metadata.annotations, "deployment.kubernetes.io/revision": "3" };
  if (s.kind === "Deployment") {
    s.spec.revisionHistoryLimit = 10;
    s.spec.progressDeadlineSeconds = 600;
    s.spec.template.spec.restartPolicy = "Always";
    s.spec.template.spec.dnsPolicy = "ClusterFirst";
    for (const c of s.spec.template.spec.containers) {
      c.terminationMessagePath = "/dev/termination-log";
      c.imagePullPolicy = "IfNotPresent";
      for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) if (p) p.successThreshold ??= 1;
      for (const e of c.env ?? []) if (e.valueFrom?.fieldRef) e.valueFrom.fieldRef.apiVersion = "v1";
    }
    s.status = { availableReplicas: 1, replicas: 1 };
  }
  if (s.kind === "Service") {
    s.spec.clusterIP = "10.96.0.20";
    s.spec.clusterIPs = ["10.96.0.20"];
    s.spec.sessionAffinity = "None";
    s.spec.externalTrafficPolicy = "Cluster";
    for (const [i, p] of s.spec.ports.entries()) p.nodePort = 30080 + i;
  }
  return s;
}

Deno.test("drift: what the API server adds or defaults is no drift, for every owned object", () => {
  for (const d of desired()) {
    assert.equal(driftOf(d.object, served(d.object)), null, `${d.object.kind} ${d.object.metadata.namespace}`);
    assert.equal(driftOf(d.object, ownedShape(served(d.object))), null, `cached ${d.object.kind}`);
  }
});

Deno.test("drift: an emptied Role, a changed RoleBinding subject, a label removed are drift", () => {
  const all = desired();
  const role = find(all, "Role", "team-a");
  const emptied = served(role);
  emptied.rules = [];
  assert.equal(driftOf(role, emptied), "rules");
  const widened = served(role);
  widened.rules[0].resourceNames.push("other-tls");
  assert.equal(driftOf(role, widened), "rules[0].resourceNames");
  const added = served(role);
  added.rules.push({ apiGroups: [""], resources: ["secrets"], verbs: ["get"] });
  assert.equal(driftOf(role, added), "rules", "a rule more is drift too: rules are replaced whole");
  const binding = find(all, "RoleBinding", "team-a");
  const rebound = served(binding);
  rebound.subjects[0].name = "default";
  assert.equal(driftOf(binding, rebound), "subjects[0].name");
  const unlabelled = served(role);
  delete unlabelled.metadata.labels!["app.kubernetes.io/managed-by"];
  assert.equal(driftOf(role, unlabelled), "metadata.labels.app.kubernetes.io/managed-by");
  const orphaned = served(role);
  orphaned.metadata.ownerReferences = [];
  const withOwner = structuredClone(role);
  withOwner.metadata.ownerReferences = [{
    apiVersion: "networking.k8s.io/v1",
    kind: "IngressClass",
    name: "web",
    uid: "c1",
  }];
  assert.equal(driftOf(withOwner, orphaned), "metadata.ownerReferences[c1]");
});

Deno.test("drift: a ConfigMap's data must be exactly what was written, a key more included", () => {
  const cm = find(desired(), "ConfigMap");
  assert.equal(driftOf(cm, served(cm)), null);
  const edited = served(cm);
  edited.data["haproxy.cfg"] = "global\n    lua-load /tmp/x.lua\n";
  assert.equal(driftOf(cm, edited), "data");
  assert.equal(driftOf(cm, ownedShape(edited)), "data", "the cached shape keeps digests, not data");
  const extra = served(cm);
  extra.data["routes-exact.map"] = "evil.example be_x\n";
  assert.equal(driftOf(cm, extra), "data");
  const cached = ownedShape(served(cm));
  assert.equal(cached.data, undefined, "no data in the cache");
});

Deno.test("drift: a deflated part and a head carrying one are compared by digest, binaryData and data alike", () => {
  const target = sharedTarget("web", undefined, "ops");
  const big = (n: number) =>
    Array.from({ length: n }, (_, i) => `backend be_${i}\n    server s1 10.0.0.1:80\n\n`).join("");
  const settings = { ...defaultSettings, configSplit: { inline: 2048, fileInline: 256, targetPart: 512 } };
  const objects = (cfg: string, previous: Map<string, string>) =>
    proxyObjects(target, { ...data, "haproxy.cfg": cfg }, [], settings, defaultPlatform, defaultClassParams, previous)
      .map((d) => d.object).filter((o) => o.kind === "ConfigMap");
  const first = objects(big(100), new Map());
  const part = first.find((o) => o.binaryData)!;
  assert.ok(part && !part.data, "a part of backends is stored deflated");
  for (const o of first) {
    assert.equal(driftOf(o, served(o)), null, o.metadata.name);
    assert.equal(driftOf(o, ownedShape(served(o))), null, `${o.metadata.name}, cached`);
  }
  const extra = served(part);
  extra.data = { part: "backend evil\n" };
  assert.equal(driftOf(part, ownedShape(extra)), "binaryData", "a key more");
  const other = served(part);
  other.binaryData = first.find((o) => o.binaryData && o !== part)!.binaryData;
  assert.equal(driftOf(part, ownedShape(other)), "binaryData", "another part's content");
  // A one-backend change: the head carries its new part deflated in binaryData.
  const previous = new Map(
    first.filter((o) => o.metadata.annotations?.[PART_SHA_ANNOTATION])
      .map((o) => [o.metadata.name, o.metadata.annotations![PART_SHA_ANNOTATION]]),
  );
  const head = objects(big(100).replace("be_50\n", "be_50\n    balance leastconn\n"), previous)
    .find((o) => o.metadata.name === target.name)!;
  assert.ok(head.binaryData && Object.keys(head.binaryData).length >= 1, "carried deflated");
  assert.equal(driftOf(head, ownedShape(served(head))), null);
  const dropped = served(head);
  delete dropped.binaryData;
  assert.equal(driftOf(head, ownedShape(dropped)), "data", "the carried part removed");
});

Deno.test("drift: Deployment and Service fields the controller sets; items others add to keyed lists are left", () => {
  const all = desired();
  const dep = find(all, "Deployment");
  const args = served(dep);
  args.spec.template.spec.containers[0].args.push("--extra");
  assert.equal(driftOf(dep, args), "spec.template.spec.containers[haproxy].args");
  const image = served(dep);
  image.spec.template.spec.containers[1].image = "registry.example/evil:1";
  assert.equal(driftOf(dep, image), "spec.template.spec.containers[exporter].image");
  const scaled = served(dep);
  scaled.spec.replicas = 3;
  assert.equal(driftOf(dep, scaled), null, "replicas belong to whoever scales the Deployment (kubectl scale, an HPA)");
  const sidecar = served(dep);
  sidecar.spec.template.spec.containers.push({ name: "debug", image: "busybox" });
  sidecar.spec.template.metadata.annotations = { "kubectl.kubernetes.io/restartedAt": "now" };
  assert.equal(driftOf(dep, sidecar), null, "a container or annotation someone adds survives an apply: not compared");
  const reordered = served(dep);
  reordered.spec.template.spec.containers.reverse();
  assert.equal(driftOf(dep, reordered), null, "containers are found by name");
  const svc = find(all, "Service");
  const selector = served(svc);
  selector.spec.selector = { ...selector.spec.selector, extra: "x" };
  assert.equal(driftOf(svc, selector), "spec.selector", "a Service selector is replaced whole by an apply");
  const port = served(svc);
  port.spec.ports[1].targetPort = 9999;
  assert.equal(driftOf(svc, port), "spec.ports[443/TCP].targetPort");
  const type = served(svc);
  type.spec.type = "ClusterIP";
  assert.equal(driftOf(svc, type), "spec.type");
});

Deno.test("drift: quantities compare by value, as the API server rewrites them", () => {
  const params = {
    ...defaultClassParams,
    resources: { requests: { cpu: "0.5" }, limits: { cpu: "1.5", memory: "1Gi" } },
  };
  const dep = find(desired(params), "Deployment");
  const canonical = served(dep);
  const r = canonical.spec.template.spec.containers[0].resources;
  r.requests.cpu = "500m";
  r.limits.cpu = "1500m";
  r.limits.memory = "1024Mi";
  assert.equal(driftOf(dep, canonical), null);
  r.limits.cpu = "2";
  assert.equal(driftOf(dep, canonical), "spec.template.spec.containers[haproxy].resources.limits.cpu");
});

Deno.test("drift: fields the API server does not keep as written are skipped once known", () => {
  const dep = find(desired(), "Deployment");
  const dropped = served(dep);
  delete dropped.spec.template.spec.topologySpreadConstraints[0].matchLabelKeys;
  const path = "spec.template.spec.topologySpreadConstraints[kubernetes.io/hostname/ScheduleAnyway].matchLabelKeys";
  assert.equal(driftOf(dep, dropped), path);
  assert.equal(driftOf(dep, dropped, new Set([`Deployment ${path}`])), null);
});
