/**
 * The ingress-nginx conversion cases (tests/nginx/conversion_cases.ts) through a real haproxy: every
 * case that traffic can show is one Ingress (its host `<key>.nginx.test`) of one configuration,
 * translated as the controller does, rendered, applied by the proxy's own Applier, and probed with
 * curl. The Services' servers listen on loopback; the external authentication service on a private
 * address (auth-url refuses loopback), so this runs in a private network namespace
 * (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render } from "../../lib/render/render.ts";
import { MAP_FILES } from "../../lib/render/maps.ts";
import { parseSecretRefs, secretContents } from "../../lib/proxy/files.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { CONVERTERS } from "../../lib/nginx/convert.ts";
import { compatIngress } from "../../lib/nginx/translate.ts";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { proxyUnderTest } from "../proxy/fixtures.ts";
import { curlReply, type Reply } from "./curl_reply.ts";
import {
  type Ask,
  AUTH_ADDRESS,
  caseIngresses,
  CASES,
  caseWorld,
  hostOf,
  makePki,
  moreIngresses,
  type Ports,
  type RequestOptions,
  UNREACHABLE_ADDRESS,
} from "./conversion_cases.ts";

/** An answer as startBackend's (name, target, headers), for servers that are not one. */
function answer(name: string, req: Request, status = 200): Response {
  const target = req.url.slice(req.url.indexOf("/", req.url.indexOf("//") + 2));
  return Response.json({ name, target, headers: Object.fromEntries(req.headers) }, { status });
}

function serve(
  options: Deno.ServeTcpOptions | (Deno.ServeTcpOptions & Deno.TlsCertifiedKeyPem),
  handler: Deno.ServeHandler,
) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {}, ...options }, handler);
  return { port: server.addr.port, [Symbol.asyncDispose]: () => server.shutdown() };
}

