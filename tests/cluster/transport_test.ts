/**
 * The cluster client's two transports against the real kube-apiserver of lib/localenv, through a
 * TCP forwarder that counts the connections the client really opens: with fetch (the default) a
 * watch holds one connection and 30 calls beside it share one more; node:https (tls-server-name)
 * reuses its connection across sequential calls; a burst of concurrent calls opens no more
 * connections than the client lets calls be under way, and a client built without `maxInFlight` lets at
 * most 32 (the default). New TLS material builds a new fetch client and closes the old one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { loadKubeConfig } from "../../lib/cluster/access.ts";
import { transportFor } from "../../lib/cluster/transport.ts";
import { collectionPath, resources } from "../../lib/cluster/resources.ts";
import { type ControlPlane, startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { tcpToTcp } from "../../lib/dev/localenv/forward.ts";
import { writeKubeConfig } from "../../lib/dev/localenv/kubeconfig.ts";

/** A kubeconfig for the admin's client certificate, to `server`. */
function adminConfig(cp: ControlPlane, dir: string, server: string, tlsServerName?: string): Promise<string> {
  return writeKubeConfig(join(dir, `admin-${tlsServerName ?? "plain"}.yaml`), {
    server,
    caPem: cp.caPem,
    user: "admin",
    credentials: { certPem: cp.admin.certPem, keyPem: cp.admin.keyPem },
    tlsServerName,
  });
}

Deno.test("cluster transports against a real API server, connections counted", async (t) => {
  await using cp = await startControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ic-transport-" });
  const fwd = tcpToTcp(Number(new URL(cp.server).port));
  const fwdUrl = `https://127.0.0.1:${fwd.port}`;
  const cms = collectionPath(resources.configMaps, "default");
  try {
    await t.step("fetch: a watch holds one connection, 30 calls beside it share one more", async () => {
      const client = await ClusterClient.create({ kubeconfig: await adminConfig(cp, dir, fwdUrl), qps: 0, burst: 1 });
      const before = fwd.accepted;
      try {
        assert.equal(client.transport, "fetch");
        const watch = await client.watch(cms, { timeoutSeconds: 60 });
        const seen: string[] = [];
        const reading = (async () => {
          for await (const ev of watch.events) seen.push(`${ev.type} ${ev.object?.metadata?.name}`);
        })();
        for (let i = 0; i < 30; i++) {
          await client.request("POST", cms, {
            body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `fetch-${i}` } },
          });
        }
        const deadline = Date.now() + 10_000;
        while (!seen.includes("ADDED fetch-29") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        assert.ok(seen.includes("ADDED fetch-29"), `the watch saw ${seen.length} events`);
        watch.close();
        await reading;
        assert.equal(fwd.accepted - before, 2, `opened ${fwd.accepted - before} connections`);
      } finally {
        client.close();
      }
    });

    await t.step("fetch: 200 calls at once open no more connections than maxInFlight (8)", async () => {
      const client = await ClusterClient.create({
        kubeconfig: await adminConfig(cp, dir, fwdUrl),
        qps: 0,
        burst: 1,
        maxInFlight: 8,
      });
      const before = fwd.accepted;
      let mostActive = 0;
      try {
        const answers = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
          const got = await client.request("GET", `${cms}/fetch-${i % 30}`);
          mostActive = Math.max(mostActive, client.calls.active);
          return got.metadata.name;
        }));
        assert.equal(answers.length, 200);
        assert.equal(answers[199], "fetch-19");
        assert.ok(mostActive <= 8 && mostActive > 1, `${mostActive} calls were under way at once`);
        // A finished call's connection goes back to fetch's pool a moment after the next call has
        // started, so a busy machine sees a connection or two more than calls under way; never 200.
        const opened = fwd.accepted - before;
        assert.ok(opened <= 2 * 8 && opened > 1, `opened ${opened} connections`);
        assert.deepEqual(client.calls, { active: 0, waiting: 0 });
      } finally {
        client.close();
      }
    });

    await t.step("fetch, maxInFlight not given: 300 calls at once stay within the default of 32", async () => {
      // The default is what the controller and the proxy run with: a burst (an Event per Ingress of a
      // conflicting class) must not open a connection per call (README "Cluster client": at most 32).
      const client = await ClusterClient.create({ kubeconfig: await adminConfig(cp, dir, fwdUrl), qps: 0, burst: 1 });
      const before = fwd.accepted;
      let mostActive = 0, mostWaiting = 0;
      try {
        const answers = await Promise.all(Array.from({ length: 300 }, async (_, i) => {
          const got = await client.request("GET", `${cms}/fetch-${i % 30}`);
          mostActive = Math.max(mostActive, client.calls.active);
          mostWaiting = Math.max(mostWaiting, client.calls.waiting);
          return got.metadata.name;
        }));
        assert.equal(answers[299], "fetch-29");
        assert.ok(mostActive <= 32 && mostWaiting > 0, `${mostActive} under way at once, ${mostWaiting} waiting`);
        // Without the cap each of the 300 opens a connection of its own. With it a few more than 32 may open:
        // a finished call's connection is back in fetch's pool a moment after the next call has started.
        const opened = fwd.accepted - before;
        assert.ok(opened < 2 * 32 && opened > 1, `opened ${opened} connections`);
        assert.deepEqual(client.calls, { active: 0, waiting: 0 });
      } finally {
        client.close();
      }
    });

    await t.step("node:https (tls-server-name): 30 sequential calls reuse one connection", async () => {
      const path = await adminConfig(cp, dir, fwdUrl, "localhost");
      const client = await ClusterClient.create({ kubeconfig: path, qps: 0, burst: 1 });
      const before = fwd.accepted;
      try {
        assert.equal(client.transport, "node");
        for (let i = 0; i < 30; i++) await client.request("GET", `${cms}/fetch-${i}`);
        assert.ok(fwd.accepted - before <= 1, `opened ${fwd.accepted - before} connections`);
      } finally {
        client.close();
      }
    });

    await t.step("new TLS material: a new fetch client, the old one closed once idle", async () => {
      const access = loadKubeConfig(cp.adminKubeConfigPath);
      const c = await access.connection();
      const transport = transportFor(new URL(cp.server), c);
      const get = async () => {
        const ex = await transport.send({
          method: "GET",
          url: new URL(`${cp.server}${cms}/fetch-0`),
          headers: c.headers,
        });
        let bytes = 0;
        for await (const chunk of ex.body) bytes += chunk.length;
        return { status: ex.status, bytes };
      };
      try {
        assert.equal((await get()).status, 200);
        // The same material: kept. Another key and certificate (a rotated file): a new client.
        transport.setTls({ ...c });
        const minted = await cp.mintUser("rotated-admin", ["system:masters"]);
        transport.setTls({ ...c, cert: minted.certPem, key: minted.keyPem });
        const after = await get();
        assert.equal(after.status, 200);
        assert.ok(after.bytes > 0);
      } finally {
        // Resource sanitizer: a Deno.HttpClient left open fails the test. Closing twice is harmless.
        transport.close();
        transport.close();
      }
    });
  } finally {
    await fwd.close();
    await Deno.remove(dir, { recursive: true });
  }
});
