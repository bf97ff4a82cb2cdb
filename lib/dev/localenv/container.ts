/**
 * @module lib/dev/localenv/container
 * Runs an image archive (`dist/images/*.tar`) as a container with Debian's tools, for tests that
 * must run an image's real entrypoint without a node: `skopeo` turns the archive into an OCI
 * layout, `umoci unpack` makes a runtime bundle whose config.json carries the image's entrypoint,
 * command, environment, user and working directory, and `runc` runs it. The container shares
 * the host's network namespace (so it reaches loopback servers and tests reach it) unless asked
 * otherwise. `stop()` deletes it; if Deno dies, the process reaper deletes it (`runc delete -f`).
 */
import { join } from "node:path";
import { ensureTools } from "./debian.ts";
import { type ManagedProcess, spawnProcess } from "./process.ts";

export interface RunImageOptions {
  /** Replaces the image's command (the arguments after its entrypoint). */
  args?: string[];
  /** Replaces entrypoint and command together. */
  argv?: string[];
  /** Added to the image's environment. */
  env?: Record<string, string>;
  /** Host directories or files to bind-mount: source → destination in the container. */
  mounts?: { source: string; destination: string }[];
  /** Keep the container in its own network namespace (default: the host's). */
  ownNetwork?: boolean;
}

export interface Container extends AsyncDisposable {
  readonly id: string;
  readonly process: ManagedProcess;
  /** Resolves with the container's exit status. */
  readonly exited: Promise<Deno.CommandStatus>;
  /** stdout and stderr so far. */
  output(): Promise<string>;
  /** Stops (SIGTERM, then SIGKILL) and deletes the container and its bundle. Idempotent. */
  stop(): Promise<Deno.CommandStatus>;
}

/** Unpacks `archive` into a runc bundle under `dir`; returns the bundle directory. */
export async function unpackImage(archive: string, dir: string): Promise<string> {
  await ensureTools([
    { command: "skopeo", package: "skopeo" },
    { command: "umoci", package: "umoci" },
    { command: "runc", package: "runc" },
  ], "running an image");
  const layout = join(dir, "oci");
  const bundle = join(dir, "bundle");
  await run("skopeo", ["--insecure-policy", "copy", "--quiet", `docker-archive:${archive}`, `oci:${layout}:image`]);
  await run("umoci", ["unpack", "--image", `${layout}:image`, bundle]);
  await Deno.remove(layout, { recursive: true });
  return bundle;
}

/** Runs the image in `archive` with runc until it exits or `stop()` is called. */
export async function runImage(archive: string, opts: RunImageOptions = {}): Promise<Container> {
  const dir = await Deno.makeTempDir({ prefix: "ic-container-" });
  try {
    const bundle = await unpackImage(archive, dir);
    const configPath = join(bundle, "config.json");
    const config = JSON.parse(await Deno.readTextFile(configPath));
    config.process.terminal = false;
    if (opts.argv) config.process.args = opts.argv;
    else if (opts.args) config.process.args = [...await entrypointOf(archive), ...opts.args];
    config.process.env = [...config.process.env, ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`)];
    if (!opts.ownNetwork) {
      config.linux.namespaces = config.linux.namespaces.filter((n: { type: string }) => n.type !== "network");
    }
    for (const m of opts.mounts ?? []) {
      config.mounts.push({ destination: m.destination, type: "bind", source: m.source, options: ["rbind", "ro"] });
    }
    await Deno.writeTextFile(configPath, JSON.stringify(config));
    // Test files run as workers of one process: the pid and a module counter are not unique.
    const id = `ic-test-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
    const proc = await spawnProcess({
      name: `container ${id}`,
      command: "runc",
      args: ["run", "--bundle", bundle, id],
      logPath: join(dir, "output.log"),
      removeOnOrphan: dir,
      cleanupOnOrphan: `runc delete -f ${id}`,
    });
    let stopping: Promise<Deno.CommandStatus> | null = null;
    const stop = () =>
      stopping ??= (async () => {
        const status = await proc.stop();
        await new Deno.Command("runc", { args: ["delete", "-f", id], stdout: "null", stderr: "null" }).output();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        return status;
      })();
    return {
      id,
      process: proc,
      exited: proc.exited,
      output: () => Deno.readTextFile(proc.logPath).catch(() => ""),
      stop,
      [Symbol.asyncDispose]: async () => void await stop(),
    };
  } catch (err) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
}

/** The image's entrypoint, from its config (`skopeo inspect --config`). */
async function entrypointOf(archive: string): Promise<string[]> {
  const out = await run("skopeo", ["inspect", "--config", `docker-archive:${archive}`]);
  return (JSON.parse(out) as { config?: { Entrypoint?: string[] } }).config?.Entrypoint ?? [];
}

async function run(command: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(command, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${command} ${args[0]} failed (exit ${out.code}): ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return new TextDecoder().decode(out.stdout);
}
