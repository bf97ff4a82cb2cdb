/**
 * `service-upstream` (ingress-nginx's `service-upstream`): the route's backend has one server, the
 * Service's cluster IP and port, instead of its endpoints; through a real haproxy the requests reach
 * what listens there (a loopback address standing for the cluster IP), whatever the EndpointSlices say.
 */
import assert from "node:assert/strict";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";
import { curl, withProxy } from "./live.ts";

const A = "ingress-controller.io/";
const route = (host: string, svc: string) => ({ host, paths: [{ path: "/", service: svc, port: 80 }] });

Deno.test("service-upstream: the cluster IP is the one server; headless and missing ports are Warnings", () => {
  const withIp = (name: string, clusterIP: string) => {
    const s = service(name, [{ name: "http", port: 80, targetPort: 8080 }]);
    s.spec!.clusterIP = clusterIP;
    return s;
  };
  const { model, problems } = buildModel({
    ingresses: [
      ingress({ name: "up", annotations: { [`${A}service-upstream`]: "true" }, rules: [route("a.example", "web")] }),
      ingress({ name: "eps", rules: [route("b.example", "web")] }),
      ingress({
        name: "headless",
        annotations: { [`${A}service-upstream`]: "true" },
        rules: [route("c.example", "db")],
      }),
    ],
    lookup: lookupFromLists({
      services: [withIp("web", "10.96.0.10"), withIp("db", "None")],
      endpointSlices: [endpointSlice("web", [{ name: "http", port: 8080 }], [{ address: "10.1.0.1" }])],
    }),
  });
  const serversOf = (host: string) => {
    const be = model.backends.find((b) => b.name === model.routes.find((r) => r.host === host)!.backend)!;
    return be.servers.map((s) => `${s.address}:${s.port}`);
  };
  assert.deepEqual(serversOf("a.example"), ["10.96.0.10:80"], "the Service's IP and port, not the target port");
  assert.deepEqual(serversOf("b.example"), ["10.1.0.1:8080"], "without the key: the endpoints");
  assert.deepEqual(serversOf("c.example"), []);
  assert.deepEqual(problems.map((p) => [p.object, p.reason]), [["default/headless", "UnsupportedService"]]);
  assert.match(problems[0].message, /service-upstream needs a cluster IP.*headless/);
});

Deno.test("service-upstream: through haproxy, requests go to the cluster IP and not to the endpoints", async () => {
  await using viaIp = await startBackend({ name: "cluster-ip", host: "127.0.0.1" });
  await using endpoint = await startBackend({ name: "endpoint", host: "127.0.0.1" });
  const web = service("web", [{ name: "http", port: viaIp.port, targetPort: 8080 }]);
  web.spec!.clusterIP = "127.0.0.1";
  const objects = {
    ingresses: [
      ingress({ name: "up", annotations: { [`${A}service-upstream`]: "true" }, rules: [route("up.example", "web")] }),
      ingress({
        name: "eps",
        rules: [{ host: "eps.example", paths: [{ path: "/", service: "web", port: viaIp.port }] }],
      }),
    ],
    lookup: lookupFromLists({
      services: [web],
      endpointSlices: [endpointSlice("web", [{ name: "http", port: endpoint.port }], [{ address: "127.0.0.1" }])],
    }),
  };
  objects.ingresses[0].spec!.rules![0].http!.paths[0].backend.service!.port = { number: viaIp.port };
  await withProxy(objects, {}, async ({ http }) => {
    const get = (host: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}/x`]);
    assert.deepEqual([(await get("up.example")).backend, (await get("eps.example")).backend], [
      "cluster-ip",
      "endpoint",
    ]);
  });
});
