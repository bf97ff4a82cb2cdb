/**
 * The images `deno task images` builds, each run through its real entrypoint with runc (no node
 * needed): the echo backend answers with its pod name and the path; pause runs until SIGTERM and
 * exits 0; the controller image runs the program (`version`) and carries a working haproxy (for
 * `haproxy -c`); the proxy image runs `proxy` against a real kube-apiserver, reads its ConfigMap
 * with a user allowed to read only that ConfigMap, and serves traffic to a backend through HAProxy;
 * echo-basic carries every name the conformance suite's manifests use and answers with the JSON
 * the suite reads (pod, namespace, host, path); CoreDNS serves a Corefile.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { buildImages, type BuiltImage, type ImageName } from "../../../lib/dev/images/build.ts";
import { echoBasicRefs, imageRefs, normalizedRef } from "../../../lib/dev/images/refs.ts";
import { runImage } from "../../../lib/dev/localenv/container.ts";
import { startControlPlane } from "../../../lib/dev/localenv/control_plane.ts";
import { startBackend } from "../../../lib/dev/localenv/backend.ts";
import { freePort, freePorts } from "../../../lib/dev/localenv/ports.ts";
import { eventually } from "../../../lib/dev/localenv/harness.ts";
import { buildConfig, get, loopbackAddress, proxyConfigMap, proxyReader } from "../../proxy/fixtures.ts";

// runc runs containers as root here (the README's commands run as root on CI).
const ignore = Deno.uid() !== 0;

let built: Promise<{ dir: string; images: Map<ImageName, BuiltImage> }> | null = null;
/** The images, built once for this file into a temporary directory. */
function images() {
  built ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "ic-images-test-" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    const list = await buildImages(dir, () => {});
    return { dir, images: new Map(list.map((b) => [b.name, b])) };
  })();
  return built;
}
async function archive(name: ImageName): Promise<string> {
  const b = (await images()).images.get(name);
  assert.ok(b, `image ${name} was not built`);
  return b.archive;
}

Deno.test("deno task images writes one docker archive per image, named after the option table's defaults", async () => {
  const { images: all } = await images();
  const refs = imageRefs("A");
  assert.deepEqual(
    [...all.values()].map((b) => [b.name, b.ref, b.archive.endsWith(`/${b.name}.tar`)]),
    [
      ["ingress-controller", refs.controller, true],
      ["haproxy", refs.proxy, true],
      ["echo", "ingress-controller-test/echo:dev", true],
      ["pause", refs.pause, true],
      ["echo-basic", "registry.k8s.io/gateway-api/echo-basic:v1.5.1", true],
      ["coredns", "registry.k8s.io/coredns/coredns:v1.12.2", true],
    ],
  );
  assert.match(refs.controller, /^docker\.io\/ingresscontroller\/ingress-controller:9\.0\.0$/);
  assert.match(refs.proxy, /^docker\.io\/ingresscontroller\/haproxy:1\.9\.2-9\.0\.0-alpine$/);
  for (const b of all.values()) {
    const manifest = new TextDecoder().decode(
      (await new Deno.Command("tar", { args: ["-xOf", b.archive, "manifest.json"], stdout: "piped" }).output()).stdout,
    );
    assert.deepEqual(JSON.parse(manifest)[0].RepoTags, [b.ref, ...b.moreRefs].map(normalizedRef), b.name);
  }
});

