/**
 * @module proxy/command
 * `ingress-controller proxy`: runs in the proxy pod beside HAProxy (or, outside a cluster,
 * beside a local HAProxy on loopback). It watches its ConfigMap (`haproxy.cfg`, `crt-list`, the map files,
 * `secrets.json`, contracts.md §4) and the Secrets and ConfigMaps that lists (TLS certificates, CA
 * bundles of Secrets and ConfigMaps, htpasswd files for `userlists.cfg`), and applies every change whose ConfigMap matches the digest
 * the controller wrote beside it (`ingress-controller.io/config-sha256`; any other content is refused
 * and the last good configuration keeps serving) through {@link Applier}: nothing, Runtime API, or a
 * verified hitless reload, as lib/proxy/plan.ts decides. HAProxy starts with the first complete
 * configuration (every listed object read) and is stopped cleanly when `signal` aborts. A TLS or CA Secret (or CA ConfigMap) that is missing, unusable, or whose file HAProxy
 * refuses (each new file is loaded on its own first: lib/proxy/file_check.ts) is left out
 * (lib/proxy/left_out.ts), logged once and counted in `ingress_controller_proxy_secret_left_out`:
 * it never stops the configuration of the others.
 *
 * Readiness: with `--health-port`, `/readyz` (lib/proxy/health_endpoint.ts) passes only while
 * HAProxy runs the configuration the proxy last accepted (passed `haproxy -c`): not before the
 * first apply, not while an accepted configuration failed to start or reload, not while HAProxy
 * is down, not once the proxy is shutting down. A configuration `haproxy -c` refuses was never
 * accepted and does not make the proxy unready: the last good one keeps serving (so one bad
 * revision never takes every replica out of service at once). Liveness (`/livez`): this process
 * answers and, while HAProxy runs, its master answers `show proc`; the API server plays no part.
 *
 * Shutdown (the stop signal, e.g. the kubelet's SIGTERM): readiness fails at once; HAProxy keeps
 * serving for `--shutdown-drain` (endpoints and load balancers take that long to stop sending
 * new connections; a second SIGTERM/SIGINT ends the drain early); then HAProxy soft-stops
 * (SIGUSR1 to the master: listeners close, requests in flight finish, idle keep-alive
 * connections end — with the rendered `option idle-close-on-response`, after one more answer
 * carrying `Connection: close`), hard-stopped after `--shutdown-timeout`; then `runProxy` returns.
 *
 * Watches use lib/cluster's Informer (watches that resume after the API server ends them,
 * relist on 410, backoff on errors) and its keep-alive client. Each object is watched with a
 * `metadata.name` field selector, which is what a Role limited by `resourceNames` allows.
 */
import { join, resolve } from "node:path";
import { SetupError } from "../common/errors.ts";
import type { ProxySettings } from "../flags/proxy_settings.ts";
import { log } from "../log/logger.ts";
import { operatorNamespace } from "../cluster/access.ts";
import { Backoff } from "../cluster/backoff.ts";
import { ClusterClient } from "../cluster/client.ts";
import { Informer } from "../cluster/informer.ts";
import { type KubeObject, resources } from "../cluster/resources.ts";
import { PartCache } from "../transport/part_cache.ts";
import { readPartContent } from "./part_read.ts";
import { CONFIG_SHA_ANNOTATION, configDigest, PARTS_KEY, type ReadPart } from "../transport/parts.ts";
import { Applier, type ApplyResult } from "./apply.ts";
import { type DesiredState, sameState } from "./plan.ts";
import { isConfigMapRef, type LeftOut, objectKind, parseSecretRefs, secretContents, type SecretRef } from "./files.ts";
import { FileChecker } from "./file_check.ts";
import { leaveOut, makeStandIns, type StandIns } from "./left_out.ts";
import { isDns1123Label, isDns1123Subdomain } from "../render/patterns.ts";
import { MAP_FILES, type MapFile } from "../render/maps.ts";
import { type AccessLogSink, HAProxy } from "./haproxy.ts";
import { type HealthEndpoint, startHealthEndpoint } from "./health_endpoint.ts";
import { applyFailures, secretsLeftOut } from "./metrics.ts";
import { HealthChecks } from "../parts/health.ts";

export type { ProxySettings };

