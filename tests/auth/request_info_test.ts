import assert from "node:assert/strict";
import { requestAttributes } from "../../lib/auth/request_info.ts";
import { anonymousUser } from "../../lib/auth/types.ts";

const attrs = (method: string, path: string) =>
  requestAttributes(method, new URL(path, "https://localhost"), anonymousUser);

Deno.test("request_info: non-resource paths use the lower-cased method as verb (HEAD stays head)", () => {
  assert.deepEqual(attrs("GET", "/healthz"), { user: anonymousUser, verb: "get", path: "/healthz" });
  assert.equal(attrs("HEAD", "/metrics").verb, "head");
  assert.equal(attrs("POST", "/debug/pprof/profile").verb, "post");
  assert.equal(attrs("GET", "/api").resource, undefined);
  assert.equal(attrs("GET", "/api/v1").resource, undefined);
  assert.equal(attrs("GET", "/apis/apps/v1").resource, undefined);
  assert.equal(attrs("GET", "/apis/apps").resource, undefined);
});

Deno.test("request_info: resource paths as Kubernetes' RequestInfoFactory reads them", () => {
  assert.deepEqual(attrs("GET", "/api/v1/namespaces/default/pods").resource, {
    apiGroup: "",
    apiVersion: "v1",
    resource: "pods",
    namespace: "default",
  });
  assert.equal(attrs("GET", "/api/v1/namespaces/default/pods").verb, "list");
  assert.equal(attrs("GET", "/api/v1/namespaces/default/pods?watch=true").verb, "watch");
  assert.equal(attrs("HEAD", "/api/v1/namespaces/default/pods/p1").verb, "get");
  assert.deepEqual(attrs("GET", "/api/v1/namespaces/default/pods/p1/log").resource, {
    apiGroup: "",
    apiVersion: "v1",
    resource: "pods",
    subresource: "log",
    namespace: "default",
    name: "p1",
  });
  const dep = attrs("PATCH", "/apis/apps/v1/namespaces/ns/deployments/web");
  assert.equal(dep.verb, "patch");
  assert.equal(dep.resource?.apiGroup, "apps");
  assert.equal(dep.resource?.name, "web");
  assert.equal(attrs("DELETE", "/api/v1/namespaces/ns/configmaps").verb, "deletecollection");
  assert.equal(attrs("POST", "/api/v1/namespaces/ns/configmaps").verb, "create");
  assert.equal(attrs("PUT", "/api/v1/nodes/n1").verb, "update");
  assert.deepEqual(attrs("GET", "/api/v1/namespaces/ns").resource, {
    apiGroup: "",
    apiVersion: "v1",
    resource: "namespaces",
    namespace: "ns",
    name: "ns",
  });
  assert.equal(attrs("PUT", "/api/v1/namespaces/ns/finalize").resource?.subresource, "finalize");
  const w = attrs("GET", "/api/v1/watch/namespaces/ns/pods");
  assert.equal(w.verb, "watch");
  assert.equal(w.resource?.resource, "pods");
});
