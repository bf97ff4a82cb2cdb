/**
 * @module lib/dev/localenv/forward
 * Byte-for-byte TCP ↔ unix-socket forwarding: how the demo, which runs in a private network
 * namespace (netns.ts), makes its API server and proxy reachable on the host's loopback.
 * The unix socket lives in the file system, which both namespaces share.
 */

export interface Forwarder {
  /** The TCP port (host side) or 0 (namespace side). */
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

function pipe(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  const one = a.readable.pipeTo(b.writable).catch(() => {});
  const two = b.readable.pipeTo(a.writable).catch(() => {});
  return Promise.all([one, two]).then(() => {});
}

function serve(listener: Deno.Listener, dial: () => Promise<Deno.Conn>, port: number): Forwarder {
  const open = new Set<Deno.Conn>();
  const pipes = new Set<Promise<void>>();
  let accepted = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      accepted++;
      open.add(conn);
      dial().then(
        (upstream) => {
          open.add(upstream);
          const piping = pipe(conn, upstream).finally(() => {
            open.delete(conn);
            open.delete(upstream);
            pipes.delete(piping);
          });
          pipes.add(piping);
        },
        () => {
          open.delete(conn);
          try {
            conn.close();
          } catch { /* already closed */ }
        },
      );
    }
  })().catch(() => {});
  return {
    port,
    get accepted() {
      return accepted;
    },
    async close() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      await loop;
      await Promise.all(pipes);
    },
  };
}

/** Listens on TCP `hostname`:`port` (0: any free port) and forwards each connection to the unix socket `path`. */
export function tcpToUnix(path: string, hostname = "127.0.0.1", port = 0): Forwarder {
  const listener = Deno.listen({ hostname, port, transport: "tcp" });
  return serve(listener, () => Deno.connect({ transport: "unix", path }), (listener.addr as Deno.NetAddr).port);
}

/** Listens on a free loopback TCP port and forwards each connection to TCP 127.0.0.1:`port` (tests count connections). */
export function tcpToTcp(port: number): Forwarder {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0, transport: "tcp" });
  return serve(listener, () => Deno.connect({ hostname: "127.0.0.1", port }), (listener.addr as Deno.NetAddr).port);
}

/** Listens on the unix socket `path` and forwards each connection to TCP `hostname`:`port`. */
export function unixToTcp(path: string, hostname: string, port: number): Forwarder {
  const listener = Deno.listen({ transport: "unix", path });
  return serve(listener, () => Deno.connect({ hostname, port }), 0);
}