Deno.test({ name: "the echo image answers every request on 8080 with its pod name and the path", ignore }, async () => {
  const port = freePort("127.0.0.1");
  await using c = await runImage(await archive("echo"), { env: { POD_NAME: "echo-7f9c-abcde", PORT: String(port) } });
  const body = await eventually("the echo container to answer", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/some/path?q=1`);
    return await res.json();
  });
  assert.equal(body.pod, "echo-7f9c-abcde");
  assert.equal(body.path, "/some/path?q=1");
  assert.equal(body.method, "GET");
  assert.ok(!c.process.hasExited);
});

Deno.test("echo-basic carries every name the conformance suite's manifests give it", async () => {
  const b = (await images()).images.get("echo-basic")!;
  assert.deepEqual([b.ref, ...b.moreRefs], [...echoBasicRefs]);
  const manifests = await suiteManifestImages();
  for (const ref of manifests.filter((r) => r.includes("/echo-basic:"))) {
    assert.ok(echoBasicRefs.includes(ref as typeof echoBasicRefs[number]), `${ref} is not built`);
  }
  assert.ok(manifests.includes("registry.k8s.io/coredns/coredns:v1.12.2"));
});

Deno.test(
  { name: "echo-basic answers with the pod name, namespace, host and path (the suite's echo JSON)", ignore },
  async () => {
    const [port, h2cPort] = freePorts(2, "127.0.0.1");
    await using c = await runImage(await archive("echo-basic"), {
      env: {
        POD_NAME: "infra-backend-v1-abc",
        NAMESPACE: "gateway-conformance-infra",
        HTTP_PORT: String(port),
        H2C_PORT: String(h2cPort),
      },
    });
    const body = await eventually("the echo-basic container to answer", async () => {
      if (c.process.hasExited) throw new Error(`echo-basic exited: ${await c.output()}`);
      // node:http, since fetch() does not send a Host header of the caller's.
      return JSON.parse(await getWithHost(`http://127.0.0.1:${port}/some/path?q=1`, "example.org"));
    });
    assert.equal(body.pod, "infra-backend-v1-abc");
    assert.equal(body.namespace, "gateway-conformance-infra");
    assert.equal(body.host, "example.org");
    assert.equal(body.path, "/some/path?q=1");
  },
);

