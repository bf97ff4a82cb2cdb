/**
 * @module lib/dev/images/build
 * Builds the project's images from nothing (no base image, no registry): the controller, the
 * proxy, the end-to-end tests' echo backend and the node's pause image, one docker archive each
 * in `dist/images/<name>.tar`.
 *
 * The controller and the proxy share their two layers and differ only in their default command:
 * - runtime: Deno (the very binary running this build) and Debian's haproxy (`run` validates
 *   configurations with `haproxy -c`; `proxy` runs it), the shared libraries `ldd` names for
 *   them, a minimal /etc and /tmp;
 * - app: the program's own modules (the module graph of main.ts, as `deno info` lists it), its
 *   templates, deno.json and deno.lock, and a Deno cache holding exactly the npm packages of that
 *   graph (without type declarations and source maps), so the entrypoint
 *   `deno run -A --cached-only --no-code-cache /app/main.ts` never fetches anything.
 * The echo backend and pause are static Go programs of our own (lib/dev/localenv/go/{echo,pause}).
 * For the Gateway API conformance suite (`deno task conformance`): its echo backend, echo-basic
 * (built from the suite's Go module, one image under every name the suite uses), and CoreDNS (built
 * from its Go module), both static (lib/dev/localenv/go/{gateway-api,coredns}).
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Release } from "../../flags/table.ts";
import { buildBinaries } from "../localenv/binaries.ts";
import { ensureHaproxy } from "../localenv/haproxy.ts";
import { type ImageConfig, imageTools, layerTar, writeImage } from "./oci.ts";
import { corednsRef, echoBasicRefs, imageRefs } from "./refs.ts";
import { copyTopLevelLinks, installBinary, writeSystemFiles } from "./rootfs.ts";

/** The repository's root directory. */
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The archive names (`dist/images/<name>.tar`). */
export const imageNames = ["ingress-controller", "haproxy", "echo", "pause", "echo-basic", "coredns"] as const;
export type ImageName = typeof imageNames[number];

export interface BuiltImage {
  name: ImageName;
  ref: string;
  /** The image's other names (echo-basic's further tags). */
  moreRefs: readonly string[];
  archive: string;
  /** Size of the archive (uncompressed layers). */
  bytes: number;
}

/** Where the program and its Deno cache live inside the controller and proxy images. */
const appDir = "/app";
const denoDir = `${appDir}/deno-dir`;
/**
 * `--no-code-cache`: Deno's V8 code cache is an SQLite file it maps into memory (5 MB of the
 * controller's RSS at 10,000 Ingresses, docs/controller-scale.md) and writes to, in a cache the
 * image keeps read-only; compiling the program's modules at start costs less than that.
 */
const programEntrypoint = [
  "/usr/bin/deno",
  "run",
  "-A",
  "--cached-only",
  "--no-code-cache",
  `--config=${appDir}/deno.json`,
  `${appDir}/main.ts`,
];
const programEnv = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  `DENO_DIR=${denoDir}`,
  "DENO_NO_UPDATE_CHECK=1",
  "DENO_NO_PROMPT=1",
];

/**
 * Builds every image into `outDir` (default `dist/images`), tagged for `release` (default A);
 * progress lines go to `say`.
 */