/** Test and embedding hooks; the CLI passes none. */
export interface RunProxyHooks {
  /**
   * Called after every apply attempt; `eventAt` is the `performance.now()` of the first watch event
   * (or retry) this apply answers.
   */
  onApply?: (result: ApplyResult, timing: { eventAt: number }) => void;
  /** Called when the ConfigMap or a Secret cannot be used (nothing is applied; the last good config serves). */
  onProblem?: (message: string) => void;
  /** Called with the TLS and CA Secrets left out of each configuration about to be applied (often none). */
  onLeftOut?: (leftOut: readonly LeftOut[]) => void;
  /** Called once HAProxy and the watches run, with the parts a test may inspect. */
  onReady?: (parts: { haproxy: HAProxy; applier: Applier }) => void;
  /** An existing cluster client (default: one built from `settings.kubeconfig`). */
  client?: ClusterClient;
  /** Where HAProxy's access log lines go (default: HAProxy writes them to this process's stdout; lib/proxy/haproxy.ts). */
  accessLog?: AccessLogSink;
}

/** Runs the proxy until `signal` aborts (without a signal: until SIGINT or SIGTERM). */
export async function runProxy(
  settings: ProxySettings,
  signal?: AbortSignal,
  hooks: RunProxyHooks = {},
): Promise<void> {
  const stop = signal ?? processStopSignal();
  const namespace = settings.namespace || operatorNamespace();
  checkSettings(settings, namespace);
  const workDir = resolve(settings.workDir);
  const certDir = join(workDir, "certs");
  try {
    await Deno.mkdir(certDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new SetupError(`--work-dir: cannot create ${certDir}: ${(err as Error).message}; give a writable directory`);
  }
  await checkBinary(settings.haproxy);

  const client = hooks.client ??
    await ClusterClient.create({
      kubeconfig: settings.kubeconfig || null,
      // The head's watch and list, the parts read again on a retry, and the listed Secrets' lists and
      // watches after a failure (lib/cluster/informer.ts's unlimitedWhileHealthy). A part's first read for its digest
      // takes no token (lib/transport/part_cache.ts reads at most 8 at a time): a start reads every
      // part once, and a large class has many (1,358 uncompressed parts of 16 KiB at 100,000
      // Ingresses waited ~53 s at 20 a second past this burst).
      qps: 20,
      burst: 300,
      userAgent: "ingress-controller-proxy",
    });
  const runtime = new ProxyRuntime(settings, namespace, workDir, certDir, client, hooks);
  const health = proxyHealth(runtime);
  let endpoint: HealthEndpoint | null = null;
  try {
    endpoint = settings.healthPort ? startHealthEndpoint(health, settings.bindAddress, settings.healthPort) : null;
    await runtime.run(stop);
    await runtime.drain(settings.shutdownDrainMs ?? 0);
  } finally {
    // The probes answer until HAProxy is gone: readiness fails, liveness still passes.
    try {
      await runtime.shutdown(settings.shutdownTimeoutMs ?? 10_000);
    } finally {
      await endpoint?.close();
      if (!hooks.client) client.close();
    }
  }
}

/** The proxy's probe checks (module header: what ready and live mean). */
function proxyHealth(runtime: ProxyRuntime): HealthChecks {
  const health = new HealthChecks();
  health.register("serving-config", () => {
    const problem = runtime.notServing();
    if (problem) throw new Error(problem);
  });
  health.register("shutdown", () => {
    if (runtime.stopping) throw new Error("the proxy is shutting down");
  });
  health.register("haproxy-master", async () => {
    // Not running (no configuration yet, or being restarted by the proxy) is readiness' concern;
    // a master that runs but does not answer is hung, and a restart of the pod is the cure.
    if (runtime.haproxy.running && !runtime.stopping) await runtime.haproxy.master("show proc", { timeoutMs: 3_000 });
  }, { live: true });
  return health;
}

function checkSettings(s: ProxySettings, namespace: string): void {
  if (!isDns1123Subdomain(s.configmap)) {
    throw new SetupError(
      `--configmap: ${JSON.stringify(s.configmap)} is not a ConfigMap name; give the proxy's ConfigMap`,
    );
  }
  if (!isDns1123Label(namespace)) {
    throw new SetupError(`--namespace: ${JSON.stringify(namespace)} is not a namespace name`);
  }
  if (!s.workDir) throw new SetupError("--work-dir: give a directory for haproxy.cfg, certificates and sockets");
  // A unix socket path is limited to 107 bytes.
  if (join(resolve(s.workDir), "runtime.sock").length > 100) {
    throw new SetupError(`--work-dir: ${s.workDir} is too long for a unix socket path; give a shorter directory`);
  }
  for (
    const [flag, port] of [["--http-port", s.httpPort], ["--https-port", s.httpsPort], ["--stats-port", s.statsPort]]
  ) {
    if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
      throw new SetupError(`${flag}: ${port} is not a TCP port (1-65535)`);
    }
  }
  const health = s.healthPort ?? 0;
  if (!Number.isInteger(health) || health < 0 || health > 65535) {
    throw new SetupError(`--health-port: ${health} is not a TCP port (1-65535, or 0 for none)`);
  }
  const taken = ([["--http-port", s.httpPort], ["--https-port", s.httpsPort], ["--stats-port", s.statsPort]] as const)
    .find(([, port]) => port === health);
  if (taken) throw new SetupError(`--health-port: ${health} is already ${taken[0]}; give another port`);
}

