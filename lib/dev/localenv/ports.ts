/**
 * @module lib/dev/localenv/ports
 * Free TCP ports on loopback, found by letting the kernel pick them and releasing them again (the
 * envtest way; a port can be taken in between, so callers that bind later retry on "in use").
 */

/** `count` distinct TCP ports on `hostname` (default 127.0.0.1) that were free a moment ago. */
export function freePorts(count: number, hostname = "127.0.0.1"): number[] {
  // All listeners stay open until every port is chosen, so the kernel cannot hand one out twice.
  const listeners = Array.from({ length: count }, () => Deno.listen({ hostname, port: 0, transport: "tcp" }));
  try {
    return listeners.map((l) => (l.addr as Deno.NetAddr).port);
  } finally {
    for (const l of listeners) l.close();
  }
}

/** One free TCP port on `hostname`. */
export function freePort(hostname = "127.0.0.1"): number {
  return freePorts(1, hostname)[0];
}
