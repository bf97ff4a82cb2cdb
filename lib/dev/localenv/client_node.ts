/**
 * @module lib/dev/localenv/client_node
 * @kubernetes/client-node 2.0.1 under Deno 2.9.6, made safe for tests.
 *
 * client-node sends requests through undici 8, which negotiates HTTP/2 by default (ALPN). Under
 * Deno, undici's HTTP/2 runs on Deno's node:http2 (nghttp2), and when the API server closes the
 * connection (GOAWAY, e.g. at `cp.stop()` or an API server restart) after a client-node `Watch`
 * was aborted, the whole Deno process usually dies: `nghttp2_session.c: find_stream_on_goaway_func:
 * Assertion failed` (SIGABRT, exit 134) or a segmentation fault (exit 139); 7 of 8 runs of
 * `fixtures/watch_abort.ts http2`. Limiting the connection to HTTP/1.1 (`allowH2: false` in undici's
 * connect options) avoids it (8 of 8 clean); client certificates, bearer tokens, lists and watches
 * work as before. Ordinary requests over HTTP/2 are not safe either: the full parallel suite once
 * died with SIGSEGV (exit 139) when a control plane stopped after plain client-node calls. So every
 * client-node use in tests goes through `loadKubeConfig`/`http1Only`.
 *
 * A second quirk, not fixed here: `Watch.watch()`'s returned controller `.abort()` does not call the
 * `done` callback under Deno and leaves the watch's inactivity timer (`requestTimeoutMs`, 30 s)
 * pending, which Deno's op sanitizer reports in a test.
 *
 * A third: undici keeps one timer ticking every 499 ms while any of its sockets has a timeout,
 * and arms no tick after the one that finds none left. A test that used client-node ends with
 * `clientNodeSettled()` once the API server has closed the connections (the op sanitizer reported
 * that tick as a leak, or as a timer of another test).
 */
import * as k8s from "@kubernetes/client-node";

/** Makes `kc` talk HTTP/1.1 only (see the module header). Returns `kc`. */
export function http1Only(kc: k8s.KubeConfig): k8s.KubeConfig {
  const base = kc.createDispatcherOptions.bind(kc);
  kc.createDispatcherOptions = (cluster, agentOptions) => {
    const opts = base(cluster, agentOptions);
    // undici's buildConnector reads allowH2 from the connect options; its ConnectOptions type omits it.
    if (opts.type === "agent") opts.connect = { ...opts.connect, allowH2: false } as typeof opts.connect;
    return opts;
  };
  return kc;
}

/** A KubeConfig loaded from `path`, HTTP/1.1 only. */
export function loadKubeConfig(path: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return http1Only(kc);
}

/** Resolves once undici's tick timer has run out, after the API server closed client-node's connections (see the header). */
export function clientNodeSettled(): Promise<void> {
  // Six ticks: under a loaded parallel run the close of the sockets can take a tick or two to be seen.
  return new Promise((resolve) => setTimeout(resolve, 3_000));
}
