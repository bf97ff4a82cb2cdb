/**
 * @module bench/dataplane_instructions
 * The instructions HAProxy executes for one request of a configuration, counted by valgrind's
 * callgrind: a figure no load on the machine moves, where requests/s and CPU time on a shared
 * 2-core machine move with everything else that runs. HAProxy, with one thread, runs the
 * configuration under callgrind twice, answering `few` and then `many` requests (8 keep-alive
 * connections, the Host rotating over the Ingresses' hosts); the difference of the two totals over
 * `many - few` requests is the cost of a request, start-up and shutdown cancelling out. User space
 * only: the kernel's share of a request (the sockets, the access log's write) is not in it.
 */
import { Buffer } from "node:buffer";
import net from "node:net";
import tls from "node:tls";
import { join } from "node:path";

export interface CountSettings {
  valgrind: string;
  haproxy: string;
  /** A laid-out configuration: `<dir>/haproxy.cfg` and the files it names. */
  dir: string;
  /** The `IC_*` environment of the configuration. */
  env: Record<string, string>;
  /** Where it answers, e.g. `http://10.0.0.2:8000` or `https://…`. */
  origin: string;
  /** The Host header of request i is `host(i % hosts)`. */
  hosts: number;
  host: (i: number) => string;
  few?: number;
  many?: number;
}

/** Instructions per request of the configuration in `s.dir` (see the module's header). */
export async function instructionsPerRequest(s: CountSettings): Promise<number> {
  const few = s.few ?? 500;
  const many = s.many ?? 2_500;
  const config = await Deno.readTextFile(join(s.dir, "haproxy.cfg"));
  if (!/^global$/m.test(config)) throw new Error(`${s.dir}/haproxy.cfg has no global section`);
  // One thread: the count of one thread is the same whichever thread a request ran on.
  const oneThread = join(s.dir, "haproxy-1t.cfg");
  await Deno.writeTextFile(oneThread, config.replace(/^global$/m, "global\n    nbthread 1"));
  const a = await countRun(s, oneThread, few);
  const b = await countRun(s, oneThread, many);
  return (b - a) / (many - few);
}

/** Total instructions of one HAProxy run under callgrind that answered `requests` requests. */
async function countRun(s: CountSettings, config: string, requests: number): Promise<number> {
  const out = join(s.dir, `callgrind-${requests}.out`);
  const child = new Deno.Command(s.valgrind, {
    args: ["--tool=callgrind", `--callgrind-out-file=${out}`, s.haproxy, "-db", "-f", config],
    env: s.env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    await waitListening(s.origin, child.status);
    await send(s, requests);
  } finally {
    try {
      child.kill("SIGUSR1"); // a soft stop: the worker finishes and callgrind writes its counts
    } catch { /* exited already */ }
  }
  const status = await child.status;
  const said = await stderr;
  let text: string;
  try {
    text = await Deno.readTextFile(out);
  } catch {
    throw new Error(`callgrind wrote no counts (exit ${status.code}): ${said.slice(-500)}`);
  }
  await Deno.remove(out);
  const m = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in ${out}`);
  return Number(m[1]);
}

/** Resolves once `origin` accepts a TCP connection; throws if HAProxy exits first or after 300 s. */
async function waitListening(origin: string, exited: Promise<Deno.CommandStatus>): Promise<void> {
  const url = new URL(origin);
  let gone = false;
  exited.then(() => gone = true);
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error("HAProxy exited under callgrind before it listened");
    try {
      (await Deno.connect({ hostname: url.hostname, port: Number(url.port) })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`HAProxy under callgrind did not listen on ${origin} within 300 s`);
}

/**
 * `n` GET requests over 8 keep-alive connections (TLS without checking the certificate: what is counted is
 * HAProxy's side); each must be answered 200 with a Content-Length. A plain HTTP/1.1 exchange written here,
 * since node:https in Deno opened a new connection per request, and a count of TLS handshakes is not the
 * count of a request.
 */
async function send(s: CountSettings, n: number): Promise<void> {
  const url = new URL(s.origin);
  const port = Number(url.port);
  let next = 0;
  const lane = async () => {
    const socket = url.protocol === "https:"
      ? tls.connect({ host: url.hostname, port, rejectUnauthorized: false })
      : net.connect({ host: url.hostname, port });
    const reader = responses(socket);
    try {
      while (next < n) {
        const i = next++;
        socket.write(`GET / HTTP/1.1\r\nhost: ${s.host(i % s.hosts)}\r\n\r\n`);
        const status = await reader.next();
        if (status !== 200) throw new Error(`${s.origin}: status ${status}`);
      }
    } finally {
      socket.destroy();
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}

/** The status of each HTTP/1.1 response read from `socket`, one per `next()`. */
function responses(socket: net.Socket): { next(): Promise<number> } {
  let buffered = Buffer.alloc(0);
  let waiting: { resolve: (status: number) => void; reject: (e: Error) => void } | null = null;
  let failed: Error | null = null;
  const pump = () => {
    if (!waiting) return;
    const end = buffered.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = buffered.subarray(0, end).toString("latin1");
    const length = /^content-length:\s*(\d+)\s*$/im.exec(head);
    if (!length) return fail(new Error(`a response without Content-Length: ${head}`));
    const total = end + 4 + Number(length[1]);
    if (buffered.length < total) return;
    buffered = buffered.subarray(total);
    const w = waiting;
    waiting = null;
    w.resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0));
  };
  const fail = (e: Error) => {
    failed = e;
    waiting?.reject(e);
    waiting = null;
  };
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    pump();
  });
  socket.on("error", fail);
  socket.on("close", () => fail(new Error("the connection closed")));
  return {
    next: () =>
      new Promise<number>((resolve, reject) => {
        if (failed) return reject(failed);
        waiting = { resolve, reject };
        pump();
      }),
  };
}