Deno.test({ name: "the CoreDNS image serves a Corefile (whoami answers a query)", ignore }, async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-coredns-test-" });
  try {
    const port = freePort("127.0.0.1");
    await Deno.writeTextFile(`${dir}/Corefile`, `example.test:${port} {\n  bind 127.0.0.1\n  whoami\n}\n`);
    await using c = await runImage(await archive("coredns"), {
      args: ["-conf", "/etc/coredns/Corefile"],
      mounts: [{ source: `${dir}/Corefile`, destination: "/etc/coredns/Corefile" }],
    });
    const answer = await eventually("CoreDNS to answer", async () => {
      if (c.process.hasExited) throw new Error(`coredns exited: ${await c.output()}`);
      return await Deno.resolveDns("example.test", "A", { nameServer: { ipAddr: "127.0.0.1", port } });
    });
    assert.deepEqual(answer, ["127.0.0.1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function getWithHost(url: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => body += c);
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
  });
}

/** Every image the conformance suite's manifests name (from the pinned module's source). */
async function suiteManifestImages(): Promise<string[]> {
  const dir = await gatewayModuleDir("sigs.k8s.io/gateway-api/conformance");
  const out = new Set<string>();
  for (const sub of ["base", "tests"]) {
    for await (const e of Deno.readDir(`${dir}/${sub}`)) {
      if (!e.name.endsWith(".yaml")) continue;
      for (const m of (await Deno.readTextFile(`${dir}/${sub}/${e.name}`)).matchAll(/image:\s*(\S+)/g)) out.add(m[1]);
    }
  }
  return [...out].sort();
}

async function gatewayModuleDir(module: string): Promise<string> {
  const out = await new Deno.Command("go", {
    args: ["list", "-m", "-f", "{{.Dir}}", module],
    cwd: new URL("../../../lib/dev/localenv/go/gateway-api", import.meta.url).pathname,
    env: { GOFLAGS: "-mod=mod" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test({ name: "the pause image runs until SIGTERM and then exits 0", ignore }, async () => {
  const c = await runImage(await archive("pause"), { ownNetwork: true });
  try {
    await eventually("the pause container to run", async () => {
      const out = await new Deno.Command("runc", { args: ["state", c.id], stdout: "piped", stderr: "null" }).output();
      return out.success && JSON.parse(new TextDecoder().decode(out.stdout)).status === "running" ? true : undefined;
    });
    // SIGTERM before pause has installed its handler would end it with 2: wait for its word.
    await eventually("pause to be ready for SIGTERM", async () => /pause: ready/.test(await c.output()) || undefined);
    assert.ok(!c.process.hasExited, `pause exited: ${await c.output()}`);
  } finally {
    const status = await c.stop();
    assert.equal(status.code, 0, await c.output());
  }
});

Deno.test({
  name: "the controller image runs the program (version, the exporter sidecar) and carries Debian's HAProxy 2.6",
  ignore,
}, async () => {
  const ctl = await archive("ingress-controller");
  const version = await runImage(ctl, { args: ["version"], ownNetwork: true });
  assert.equal((await version.exited).code, 0, await version.output());
  assert.match(await version.output(), /release A, version 9\.0\.0/);
  await version.stop();

  // The exporter sidecar for real (prom-client from the image's own Deno cache): with no HAProxy
  // behind its scrape URI it still answers, with haproxy_up 0.
  const [metricsPort, deadPort] = freePorts(2, "127.0.0.1");
  await using exporter = await runImage(ctl, {
    args: [
      "exporter",
      `--listen-address=127.0.0.1:${metricsPort}`,
      `--proxy.scrape-uri=http://127.0.0.1:${deadPort}/;csv`,
      "--proxy.timeout=1s",
    ],
  });
  const metrics = await eventually("the exporter's metrics", async () => {
    if (exporter.process.hasExited) throw new Error(`the exporter exited: ${await exporter.output()}`);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    return res.ok ? await res.text() : void await res.body?.cancel();
  }, 60_000);
  assert.match(metrics, /^haproxy_up 0$/m);

  const haproxy = await runImage(ctl, { argv: ["/usr/sbin/haproxy", "-v"], ownNetwork: true });
  assert.equal((await haproxy.exited).code, 0, await haproxy.output());
  assert.match(await haproxy.output(), /HAProxy version 2\.6\./);
  await haproxy.stop();
});

Deno.test({
  name: "the proxy image runs `proxy`: reads its ConfigMap through the API and serves traffic through HAProxy",
  ignore,
}, async () => {
  const NS = "image-proxy";
  const CM = "web-proxy";
  await using cp = await startControlPlane();
  await using backend = await startBackend({ name: "one", host: loopbackAddress() });
  const api = async (path: string, body: unknown) => {
    const res = await cp.adminFetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `POST ${path}: ${res.status} ${text}`);
  };
  await api("/api/v1/namespaces", { metadata: { name: NS } });
  await api(
    `/api/v1/namespaces/${NS}/configmaps`,
    proxyConfigMap({
      "haproxy.cfg": buildConfig({ backends: [{ name: "web", endpoints: [backend] }] }),
      "crt-list": "",
      "secrets.json": "[]",
    }, { name: CM, namespace: NS }),
  );
  const kubeconfig = await proxyReader(cp, NS, { configmap: CM });
  const bind = loopbackAddress();
  const [httpPort, httpsPort, statsPort] = freePorts(3, bind);
  await using proxy = await runImage(await archive("haproxy"), {
    args: [
      "proxy",
      "--kubeconfig=/etc/ic/kubeconfig",
      `--namespace=${NS}`,
      `--configmap=${CM}`,
      `--bind-address=${bind}`,
      `--http-port=${httpPort}`,
      `--https-port=${httpsPort}`,
      `--stats-port=${statsPort}`,
      "--work-dir=/tmp/proxy",
    ],
    mounts: [{ source: kubeconfig, destination: "/etc/ic/kubeconfig" }],
  });
  const answer = await eventually("traffic through the proxy container", async () => {
    if (proxy.process.hasExited) throw new Error(`the proxy container exited: ${await proxy.output()}`);
    const a = await get(`http://${bind}:${httpPort}/hello`, "web.test");
    return a.status === 200 ? a : undefined;
  });
  assert.equal(answer.name, "one");
  assert.equal(JSON.parse(answer.body).path, "/hello");
  assert.match(await proxy.output(), /proxy starting namespace="image-proxy"/);
});

Deno.test("image names follow the option table of the chosen release", () => {
  assert.deepEqual(imageRefs("B"), {
    controller: "docker.io/ingresscontroller/ingress-controller:7.0.0-rc.2",
    proxy: "docker.io/ingresscontroller/haproxy:1.8.8-7.0.0-rc.2-alpine",
    echo: "ingress-controller-test/echo:dev",
    pause: "ingress-controller-test/pause:dev",
  });
  assert.equal(normalizedRef("ingress-controller-test/pause:dev"), "docker.io/ingress-controller-test/pause:dev");
  assert.equal(normalizedRef("busybox"), "docker.io/library/busybox:latest");
  assert.equal(normalizedRef("localhost:5000/x/y:1"), "localhost:5000/x/y:1");
});
