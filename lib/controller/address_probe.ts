/**
 * @module controller/address_probe
 * Whether a proxy Service's cluster IP accepts connections yet, asked from the controller's pod
 * before a Gateway says `Programmed`. kube-proxy programs a Service's rules some time after the
 * Service and its ready endpoints exist; a client whose first SYN goes out before that is tracked
 * by conntrack without the Service's NAT, and its retransmissions of that SYN never reach the proxy
 * (the dial hangs until the client gives up). A TCP connection from the controller's own pod
 * accepted through the cluster IP shows the node's rules for that Service are in place (kube-proxy
 * writes a Service's cluster IP and load-balancer rules in the same sync). Only a controller running
 * in a pod can reach cluster IPs: elsewhere nothing is probed. A Service that never answers the
 * controller (a NetworkPolicy between them, say) is taken as ready after {@link GIVE_UP_MS}, so the
 * probe delays `Programmed` but never withholds it.
 */
import { connect } from "node:net";

/** How long a Gateway may wait on its address before it is taken as ready anyway. */
export const GIVE_UP_MS = 20_000;
/** One connection attempt's limit. */
const ATTEMPT_MS = 1_000;

/** What the probe says about one address: answers, not yet (asked again later), or given up on. */
export type ProbeVerdict = "answers" | "waiting" | "unknown";

/** Opens a TCP connection to `host:port` and closes it; true once accepted within `ms`. */
export type Dial = (host: string, port: number, ms: number) => Promise<boolean>;

/** The real dial: a TCP connection, closed as soon as it is accepted (nothing is sent). */
export const tcpDial: Dial = (host, port, ms) =>
  new Promise((done) => {
    const socket = connect({ host, port });
    const end = (ok: boolean) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on("error", () => {});
      socket.destroy();
      done(ok);
    };
    const timer = setTimeout(() => end(false), ms);
    socket.once("connect", () => end(true));
    socket.once("error", () => end(false));
  });

interface Probe {
  target: string;
  since: number;
  state: "running" | "answers" | "silent";
}

/** The probes of the Gateways' proxy Services, one per key, asked again by the caller's recheck. */
export class AddressProbes {
  readonly #probes = new Map<string, Probe>();
  readonly #dial: Dial | null;
  readonly #now: () => number;
  readonly #settled: (key: string) => void;

  /**
   * `dial` null: nothing is probed (the controller is not in a pod); `settled` is called when a
   * probe started by {@link verdict} is answered, so the caller can look at the Gateway again.
   */
  constructor(dial: Dial | null, settled: (key: string) => void, now: () => number = Date.now) {
    this.#dial = dial;
    this.#settled = settled;
    this.#now = now;
  }

  /** Whether `host:port` answers for `key`'s Gateway; starts a connection attempt when none runs. */
  verdict(key: string, host: string | undefined, port: number | undefined): ProbeVerdict {
    if (this.#dial === null || !host || host === "None" || !port) return "unknown";
    const target = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    let probe = this.#probes.get(key);
    if (probe?.target !== target) {
      probe = { target, since: this.#now(), state: "silent" };
      this.#probes.set(key, probe);
    }
    if (probe.state === "answers") return "answers";
    if (this.#now() - probe.since >= GIVE_UP_MS) return "unknown";
    if (probe.state === "silent") {
      const p = probe;
      p.state = "running";
      this.#dial(host, port, ATTEMPT_MS).then((ok) => {
        if (this.#probes.get(key) !== p) return;
        p.state = ok ? "answers" : "silent";
        // A refusal comes back at once: the caller's own recheck asks again, not this callback.
        if (ok) this.#settled(key);
      }, () => {
        p.state = "silent";
      });
    }
    return "waiting";
  }

  /** Forgets `key` (its Gateway is gone, or its proxy is not ready any more). */
  forget(key: string): void {
    this.#probes.delete(key);
  }
}