export async function buildImages(
  outDir = join(repoRoot, "dist/images"),
  say: (line: string) => void = (l) => console.error(l),
  release: Release = "A",
): Promise<BuiltImage[]> {
  const t0 = performance.now();
  const lap = (what: string) => say(`[images] ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  await imageTools();
  const haproxy = await ensureHaproxy();
  const bin = await buildBinaries(["echo", "pause"]);
  const gatewayBin = await buildBinaries(["echo-basic", "coredns"]);
  lap("tools and Go programs ready");
  await Deno.mkdir(outDir, { recursive: true });
  const work = await Deno.makeTempDir({ prefix: "ic-images-" });
  try {
    const layer = async (name: string, fill: (root: string) => Promise<void>) => {
      const root = join(work, name);
      await Deno.mkdir(root, { recursive: true });
      await fill(root);
      const tar = join(work, `${name}.tar`);
      await layerTar(root, tar);
      await Deno.remove(root, { recursive: true });
      lap(`layer ${name}: ${mib((await Deno.stat(tar)).size)}`);
      return tar;
    };
    const runtime = await layer("runtime", async (root) => {
      await copyTopLevelLinks(root);
      await writeSystemFiles(root);
      await installBinary(root, Deno.execPath(), "/usr/bin/deno");
      await installBinary(root, haproxy, "/usr/sbin/haproxy");
    });
    const app = await layer("app", (root) => stageApp(join(root, appDir.slice(1))));
    const echo = await layer("echo", async (root) => {
      await installBinary(root, join(bin, "echo"), "/echo");
    });
    const pause = await layer("pause", async (root) => {
      await installBinary(root, join(bin, "pause"), "/pause");
    });
    const echoBasic = await layer("echo-basic", async (root) => {
      await installBinary(root, join(gatewayBin, "echo-basic"), "/echo-basic");
    });
    const coredns = await layer("coredns", async (root) => {
      await writeSystemFiles(root);
      await installBinary(root, join(gatewayBin, "coredns"), "/coredns");
    });

    const refs = imageRefs(release);
    const plan: [ImageName, string[], ImageConfig][] = [
      ["ingress-controller", [runtime, app], {
        ref: refs.controller,
        entrypoint: programEntrypoint,
        cmd: ["run"],
        env: programEnv,
        ports: [56790],
        workdir: appDir,
      }],
      ["haproxy", [runtime, app], {
        ref: refs.proxy,
        entrypoint: programEntrypoint,
        cmd: ["proxy"],
        env: programEnv,
        ports: [80, 443],
        workdir: appDir,
      }],
      ["echo", [echo], { ref: refs.echo, entrypoint: ["/echo"], ports: [8080], user: "65534:65534" }],
      ["pause", [pause], { ref: refs.pause, entrypoint: ["/pause"], user: "65534:65534" }],
      // As upstream's image: distroless nonroot (65532), listening on 3000 (HTTP), 3001 (h2c), 8443 (HTTPS).
      ["echo-basic", [echoBasic], {
        ref: echoBasicRefs[0],
        moreRefs: echoBasicRefs.slice(1),
        entrypoint: ["/echo-basic"],
        ports: [3000, 3001, 8443],
        user: "65532:65532",
      }],
      // Root, unlike upstream's nonroot image: upstream binds port 53 through a file capability
      // (setcap), which a layer of ours does not carry; pods drop every capability but
      // NET_BIND_SERVICE (as the suite's manifest and a kube-system CoreDNS do).
      ["coredns", [coredns], { ref: corednsRef, entrypoint: ["/coredns"], ports: [53] }],
    ];
    const built: BuiltImage[] = [];
    for (const [name, layers, config] of plan) {
      const archive = join(outDir, `${name}.tar`);
      await writeImage(join(work, `image-${name}`), layers, config, archive);
      const bytes = (await Deno.stat(archive)).size;
      built.push({ name, ref: config.ref, moreRefs: config.moreRefs ?? [], archive, bytes });
      lap(`${name}: ${config.ref} → ${relative(Deno.cwd(), archive) || archive}, ${mib(bytes)}`);
    }
    return built;
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

export interface DenoInfo {
  modules: { specifier: string }[];
  npmPackages: Record<string, { name: string; version: string; localPath?: string }>;
}

/**
 * Modules the program starts as Web Workers (`new Worker(new URL(…, import.meta.url))`): not in main.ts's
 * static module graph, so staged with their own (compile.sh `--include`s them likewise).
 * tests/dev/images/worker_modules_test.ts fails when a worker module is missing here.
 */
export const WORKER_MODULES = ["lib/admission/review_worker.ts"];

/** The module graphs of main.ts and the worker modules: their files and npm packages. */
export async function programGraph(deno = Deno.execPath()): Promise<DenoInfo> {
  const graph: DenoInfo = { modules: [], npmPackages: {} };
  const seen = new Set<string>();
  for (const entry of ["main.ts", ...WORKER_MODULES]) {
    const path = join(repoRoot, entry);
    // Fill the machine's Deno cache first (outside any private network namespace: it fetches from npm).
    await run(deno, ["cache", "--quiet", path], repoRoot);
    const info = JSON.parse(await run(deno, ["info", "--json", path], repoRoot)) as DenoInfo;
    for (const m of info.modules) {
      if (seen.has(m.specifier)) continue;
      seen.add(m.specifier);
      graph.modules.push(m);
    }
    Object.assign(graph.npmPackages, info.npmPackages);
  }
  return graph;
}

/** Copies the program (module graph of main.ts, templates, deno.json, deno.lock) and its npm cache into `dest`. */
async function stageApp(dest: string): Promise<void> {
  const deno = Deno.execPath();
  const info = await programGraph(deno);
  const files = info.modules.map((m) => m.specifier).filter((s) => s.startsWith("file:")).map((s) => fileURLToPath(s));
  for (const f of [...files, join(repoRoot, "deno.json"), join(repoRoot, "deno.lock")]) {
    const rel = relative(repoRoot, f);
    if (rel.startsWith("..")) throw new Error(`main.ts imports ${f}, outside the repository`);
    await Deno.mkdir(dirname(join(dest, rel)), { recursive: true });
    await Deno.copyFile(f, join(dest, rel));
  }
  await run("cp", ["-a", join(repoRoot, "templates"), join(dest, "templates")], repoRoot);
  const npmRoot = join(dest, "deno-dir/npm/registry.npmjs.org");
  for (const pkg of Object.values(info.npmPackages)) {
    if (!pkg.localPath) throw new Error(`deno info names no cache directory for npm package ${pkg.name}`);
    const target = join(npmRoot, pkg.name, pkg.version);
    await Deno.mkdir(dirname(target), { recursive: true });
    await run("cp", ["-a", pkg.localPath, target], repoRoot);
    await Deno.copyFile(join(dirname(pkg.localPath), "registry.json"), join(dirname(target), "registry.json"))
      .catch(() => {});
  }
  // Type declarations, source maps and documents are never loaded by `deno run`.
  await run("find", [
    npmRoot,
    "-type",
    "f",
    "(",
    ...["*.d.ts", "*.d.mts", "*.d.cts", "*.map", "*.md"].flatMap((p, i) => i ? ["-o", "-name", p] : ["-name", p]),
    ")",
    "-delete",
  ], repoRoot);
  // The staged program must start from its own cache alone, as it will in the image.
  await run(
    deno,
    ["run", "-A", "--cached-only", `--config=${join(dest, "deno.json")}`, join(dest, "main.ts"), "version"],
    dest,
    {
      DENO_DIR: join(dest, "deno-dir"),
    },
  );
}

async function run(command: string, args: string[], cwd: string, env?: Record<string, string>): Promise<string> {
  const out = await new Deno.Command(command, { args, cwd, env, stdin: "null", stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(
      `${command} ${args.join(" ")} failed (exit ${out.code}): ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  return new TextDecoder().decode(out.stdout);
}
