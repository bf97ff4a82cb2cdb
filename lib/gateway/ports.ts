/**
 * @module gateway/ports
 * Where the proxy of a Gateway listens in its pod for each listener port: the Gateway's Service
 * maps the listener port to it (`targetPort`), the Deployment declares it, and the rendered
 * frontend binds it. The pod runs without capabilities, so privileged ports move up, and the pod's
 * own ports (the Ingress proxy's 8080/8443 that 80/443 take, stats, exporter, health) are never
 * handed to a listener.
 */
import {
  containerHttpPort,
  containerHttpsPort,
  exporterPort,
  healthPort,
  httpPort,
  httpsPort,
  statsPort,
} from "../common/proxy_ports.ts";

/** Ports a listener port of 1024 or more must not keep: 80 and 443 take the first two, the pod the others. */
const TAKEN: ReadonlySet<number> = new Set([
  containerHttpPort,
  containerHttpsPort,
  statsPort,
  exporterPort,
  healthPort,
]);

/** The offset that moves a port out of the way (privileged ports up, taken ports up or down). */
const SHIFT = 10000;

/**
 * The port the proxy container binds for listener port `port` (1–65535): 80 → 8080, 443 → 8443
 * (as an Ingress proxy); another port of 1024 or more → itself, unless the pod has it (8080, 8443,
 * stats, exporter, health: → port + 10000, or port − 10000 above 55535); a privileged port →
 * 10000 + port. Two listener ports of one Gateway can meet only in unusual pairs (81 and 10081,
 * 8080 and 18080): {@link containerPortClashes} finds them.
 */
export function containerPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`listener port ${port} out of range`);
  if (port === httpPort) return containerHttpPort;
  if (port === httpsPort) return containerHttpsPort;
  if (port < 1024) return SHIFT + port;
  if (!TAKEN.has(port)) return port;
  return port + SHIFT <= 65535 ? port + SHIFT : port - SHIFT;
}

/** Pairs of listener ports (ascending) that would bind the same container port. */
export function containerPortClashes(ports: Iterable<number>): [number, number][] {
  const seen = new Map<number, number>();
  const clashes: [number, number][] = [];
  for (const p of [...new Set(ports)].sort((a, b) => a - b)) {
    const c = containerPort(p);
    const other = seen.get(c);
    if (other !== undefined) clashes.push([other, p]);
    else seen.set(c, p);
  }
  return clashes;
}
