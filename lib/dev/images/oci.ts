/**
 * @module lib/dev/images/oci
 * Writing images with Debian's image tools instead of by hand: each layer is a reproducible tar
 * of a directory (GNU tar, sorted, owner 0, mtime 0); `umoci` assembles the OCI image (layers and
 * config: entrypoint, command, environment, ports, user) and `skopeo` exports it as a docker
 * archive carrying its full name, which `ctr images import`, `docker load` and `podman load` all
 * accept as it is. No base image is pulled: every image starts empty. See docs/images.md.
 */
import { join } from "node:path";
import { ensureTools } from "../localenv/debian.ts";

/** How an image is run. */
export interface ImageConfig {
  /** Full reference written into the archive, e.g. `docker.io/ingresscontroller/haproxy:1.9.2`. */
  ref: string;
  /** More names for the same image, written into the archive too (each imported under its name). */
  moreRefs?: readonly string[];
  entrypoint: string[];
  cmd?: string[];
  env?: string[];
  /** TCP ports the image listens on. */
  ports?: number[];
  /** `uid[:gid]`; default root. */
  user?: string;
  workdir?: string;
}

/** Paths of tar, umoci and skopeo, installing Debian's packages when missing (as root). */
export function imageTools(): Promise<string[]> {
  return ensureTools([
    { command: "tar", package: "tar" },
    { command: "umoci", package: "umoci" },
    { command: "skopeo", package: "skopeo" },
  ], "building the images");
}

const epoch = "1970-01-01T00:00:00Z";

/** Writes `dir`'s contents as an uncompressed, reproducible layer tar at `out`. */
export async function layerTar(dir: string, out: string): Promise<void> {
  await run("tar", [
    "--sort=name",
    "--mtime=@0",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--format=posix",
    "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
    "-C",
    dir,
    "-cf",
    out,
    ".",
  ]);
}

/**
 * Assembles an image from layer tars (bottom first) in the OCI layout `work` (created when
 * missing) and writes it to `archive` as a docker archive named `config.ref`.
 */
export async function writeImage(work: string, layers: string[], config: ImageConfig, archive: string): Promise<void> {
  const layout = join(work, "oci");
  const image = `${layout}:image`;
  await Deno.remove(layout, { recursive: true }).catch(() => {});
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", image]);
  for (const layer of layers) {
    await run("umoci", ["raw", "add-layer", "--history.created", epoch, "--image", image, layer]);
  }
  const args = ["config", "--image", image, "--created", epoch, "--history.created", epoch];
  args.push("--os", "linux", "--architecture", "amd64");
  for (const e of config.entrypoint) args.push("--config.entrypoint", e);
  for (const c of config.cmd ?? []) args.push("--config.cmd", c);
  for (const e of config.env ?? []) args.push("--config.env", e);
  for (const p of config.ports ?? []) args.push("--config.exposedports", `${p}/tcp`);
  if (config.user) args.push("--config.user", config.user);
  if (config.workdir) args.push("--config.workingdir", config.workdir);
  await run("umoci", args);
  await Deno.remove(archive).catch(() => {});
  await run("skopeo", [
    "--insecure-policy",
    "copy",
    "--quiet",
    ...(config.moreRefs ?? []).flatMap((r) => ["--additional-tag", r]),
    `oci:${image}`,
    `docker-archive:${archive}:${config.ref}`,
  ]);
  await Deno.remove(layout, { recursive: true });
}

async function run(command: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(command, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr).trim() || new TextDecoder().decode(out.stdout).trim();
    throw new Error(`${command} ${args.slice(0, 3).join(" ")} … failed (exit ${out.code}): ${text}`);
  }
}