async function checkBinary(binary: string): Promise<void> {
  try {
    const out = await new Deno.Command(binary, { args: ["-v"], stdin: "null", stdout: "piped", stderr: "piped" })
      .output();
    const version = new TextDecoder().decode(out.stdout).split("\n")[0];
    if (!out.success) throw new Error(`exit ${out.code}`);
    log.info("haproxy found", { binary, version });
  } catch (err) {
    throw new SetupError(
      `--haproxy: cannot run ${binary} (${
        (err as Error).message.split("\n")[0]
      }); install HAProxy 2.6+ or give its path`,
    );
  }
}

function processStopSignal(): AbortSignal {
  const ctl = new AbortController();
  const onSignal = () => ctl.abort(new Error("signal"));
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, onSignal);
  ctl.signal.addEventListener("abort", () => {
    for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.removeSignalListener(sig, onSignal);
  });
  return ctl.signal;
}

/** True when `text` is only white space; looked for in its parts when it has some (a joined 2 MB text is not scanned). */
function blank(text: string, parts: readonly ReadPart[] | undefined): boolean {
  return parts ? !parts.some((p) => /\S/.test(p.content)) : text.trim() === "";
}

/** What the ConfigMap and Secrets ask for, and the TLS and CA Secrets that could not give a file. */
interface Wanted {
  readonly state: DesiredState;
  readonly leftOut: readonly LeftOut[];
}

/** The watch → desired state → apply loop of one proxy. */
class ProxyRuntime {
  readonly haproxy: HAProxy;
  readonly applier: Applier;
  #configMap: Informer;
  #parts: PartCache;
  /** The watches of the listed Secrets and ConfigMaps, by {@link watchKey}. */
  #secrets = new Map<string, Informer>();
  /** htpasswd refusals already logged (bounded: cleared when it grows). */
  #warned = new Set<string>();
  #dirty = false;
  /** When the first event not yet answered by a reconcile came (performance.now()). */
  #eventAt: number | null = null;
  #loop: Promise<void> | null = null;
  #stopped = false;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #retry = new Backoff(1_000, 30_000);
  /** The last problem logged, so a repeated event does not repeat the log line. */
  #lastProblem = "";
  /** An input that failed deterministically (haproxy -c); not re-tried until it changes. */
  #refused: DesiredState | null = null;
  /** The Secrets the last `secrets.json` listed, whose watches run. */
  #refs: { text: string; refs: SecretRef[] } | null = null;
  /** Why nothing is applied yet (the readiness reason until the first successful apply). */
  #waiting: string;
  /** Set while a configuration that passed `haproxy -c` failed to start or reload: why. */
  #unapplied: string | null = null;
  /** HAProxy's verdict on each certificate and CA file. */
  #files: FileChecker;
  /** What replaces a file left out, made when first needed. */
  #standIns: Promise<StandIns> | null = null;
  /** The reason logged for each Secret left out, so that it is logged once. */
  #leftOutLogged = new Map<string, string>();
  /** Set when the last screened configuration has files HAProxy has not judged yet. */
  #unchecked = false;

