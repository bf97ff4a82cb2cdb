/**
 * Two tenants in one shared proxy: tenant B's htpasswd Secret holds well-formed hashes whose check
 * costs seconds (bcrypt cost 16, SHA-crypt with 20 million rounds). HAProxy checks a password with
 * crypt(3) in the worker thread that serves every host, so one request with such a user's password
 * would hang it until the watchdog kills the whole process. The controller warns naming the users,
 * the proxy leaves their lines out of the userlist it writes, and tenant A is served throughout.
 * The real kube-apiserver, controller, proxy command and haproxy, in a private network namespace
 * (lib/dev/localenv/netns.ts); outside one, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import http from "node:http";
import bcrypt from "bcryptjs";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  httpGet,
  ingressClassObj,
  ingressObj,
  resources,
  serveBackends,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { CRYPT_HASHES } from "../render/fixtures.ts";

/** GET with basic credentials through the proxy on 127.0.0.1:`port`: the status, or the error. */
function getAs(port: number, host: string, user: string, password: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request({
      host: "127.0.0.1",
      port,
      path: "/",
      headers: { host, authorization: `Basic ${btoa(`${user}:${password}`)}` },
      agent: false,
    }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", (err) => resolve(String(err)));
    });
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")));
    req.on("error", (err) => resolve(String(err)));
    req.end();
  });
}

if (!inPrivateNetwork()) {
  Deno.test("password-hash cost tenancy tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("a tenant's costly password hashes are refused by user and never stall the shared proxy", async () => {
    const cluster = await Cluster.start();
    const servers = await backends(["alpha", "beta"], 40);
    let proxy: ProxyRun | null = null;
    try {
      const ops = await cluster.namespace("ops");
      const a = await cluster.namespace("tenant-a");
      const b = await cluster.namespace("tenant-b");
      await serveBackends(cluster, [[a, "web", servers[0]], [b, "web", servers[1]]]);
      await cluster.apply(resources.ingressClasses, ingressClassObj("web"));
      await cluster.apply(resources.secrets, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "users", namespace: b },
        type: "Opaque",
        stringData: {
          auth: [
            `bob:${bcrypt.hashSync("bob-pw", 5)}`,
            `mallory:${CRYPT_HASHES.malloryBcrypt16}`,
            `trudy:${CRYPT_HASHES.trudySha512Slow}`,
          ].join("\n"),
        },
      });
      const web = { className: "web" };
      await cluster.apply(resources.ingresses, ingressObj(a, "site", [{ host: "a.example", service: "web" }], web));
      await cluster.apply(
        resources.ingresses,
        ingressObj(b, "site", [{ host: "b.example", service: "web" }], {
          ...web,
          annotations: { "ingress-controller.io/auth-basic-secret": "users" },
        }),
      );
      const ctl = await controller(cluster, { operatorNamespace: ops });
      try {
        const shared = sharedProxyName("web");
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, ops, shared));
        proxy = await startProxy(cluster, ops, shared);
        const port = proxy.httpPort;
        await eventually("a.example → alpha", async () => (await httpGet(port, "a.example")).backend === "alpha");
        await eventually(
          "b.example lets bob in",
          async () => (await getAs(port, "b.example", "bob", "bob-pw")) === 200,
        );
        // (the first start is noted once its apply returns, which may be after haproxy answers)
        await eventually("haproxy's first start noted", () => proxy!.applied.some((r) => r.kind === "start"));
        const starts = proxy.applied.filter((r) => r.kind === "start").length;

        // Tenant B's costly users try their passwords while tenant A's clients keep coming.
        const costly = [
          getAs(port, "b.example", "mallory", "mallory-pw"),
          getAs(port, "b.example", "trudy", "trudy-pw"),
        ];
        const tenantA: string[] = [];
        for (let i = 0; i < 12; i++) {
          const r = await httpGet(port, "a.example").catch((err) => ({ status: 0, backend: String(err) }));
          tenantA.push(`${r.status} ${r.backend}`);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        assert.deepEqual(await Promise.all(costly), [401, 401], "their lines are left out: refused at once");
        assert.deepEqual(tenantA, Array(12).fill("200 alpha"), "tenant A is served all along");
        assert.equal(await getAs(port, "b.example", "bob", "bob-pw"), 200, "tenant B's other user still gets in");
        assert.equal(
          proxy.applied.filter((r) => r.kind === "start").length,
          starts,
          "haproxy never had to be started again",
        );

        const warning = await eventually(
          "a Warning on tenant B's Ingress naming the users",
          async () =>
            (await cluster.events(b, "site")).find((e) =>
              e.reason === "InvalidSecret" && /user mallory:/.test(e.message)
            ),
        );
        assert.equal(warning.type, "Warning");
        assert.match(warning.message, /user mallory: bcrypt cost 16 is above the proxy's limit of 7/);
        assert.match(warning.message, /user trudy: SHA-crypt rounds=20000000 is above the proxy's limit of 30000/);
        assert.doesNotMatch(warning.message, /MalloryCostlyHashSalt|trudyslow/, "no hash in the message");
        assert.equal((await cluster.events(a, "site")).filter((e) => e.type === "Warning").length, 0);
      } finally {
        await ctl.stop();
      }
    } finally {
      await proxy?.stop();
      for (const s of servers) await s.close();
      await cluster.stop();
    }
  });
}
