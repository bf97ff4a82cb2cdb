/**
 * Tenant isolation, external authentication as an SSRF primitive: two tenants in one shared proxy,
 * the real kube-apiserver, the real controller and a real haproxy run by the proxy command, in a
 * private network namespace whose resolv.conf names a DNS server of the test (cluster DNS plays
 * `*.svc.cluster.local`). The class restricts auth hosts to oauth2-proxy's (`auth-url-allowed-hosts`
 * in its parameters ConfigMap). Tenant A points `auth-url` at the cloud metadata address (a fake
 * metadata service listens on 169.254.169.254 here), at 127.0.0.1:56789, at the shared proxy's stats
 * (its Service name on the stats port, and its stats listener itself) and at tenant B's Service:
 * each Ingress gets a Warning Event naming the annotation and why, its host answers 500 (never an
 * unauthenticated pass), and no target is ever contacted. Tenant B's routes, behind the allowed
 * oauth2-proxy, keep working.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { startDnsServer } from "../../lib/dev/localenv/dns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  ingressObj,
  resources,
  serveBackends,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { curl } from "../render/live.ts";

const A = "ingress-controller.io/";

/** An HTTP service on `hostname:port` that counts what it is asked; 200 for the cookie `session=ok`, else 401. */
function recorder(hostname: string, port: number) {
  const seen: string[] = [];
  const server = Deno.serve({ hostname, port, onListen: () => {} }, (req) => {
    seen.push(new URL(req.url).pathname);
    return (req.headers.get("cookie") ?? "").includes("session=ok")
      ? new Response(null, { status: 200, headers: { "X-Auth-Request-User": "bob" } })
      : new Response("who are you", { status: 401 });
  });
  return { seen, [Symbol.asyncDispose]: () => server.shutdown() };
}

if (!inPrivateNetwork()) {
  Deno.test("tenancy: auth-url targets (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname, { resolver: true });
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("tenancy: a tenant's auth-url never reaches metadata, the proxy's own ports or another namespace", async () => {
    const ip = await new Deno.Command("ip", { args: ["addr", "add", "169.254.169.254/32", "dev", "lo"] }).output();
    assert.ok(ip.success, "the metadata address on this namespace's loopback");
    await using metadata = recorder("169.254.169.254", 80);
    await using oauth2 = recorder(privateAddress(60), 4180);
    const cluster = await Cluster.start();
    const proxies: ProxyRun[] = [];
    const [alpha, beta] = await backends(["alpha", "beta"], 40);
    try {
      const ops = await cluster.namespace("ops");
      const a = await cluster.namespace("tenant-a");
      const b = await cluster.namespace("tenant-b");
      await using dns = await startDnsServer({
        "oauth2-proxy.auth.svc.cluster.local": [privateAddress(60)],
        [`svc-b.${b}.svc.cluster.local`]: [beta.address],
      });
      await serveBackends(cluster, [[a, "svc-a", alpha], [b, "svc-b", beta]]);
      await cluster.apply(resources.configMaps, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "web-params", namespace: ops },
        data: { "auth-url-allowed-hosts": "oauth2-proxy.auth.svc.cluster.local" },
      });
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "web" },
        spec: {
          controller: "ingress-controller.io/ingress-controller",
          parameters: { kind: "ConfigMap", name: "web-params", namespace: ops, scope: "Namespace" },
        },
      });
      const web = { className: "web" };
      const oauth = "http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth";
      await cluster.apply(
        resources.ingresses,
        ingressObj(b, "shop", [{ host: "shop.b.example", service: "svc-b" }], {
          ...web,
          annotations: { [`${A}auth-url`]: oauth, [`${A}auth-response-headers`]: "X-Auth-Request-User" },
        }),
      );
      const ctl = await controller(cluster, { operatorNamespace: ops });
      const shared = sharedProxyName("web");
      try {
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, ops, shared));
        const proxy = await startProxy(cluster, ops, shared);
        proxies.push(proxy);
        const get = (host: string) =>
          curl(["-H", `Host: ${host}`, "-b", "session=ok", `http://127.0.0.1:${proxy.httpPort}/`]);
        await eventually(
          "tenant B behind its oauth2-proxy",
          async () => (await get("shop.b.example")).backend === "beta",
        );
        const asked = oauth2.seen.length;

        // Tenant A's attempts, one Ingress each.
        const attacks: Record<string, { url: string; why: RegExp }> = {
          metadata: { url: "http://169.254.169.254/latest/meta-data/iam/security-credentials/", why: /link-local/ },
          "stats-port": { url: "http://127.0.0.1:56789/", why: /port 56789, the proxy's stats port/ },
          "proxy-stats": { url: `http://127.0.0.1:${proxy.statsPort}/;csv`, why: /a loopback address/ },
          "proxy-service": { url: `http://${shared}.${ops}.svc.cluster.local:56789/`, why: /the proxy's stats port/ },
          "other-tenant": {
            url: `http://svc-b.${b}.svc.cluster.local/`,
            why: new RegExp(`host svc-b\\.${b}\\.svc\\.cluster\\.local is not in the class's auth-url-allowed-hosts`),
          },
        };
        for (const [name, { url }] of Object.entries(attacks)) {
          await cluster.apply(
            resources.ingresses,
            ingressObj(a, name, [{ host: `${name}.a.example`, service: "svc-a" }], {
              ...web,
              annotations: { [`${A}auth-url`]: url },
            }),
          );
        }
        for (const [name, { why }] of Object.entries(attacks)) {
          const event = await eventually(
            `a Warning Event on ${a}/${name}`,
            async () =>
              (await cluster.events(a, name)).find((e) =>
                e.type === "Warning" && e.message.includes(`${A}auth-url`) && why.test(e.message)
              ),
          );
          assert.match(event.message, /every request of the route gets 500/, name);
        }
        await ctl.idle();
        for (const name of Object.keys(attacks)) {
          await eventually(
            `${name}.a.example answers 500`,
            async () => (await get(`${name}.a.example`)).status === 500,
          );
        }
        assert.equal(alpha.requests, 0, "tenant A's backend never served an unauthenticated request");
        assert.equal(metadata.seen.length, 0, "the metadata service was never asked");
        assert.equal(beta.requests > 0, true);
        const betaServed = beta.requests;
        assert.ok(
          !dns.asked.some((q) => q.startsWith(`svc-b.${b}.`)),
          "tenant B's Service name was never even resolved",
        );

        // Tenant B is unaffected: authenticated through the allowed oauth2-proxy, served by its backend.
        for (let i = 0; i < 3; i++) {
          const r = await get("shop.b.example");
          assert.equal(r.backend, "beta");
          assert.equal(JSON.parse(r.body).headers["x-auth-request-user"], "bob");
        }
        const anonymous = await curl(["-H", "Host: shop.b.example", `http://127.0.0.1:${proxy.httpPort}/`]);
        assert.equal(anonymous.status, 401);
        assert.equal(beta.requests, betaServed + 3, "only tenant B's own authenticated requests reached it");
        assert.equal(oauth2.seen.length, asked + 4);
        assert.ok((await cluster.events(b, "shop")).every((e) => e.type !== "Warning"), "no Warning for tenant B");
      } finally {
        await ctl.stop();
      }
    } finally {
      for (const p of proxies) await p.stop();
      for (const s of [alpha, beta]) await s.close();
      await cluster.stop();
    }
  });
}