  constructor(
    readonly settings: ProxySettings,
    readonly namespace: string,
    readonly workDir: string,
    readonly certDir: string,
    readonly client: ClusterClient,
    readonly hooks: RunProxyHooks,
  ) {
    this.haproxy = new HAProxy({
      binary: settings.haproxy,
      workDir,
      bindAddress: settings.bindAddress,
      httpPort: settings.httpPort,
      httpsPort: settings.httpsPort,
      statsPort: settings.statsPort,
      runtimeSocket: join(workDir, "runtime.sock"),
      certDir,
      userlistsPath: join(workDir, "userlists.cfg"),
      onUnexpectedExit: () => this.#scheduleRetry("haproxy exited"),
      accessLog: hooks.accessLog,
    });
    this.applier = new Applier({ haproxy: this.haproxy, workDir, certDir });
    this.#files = new FileChecker(
      (config, dir) => this.haproxy.check(config, { IC_CERT_DIR: dir }),
      join(workDir, "file-check"),
    );
    this.#waiting = `waiting for the ConfigMap ${namespace}/${settings.configmap}`;
    this.#parts = new PartCache(
      settings.configmap,
      (name, first, notOlderThan) => readPartContent(this.client, this.namespace, name, { first, notOlderThan }),
    );
    this.#configMap = new Informer(client, resources.configMaps, {
      namespace,
      fieldSelector: `metadata.name=${settings.configmap}`,
    });
    const kick = () => this.#kick();
    this.#configMap.on({ onAdd: kick, onUpdate: kick, onDelete: kick });
  }

  /** Set when the stop signal came: readiness fails from then on. */
  get stopping(): boolean {
    return this.#stopping;
  }
  #stopping = false;

  /** Why HAProxy does not run the configuration last accepted, or null (the readiness check). */
  notServing(): string | null {
    if (!this.applier.current) return this.#unapplied ?? `no configuration applied yet: ${this.#waiting}`;
    if (!this.haproxy.running) return "haproxy is not running; it is being restarted with the last good configuration";
    return this.#unapplied;
  }

  async run(stop: AbortSignal): Promise<void> {
    if (stop.aborted) return;
    log.info("proxy starting", {
      namespace: this.namespace,
      configmap: this.settings.configmap,
      workDir: this.workDir,
      bind: `${this.settings.bindAddress}:${this.settings.httpPort}/${this.settings.httpsPort}`,
    });
    this.#configMap.start();
    const stopped = new Promise<void>((r) => stop.addEventListener("abort", () => r(), { once: true }));
    await Promise.race([this.#configMap.waitForSync(stop).catch(() => {}), stopped]);
    if (!stop.aborted) this.hooks.onReady?.({ haproxy: this.haproxy, applier: this.applier });
    await stopped;
    this.#stopping = true;
    log.info("proxy stopping");
  }

  /**
   * Keeps HAProxy serving (readiness failing) for `ms`, so that endpoints and load balancers stop
   * sending new connections first; a second SIGTERM or SIGINT ends the wait. Nothing to drain
   * when HAProxy does not run.
   */
  async drain(ms: number): Promise<void> {
    this.#stopping = true;
    if (ms <= 0 || !this.haproxy.running) return;
    log.info("proxy draining: not ready, still serving", { drainMs: ms });
    const signals = ["SIGTERM", "SIGINT"] as const;
    let end = () => {};
    const ended = new Promise<void>((resolve) => end = resolve);
    const onSignal = () => {
      log.info("second stop signal: ending the drain");
      end();
    };
    for (const sig of signals) Deno.addSignalListener(sig, onSignal);
    const timer = setTimeout(end, ms);
    try {
      await ended;
    } finally {
      clearTimeout(timer);
      for (const sig of signals) Deno.removeSignalListener(sig, onSignal);
    }
  }

  /** Stops the watches, then soft-stops HAProxy (hard stop after `timeoutMs`). */
  async shutdown(timeoutMs: number): Promise<void> {
    this.#stopping = true;
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    await this.#configMap.stop();
    await Promise.all([...this.#secrets.values()].map((i) => i.stop()));
    this.#secrets.clear();
    await this.#loop?.catch(() => {});
    if (this.haproxy.running) log.info("soft-stopping haproxy", { timeoutMs });
    await this.haproxy.stop(timeoutMs);
  }

  /** Coalesces changes: one reconcile runs at a time, and a burst of events leads to one more. */
  #kick(): void {
    if (this.#stopped) return;
    this.#dirty = true;
    this.#eventAt ??= performance.now();
    this.#loop ??= (async () => {
      try {
        while (this.#dirty && !this.#stopped) {
          this.#dirty = false;
          const eventAt = this.#eventAt ?? performance.now();
          this.#eventAt = null;
          try {
            await this.#reconcile(eventAt);
          } catch (err) {
            this.#problem("proxy reconcile failed", { error: (err as Error).message });
            this.#scheduleRetry("reconcile failed");
          }
        }
        // Nothing waits now (synchronous: an event meanwhile would find this loop still set).
        if (!this.#stopped) this.applier.prepare();
      } finally {
        this.#loop = null;
      }
    })();
  }

  #scheduleRetry(reason: string): void {
    if (this.#stopped) return;
    clearTimeout(this.#retryTimer);
    const delay = this.#retry.next();
    log.info("proxy will retry", { reason, inMs: Math.round(delay) });
    this.#retryTimer = setTimeout(() => this.#kick(), delay);
  }

  /**
   * Logs a problem once (until another one occurs); returns null for `return this.#problem(…)`.
   * `stage`: the failure is counted under that stage of `ingress_controller_proxy_apply_failures_total`.
   */
  #problem(msg: string, fields: Record<string, unknown>, stage: "input" | "digest" | null = null): null {
    const text = msg + JSON.stringify(fields);
    this.#waiting = `${msg}: ${JSON.stringify(fields)}`;
    if (stage) applyFailures.inc({ stage });
    this.hooks.onProblem?.(this.#waiting);
    if (text === this.#lastProblem) return null;
    this.#lastProblem = text;
    log.error(msg, fields);
    return null;
  }

  async #reconcile(eventAt: number): Promise<void> {
    const wanted = await this.#desiredState();
    // Before the first start each file is not loaded on its own: the start loads them all anyway.
    let desired = wanted && await this.#screened(wanted, this.applier.current !== null);
    let restartingLastGood = false;
    if (!desired || (this.#refused && sameState(this.#refused, desired))) {
      // Nothing new to apply. But if HAProxy died meanwhile, bring the last good config back.
      const lastGood = this.applier.current;
      if (this.haproxy.running || !lastGood) return;
      log.info("restarting haproxy with the last good configuration");
      [desired, restartingLastGood] = [lastGood, true];
    }
    let result = await this.applier.apply(desired);
    if (!result.ok && result.stage === "check" && wanted && this.#unchecked && !restartingLastGood) {
      log.info("the configuration was refused; loading each certificate and CA file on its own");
      desired = await this.#screened(wanted, true);
      result = await this.applier.apply(desired);
    }
    this.#lastProblem = "";
    if (result.ok) {
      if (!restartingLastGood) [this.#refused, this.#unapplied] = [null, null];
      this.#files.loaded(desired.pems);
      this.#retry.reset();
      clearTimeout(this.#retryTimer);
    } else if (result.stage === "check" || result.stage === "input") {
      this.#refused = desired; // the same input would fail the same way: wait for a change
      this.#waiting = `the configuration was refused (${result.stage}): ${result.error}`;
    } else {
      this.#unapplied = `the accepted configuration is not running: ${result.stage} failed: ${result.error}`;
      this.#scheduleRetry(`${result.stage} failed`);
    }
    this.hooks.onApply?.(result, { eventAt });
  }

  /**
   * `wanted` without the TLS and CA files that are left out: those its Secrets could not give, and
   * those HAProxy refuses (new files are loaded on their own first when `checkNew`). Reports them.
   */
  async #screened(wanted: Wanted, checkNew: boolean): Promise<DesiredState> {
    const { state, leftOut } = wanted;
    const verdicts = await this.#files.check(state.pems, checkNew);
    this.#unchecked = verdicts.unchecked > 0;
    const all = [...leftOut];
    if (verdicts.refused.size > 0) {
      const byFile = new Map(this.#refs?.refs.map((r) => [r.file, r]));
      for (const [file, reason] of verdicts.refused) {
        const ref = byFile.get(file);
        if (ref) all.push({ ref, reason: `HAProxy refuses its file: ${reason}` });
      }
    }
    this.#reportLeftOut(all);
    if (all.length === 0) return state;
    this.#standIns ??= makeStandIns();
    return leaveOut(state, new Set(all.map((l) => l.ref.file!)), await this.#standIns);
  }

  /** Logs each Secret left out once per reason and sets the metric to what is left out now. */
  #reportLeftOut(leftOut: readonly LeftOut[]): void {
    secretsLeftOut.reset();
    const logged = new Map<string, string>();
    for (const { ref, reason } of leftOut) {
      secretsLeftOut.set({ namespace: ref.namespace, name: ref.name, kind: ref.kind }, 1);
      const key = `${ref.kind} ${ref.namespace}/${ref.name}`;
      logged.set(key, reason);
      if (this.#leftOutLogged.get(key) === reason) continue;
      log.warn(`${objectKind(ref)} left out of the proxy's configuration; everything else is applied`, {
        [isConfigMapRef(ref) ? "configmap" : "secret"]: `${ref.namespace}/${ref.name}`,
        kind: ref.kind,
        reason,
        effect: ref.kind === "ca" || ref.kind === "configmap-ca"
          ? "nothing verifies against it: client certificates are refused, a verified backend answers 503"
          : "its hosts get the default certificate",
      });
    }
    this.#leftOutLogged = logged;
    this.hooks.onLeftOut?.(leftOut);
  }

  /**
   * What the ConfigMap and Secrets ask for, with the TLS and CA Secrets that cannot give a file,
   * or null (logged) when the ConfigMap is missing or invalid or a listed Secret is not known yet:
   * then nothing is applied.
   */
  async #desiredState(): Promise<Wanted | null> {
    const cmName = this.settings.configmap;
    const cm = this.#configMap.store.get(`${this.namespace}/${cmName}`);
    const where = { namespace: this.namespace, configmap: cmName };
    if (!cm) {
      if (this.#lastProblem !== "no configmap") log.info("waiting for the proxy ConfigMap", where);
      this.#lastProblem = "no configmap";
      this.#waiting = `waiting for the ConfigMap ${this.namespace}/${cmName}`;
      this.#syncSecretWatches([]);
      this.#refs = null;
      return null;
    }
    if (!this.#written(cm)) {
      // Not what the controller wrote (an edit by hand or by another writer): never applied, and
      // the controller puts its own content back (docs/config-transport.md).
      return this.#problem(
        `proxy ConfigMap does not match its ${CONFIG_SHA_ANNOTATION} annotation (changed by someone other than ` +
          "the controller); keeping the current configuration",
        where,
        "digest",
      );
    }
    let data: Record<string, unknown> = cm.data ?? {};
    let parts: ReadonlyMap<string, readonly ReadPart[]> | undefined;
    if (PARTS_KEY in data) {
      // A large configuration travels in parts (docs/config-transport.md): join them first.
      let assembled;
      try {
        const [fetched, t0] = [this.#parts.fetched, performance.now()];
        assembled = await this.#parts.assemble(
          data as Record<string, string>,
          cm.metadata.resourceVersion,
          (cm.binaryData ?? {}) as Record<string, string>,
        );
        // A start or a large change: how long its reads took (a route change reads none or one).
        const read = this.#parts.fetched - fetched;
        if (read >= 16) log.info("configuration parts read", { parts: read, ms: Math.round(performance.now() - t0) });
      } catch (err) {
        return this.#problem("proxy ConfigMap has an invalid part list; keeping the current configuration", {
          ...where,
          error: (err as Error).message,
        }, "input");
      }
      if ("missing" in assembled) {
        // A newer write is on its way (or a part cannot be read yet): keep serving, look again.
        this.#problem("waiting for configuration parts; keeping the current configuration", {
          ...where,
          parts: assembled.missing.map((m) => m.name).join(","),
        });
        this.#scheduleRetry("configuration parts missing");
        return null;
      }
      [data, parts] = [assembled.files, assembled.parts];
    }
    const config = data["haproxy.cfg"];
    const crtList = data["crt-list"] ?? "";
    if (typeof config !== "string" || blank(config, parts?.get("haproxy.cfg")) || typeof crtList !== "string") {
      return this.#problem(
        "proxy ConfigMap has no haproxy.cfg text; keeping the current configuration",
        where,
        "input",
      );
    }
    // The map files are checked line by line by the Applier (stage input); a missing one is empty.
    const maps = new Map<MapFile, string>();
    for (const file of MAP_FILES) {
      const text = data[file] ?? "";
      if (typeof text !== "string") return this.#problem(`proxy ConfigMap key ${file} is not text`, where, "input");
      maps.set(file, text);
    }
    let refs: SecretRef[];
    const refsText = typeof data["secrets.json"] === "string" ? data["secrets.json"] : "[]";
    if (this.#refs?.text === refsText) refs = this.#refs.refs; // most changes list the same Secrets
    else {
      try {
        // A shared proxy serves the Secrets of every namespace its ingresses live in; what it may
        // read is decided by its Roles (one per namespace, written by the controller), not here.
        refs = parseSecretRefs(refsText);
      } catch (err) {
        return this.#problem("proxy ConfigMap is invalid; keeping the current configuration", {
          ...where,
          error: (err as Error).message,
        }, "input");
      }
      this.#syncSecretWatches(refs);
      this.#refs = { text: refsText, refs };
    }
    let contents: ReturnType<typeof secretContents>;
    try {
      contents = secretContents(refs, (ref) => {
        const informer = this.#secrets.get(watchKey(ref))!;
        return informer.store.get(`${ref.namespace}/${ref.name}`) ?? (informer.hasSynced ? null : undefined);
      }, (secret, reason) => {
        // once per change of the Secret's content, not per reconcile
        const key = `${secret} ${reason}`;
        if (this.#warned.has(key)) return;
        if (this.#warned.size > 1000) this.#warned.clear();
        this.#warned.add(key);
        log.warn("htpasswd Secret: line or Secret refused", { secret, reason });
      });
    } catch (err) {
      return this.#problem("Secret is unusable; keeping the current configuration", {
        ...where,
        error: (err as Error).message,
      }, "input");
    }
    if ("waiting" in contents) {
      const ref = contents.waiting;
      const key = `not listed yet: ${watchKey(ref)}`;
      const what = objectKind(ref);
      if (this.#lastProblem !== key) {
        log.info(`waiting for a ${what} before applying`, { [what.toLowerCase()]: `${ref.namespace}/${ref.name}` });
      }
      this.#lastProblem = key;
      this.#waiting = `waiting for the ${ref.kind} ${what} ${ref.namespace}/${ref.name}`;
      return null;
    }
    const { pems, userlists, leftOut } = contents;
    return { state: { config, crtList, maps, pems, userlists, ...(parts ? { parts } : {}) }, leftOut };
  }

  /**
   * Whether the ConfigMap's data is what its digest annotation names: the digest the controller
   * computed over everything it wrote (checked once per version of the object).
   */
  #written(cm: KubeObject): boolean {
    const version = `${cm.metadata.uid}/${cm.metadata.resourceVersion}`;
    if (this.#verified === version) return true;
    const ok = cm.metadata.annotations?.[CONFIG_SHA_ANNOTATION] === configDigest(cm.data, cm.binaryData);
    if (ok) this.#verified = version;
    return ok;
  }
  #verified = "";

  /**
   * One watch per listed Secret or ConfigMap (its namespace, a field selector on its name), started
   * and stopped as the list changes.
   */
  #syncSecretWatches(refs: readonly SecretRef[]): void {
    const wanted = new Map(refs.map((r) => [watchKey(r), r]));
    for (const [key, informer] of this.#secrets) {
      if (wanted.has(key)) continue;
      this.#secrets.delete(key);
      informer.stop().catch(() => {});
    }
    for (const [key, ref] of wanted) {
      if (this.#secrets.has(key)) continue;
      const resource = isConfigMapRef(ref) ? resources.configMaps : resources.secrets;
      const informer = new Informer<KubeObject>(this.client, resource, {
        namespace: ref.namespace,
        fieldSelector: `metadata.name=${ref.name}`,
        // One list and one watch per listed object, the watch renewed every 5–10 minutes: at thousands
        // of Secrets, more than the client's rate on their own (10,000 Secrets: 20,000 calls, ~16 minutes
        // at 20 a second).
        unlimitedWhileHealthy: true,
      });
      const kick = () => this.#kick();
      // A missing object is known to be missing once listed (its userlist stays empty): no
      // add event tells, so an empty list does.
      const onSync = () => informer.store.size === 0 && kick();
      informer.on({ onAdd: kick, onUpdate: kick, onDelete: kick, onSync });
      this.#secrets.set(key, informer.start());
    }
  }
}

/** The watch of a listed object: a Secret and a ConfigMap of the same name are two. */
function watchKey(ref: SecretRef): string {
  return `${isConfigMapRef(ref) ? "configmaps" : "secrets"}/${ref.namespace}/${ref.name}`;
}