if (!inPrivateNetwork()) {
  Deno.test("ingress-nginx conversions through haproxy (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the conversion traffic tests failed inside the private network namespace: see above");
  });
} else {
  Deno.test("each ingress-nginx conversion does through haproxy what ingress-nginx documents", async (t) => {
    const dir = await Deno.makeTempDir({ prefix: "ic-nginx-traffic-" });
    const cleanup: AsyncDisposable[] = [];
    try {
      const pki = await makePki(dir);
      // UNREACHABLE_ADDRESS is routed through loopback without being local: what is sent to it comes back
      // to an address this host does not have and is dropped, so connections to it time out
      const route = await new Deno.Command("ip", {
        args: ["route", "add", `${UNREACHABLE_ADDRESS}/32`, "dev", "lo"],
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.ok(route.success, `ip route add: ${new TextDecoder().decode(route.stderr)}`);
      const web = await startBackend({ name: "web" });
      const canary = await startBackend({ name: "canary" });
      const fallback = await startBackend({ name: "fallback" });
      const clusterIp = await startBackend({ name: "cluster-ip" });
      cleanup.push(web, canary, fallback, clusterIp);
      // ?status=<code> answers that code, ?delay=<ms> that late
      const scripted = serve({}, async (req) => {
        const q = new URL(req.url).searchParams;
        await new Promise((r) => setTimeout(r, Number(q.get("delay") ?? 0)));
        return answer("scripted", req, Number(q.get("status") ?? 200));
      });
      const tls = serve({ cert: pki.backend.certPem, key: pki.backend.keyPem }, (req) => answer("tls-backend", req));
      // oauth2-proxy's /oauth2/auth: 202 with the user for the cookie session=ok, without one for
      // session=ok-anonymous, else 401
      const auth = serve({ hostname: AUTH_ADDRESS, port: 4180 }, (req) => {
        const cookie = req.headers.get("cookie") ?? "";
        if (cookie.includes("session=ok-anonymous")) return new Response(null, { status: 202 });
        if (cookie.includes("session=ok")) {
          return new Response(null, { status: 202, headers: { "X-Auth-Request-User": "alice" } });
        }
        return new Response("Unauthorized", { status: 401 });
      });
      cleanup.push(scripted, tls, auth);
      const ports: Ports = {
        web: web.port,
        canary: canary.port,
        fallback: fallback.port,
        scripted: scripted.port,
        tls: tls.port,
        clusterIp: clusterIp.port,
      };

      // one Ingress (with its main one, for a canary) per case that traffic shows, as the controller translates it
      const keys = Object.keys(CONVERTERS).filter((k) => CASES[k]?.traffic);
      const ingresses = keys.flatMap((key) => [
        ...caseIngresses(key, CASES[key].variants[0].nginx),
        ...moreIngresses(key),
      ]).map((ing) => ({
        ...ing,
        metadata: {
          ...ing.metadata,
          annotations: { ...ing.metadata!.annotations, ...compatIngress(ing).annotations },
        },
      }));
      const world = caseWorld(ports, pki);
      const { model, problems } = buildModel({
        ingresses,
        lookup: lookupFromLists(world),
        allowLoopbackEndpoints: true,
      });
      const data = configMapData(render(model, await loadTemplates(null)));
      const warnings: string[] = [];
      const contents = secretContents(
        parseSecretRefs(data["secrets.json"]),
        (ref) =>
          world.secrets.find((s) => s.metadata!.namespace === ref.namespace && s.metadata!.name === ref.name) ??
            null,
        (id, reason) => warnings.push(`${id}: ${reason}`),
      );
      assert.deepEqual(
        [...problems.map((p) => p.message), ...warnings].sort(),
        keys.flatMap((key) => CASES[key].moreProblems ?? []).sort(),
      );
      if ("waiting" in contents) throw new Error(`a Secret is missing: ${JSON.stringify(contents.waiting)}`);
      await using proxy = await proxyUnderTest();
      const applied = await proxy.applier.apply({
        config: data["haproxy.cfg"],
        crtList: data["crt-list"],
        maps: new Map(MAP_FILES.map((f) => [f, data[f]])),
        ...contents,
      });
      assert.ok(applied.ok, JSON.stringify(applied));

      await Deno.writeTextFile(join(dir, "site-ca.pem"), pki.siteCa);
      await Deno.writeTextFile(join(dir, "backend-ca.pem"), pki.backendCa);
      const caFile = (pem: string | undefined) => join(dir, pem === pki.backendCa ? "backend-ca.pem" : "site-ca.pem");
      const connectTo = (host: string, https: boolean) =>
        `${host}:${https ? 443 : 80}:${proxy.bind}:${https ? proxy.httpsPort : proxy.httpPort}`;
      const askFor = (caseHost: string): Ask => {
        const ask = (path: string, opts: RequestOptions = {}): Promise<Reply> => {
          const host = opts.host ?? caseHost;
          const https = opts.https ?? false;
          return curlReply([
            "--cacert",
            caFile(opts.caPem),
            "--connect-to",
            connectTo(host, https),
            ...(opts.args ?? []),
            `${https ? "https" : "http"}://${host}${path}`,
          ], join(dir, "body"));
        };
        // one curl, one kept-alive connection, the requests one after the other
        const statuses = async (path: string, n: number) => {
          const url = `http://${caseHost}${path}`;
          const out = await new Deno.Command("curl", {
            args: [
              "-sS",
              "--max-time",
              "20",
              "--connect-to",
              connectTo(caseHost, false),
              "-w",
              "%{http_code}\\n",
              ...Array.from({ length: n }, () => ["-o", "/dev/null", url]).flat(),
            ],
            stdout: "piped",
            stderr: "piped",
          }).output();
          assert.ok(out.success, new TextDecoder().decode(out.stderr));
          return new TextDecoder().decode(out.stdout).trim().split("\n").map(Number);
        };
        return Object.assign(ask, { statuses });
      };

      for (const key of keys) {
        await t.step(key, () => CASES[key].traffic!(askFor(hostOf(key)), hostOf(key), pki));
      }
    } finally {
      for (const c of cleanup.reverse()) await c[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
