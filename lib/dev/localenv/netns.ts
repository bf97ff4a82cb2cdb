/**
 * @module lib/dev/localenv/netns
 * A private network namespace for the local demo, the end-to-end tests and the benchmarks.
 * Why: the API server refuses loopback addresses (127.0.0.0/8, ::1) in EndpointSlices, yet the
 * sample backends must stay on the loopback interface. In a namespace of our own (`unshare -rn`,
 * no privileges needed) the loopback interface also carries `privateSubnet`, an address range
 * the API server accepts and that no packet can ever leave: the namespace has no other interface.
 * Nothing inside can reach a registry either, so `prepareOutside` gets everything first.
 */
import { ensureBinaries } from "./binaries.ts";
import { ensureTools } from "./debian.ts";
import { ensureHaproxy } from "./haproxy.ts";

/** The range put on the namespace's loopback interface; backends listen on its addresses. */
export const privateSubnet = "10.255.255";
const marker = "IC_PRIVATE_NETNS";

/**
 * With `resolver`, the namespace's /etc/resolv.conf names only this address, where a test's DNS
 * server (lib/dev/localenv/dns.ts) answers.
 */
export const dnsAddress = `${privateSubnet}.53`;

/** Whether this process runs inside the private namespace (set up by `privateNetworkCommand`). */
export function inPrivateNetwork(): boolean {
  return Deno.env.get(marker) === "1";
}

/** An address of the private range, `n` in 2..254. */
export function privateAddress(n: number): string {
  if (!Number.isInteger(n) || n < 2 || n > 254) throw new RangeError(`private address index ${n} is not in 2..254`);
  return `${privateSubnet}.${n}`;
}

/**
 * A command that runs `args` (a program and its arguments) in a new user + network namespace
 * whose loopback interface is up and also carries `${privateSubnet}.0/24`.
 */
export function privateNetworkCommand(
  args: readonly string[],
  opts: {
    stdout?: "inherit" | "piped" | "null";
    stderr?: "inherit" | "piped" | "null";
    stdin?: "null" | "piped";
    env?: Record<string, string>;
    /** In a session of its own: a terminal's Ctrl-C reaches the caller only, which stops it in order. */
    detached?: boolean;
    /**
     * In a mount namespace too, whose /etc/resolv.conf names only {@link dnsAddress}: names resolve
     * through the test's DNS server (lib/dev/localenv/dns.ts), as HAProxy's resolvers read that file.
     */
    resolver?: boolean;
  } = {},
): Deno.Command {
  // The bind mount's source is removed at once: the mount keeps the file, nothing is left in /tmp.
  const resolver = opts.resolver
    ? `f=$(mktemp) && printf 'nameserver ${dnsAddress}\\n' > "$f" && mount --bind "$f" /etc/resolv.conf && rm "$f" && `
    : "";
  const setup = `${resolver}ip link set lo up && ip addr add ${privateSubnet}.1/24 dev lo && exec "$@"`;
  return new Deno.Command("unshare", {
    args: [
      "--user",
      "--map-root-user",
      "--net",
      ...(opts.resolver ? ["--mount"] : []),
      "--",
      "sh",
      "-c",
      setup,
      "sh",
      ...args,
    ],
    stdin: opts.stdin ?? "null",
    stdout: opts.stdout ?? "inherit",
    stderr: opts.stderr ?? "inherit",
    env: { ...opts.env, [marker]: "1" },
    detached: opts.detached ?? false,
  });
}

/**
 * Everything a program run inside the namespace needs from outside, fetched before entering it
 * (inside, no registry can be reached): unshare and ip, kube-apiserver and etcd (built from their
 * Go modules), haproxy (Debian), and the npm and remote modules of `entry` (`deno cache`).
 */
export async function prepareOutside(entry: string): Promise<void> {
  await ensureTools([
    { command: "unshare", package: "util-linux" },
    { command: "ip", package: "iproute2" },
  ], "the private network namespace");
  await ensureHaproxy();
  await ensureBinaries();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--quiet", entry],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`deno cache ${entry} failed (exit ${out.code}); its messages are above`);
}

/**
 * For a test file that must run inside the namespace: outside it, the file's tests run again as
 * `deno test` inside one; resolves with that run's exit code (0: they all passed).
 */
export async function testInPrivateNetwork(testFile: string, opts: { resolver?: boolean } = {}): Promise<number> {
  await prepareOutside(testFile);
  const out = await privateNetworkCommand([
    Deno.execPath(),
    "test",
    "-A",
    "--sanitize-ops",
    "--sanitize-resources",
    testFile,
  ], { resolver: opts.resolver }).output();
  return out.code;
}

/**
 * For a benchmark script that must run inside the namespace: outside it, runs the script again
 * there, passes its stdout on (the figures) and exits with its code; inside, returns.
 */
export async function runInPrivateNetwork(script: string): Promise<void> {
  if (inPrivateNetwork()) return;
  await prepareOutside(script);
  const out = await privateNetworkCommand([Deno.execPath(), "run", "-A", script], { stdout: "piped" }).output();
  await Deno.stdout.write(out.stdout);
  Deno.exit(out.code);
}
