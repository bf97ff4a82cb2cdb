/**
 * @module proxy/apply
 * Carries out the plan lib/proxy/plan.ts makes from what HAProxy runs and the next rendered
 * configuration (haproxy.cfg, crt-list, routing map files, PEM files), and never leaves HAProxy
 * without a good configuration:
 * - nothing: nothing is done;
 * - runtime: the planned changes go through the Runtime API, no reload: `set server` per changed
 *   slot, then new and changed certificates, the maps, certificates no longer used
 *   (lib/proxy/runtime_changes.ts), and the live servers of backends the configuration dropped go
 *   to maintenance (HAProxy keeps those backends, unused, until its next reload); then the files are
 *   written so that a later reload agrees (HAProxy 2.6 forgets runtime changes on reload). If the
 *   Runtime API refuses, a reload; if that fails too, HAProxy runs part of the change, and the next
 *   apply reloads whatever it asks for (a revert included);
 * - reload: the files are staged and checked with `haproxy -c` (real environment, the staged cert
 *   dir), then written atomically (certificates first, config last) and HAProxy is reloaded through
 *   the master socket and the reload verified (or started, when nothing runs). A failing check or
 *   reload leaves the last good files and workers in place and is reported (log, metric, result).
 */
import { join } from "node:path";
import { log } from "../log/logger.ts";
import { isPemFile, readTextOrNull, writeFileAtomic } from "./files.ts";
import type { HAProxy } from "./haproxy.ts";
import {
  applies,
  applyDuration,
  applyFailures,
  certsChanged,
  lastApplySuccess,
  mapsChanged,
  serversChanged,
} from "./metrics.ts";
import type { ExtraServers, SlotCommand } from "./slots.ts";
import { addCert, addCrtListLine, editMap, removeCert, replaceCert, replaceMap } from "./runtime_changes.ts";
import { MAP_FILES } from "../render/maps.ts";
import {
  type DesiredState,
  type MapFileLines,
  mapText,
  planApply,
  type ReloadReason,
  type Running,
  type RuntimeChanges,
} from "./plan.ts";
import { oneLine } from "../common/errors.ts";

/** The Applier's input, planned with lib/proxy/plan.ts. */
export type { DesiredState };

export type ApplyKind = "none" | "runtime" | "reload" | "start";
export type FailureStage = "input" | "check" | "write" | "runtime" | "reload" | "start";

export interface ApplyResult {
  kind: ApplyKind;
  ok: boolean;
  durationMs: number;
  /** Slots changed through the Runtime API. */
  serversChanged: number;
  /** Map files replaced through the Runtime API. */
  mapsChanged?: number;
  /** Certificates replaced through the Runtime API. */
  certsChanged?: number;
  /** Backends the configuration dropped without a reload (the running HAProxy keeps them, unused). */
  backendsDropped?: number;
  /** A reload or start: why (lib/proxy/plan.ts), or "runtime failed" when the Runtime API refused the change. */
  reason?: ReloadReason | "runtime failed";
  /** On failure: where and why. */
  stage?: FailureStage;
  error?: string;
}

export interface ApplierOptions {
  haproxy: HAProxy;
  /** Holds haproxy.cfg (= haproxy.configPath) and the staging dir. */
  workDir: string;
  /** IC_CERT_DIR: the PEM files and crt-list. */
  certDir: string;
}

export class Applier {
  #h: HAProxy;
  #workDir: string;
  #certDir: string;
  /** The state last applied (null before the first successful start) and its checked map lines. */
  #applied: Running | null = null;
  /** A start or reload applied maps whose lines are not counted yet (`prepare`). */
  #unprepared = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: ApplierOptions) {
    this.#h = opts.haproxy;
    this.#workDir = opts.workDir;
    this.#certDir = opts.certDir;
  }

  /** The state HAProxy runs now (null before the first successful start). */
  get current(): DesiredState | null {
    return this.#applied?.state ?? null;
  }

  /**
   * Work the next change would otherwise do on its way, done while nothing waits: after a start or
   * a reload, the running maps' lines are counted (lib/proxy/map_state.ts), about 10 ms of the first
   * route change at 10,000 Ingresses.
   */
  prepare(): void {
    if (!this.#unprepared) return;
    this.#unprepared = false;
    for (const m of this.#applied?.lines.values() ?? []) m.prepare();
  }

  /** Applies `next`; calls are serialized. Never throws: failures are in the result. */
  apply(next: DesiredState): Promise<ApplyResult> {
    const run = this.#queue.then(() => this.#apply(next));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #apply(next: DesiredState): Promise<ApplyResult> {
    const t0 = performance.now();
    let result: Omit<ApplyResult, "durationMs">;
    try {
      result = await this.#planAndApply(next);
    } catch (err) {
      result = { kind: "reload", ok: false, serversChanged: 0, stage: "write", error: oneLine(err) };
    }
    const done: ApplyResult = { ...result, durationMs: Math.round((performance.now() - t0) * 100) / 100 };
    applies.inc({ kind: done.kind });
    applyDuration.observe({ kind: done.kind }, done.durationMs / 1000);
    lastApplySuccess.set(done.ok ? 1 : 0);
    if (done.ok) {
      if (done.kind !== "none") {
        log.info("proxy config applied", {
          kind: done.kind,
          ...(done.reason ? { reason: done.reason } : {}),
          durationMs: done.durationMs,
          serversChanged: done.serversChanged,
          mapsChanged: done.mapsChanged ?? 0,
          certsChanged: done.certsChanged ?? 0,
          ...(done.backendsDropped ? { backendsDropped: done.backendsDropped } : {}),
        });
      } else log.v(4)?.info("proxy config unchanged", { durationMs: done.durationMs });
    } else {
      applyFailures.inc({ stage: done.stage ?? "reload" });
      log.error("proxy config not applied; the last good configuration keeps serving", {
        kind: done.kind,
        stage: done.stage,
        error: done.error,
        ...(done.reason ? { reason: done.reason } : {}),
        durationMs: done.durationMs,
      });
    }
    return done;
  }

  async #planAndApply(next: DesiredState): Promise<Omit<ApplyResult, "durationMs">> {
    const plan = planApply(this.#h.running ? this.#applied : null, next);
    switch (plan.kind) {
      case "refused":
        return { kind: "none", ok: false, serversChanged: 0, stage: "input", error: plan.error };
      case "none":
        return { kind: "none", ok: true, serversChanged: 0 };
      case "reload":
        return { ...await this.#reload(next, plan.lines), reason: plan.reason };
      case "runtime": {
        // Until the change completes, or a reload replaces it, HAProxy runs neither state: should
        // both fail, the next plan reloads (a revert to the state applied is not "none").
        this.#applied = { ...this.#applied!, unsettled: true };
        const failure = await this.#runtime(plan.changes, next);
        if (!failure) return await this.#runtimeDone(plan.changes, next, plan.lines);
        applyFailures.inc({ stage: "runtime" });
        log.warn("Runtime API change failed; applying with a reload instead", { error: failure });
        return { ...await this.#reload(next, plan.lines), reason: "runtime failed" };
      }
    }
  }

  /**
   * Endpoints first (a moved route may need them), then new and changed certificates (before the
   * redirect map sends clients to them), then the maps, then certificates no longer used and the
   * servers of dropped backends; null or the first error.
   */
  async #runtime(changes: RuntimeChanges, next: DesiredState): Promise<string | null> {
    const failure = await this.#slots(changes.servers.commands);
    if (failure) return failure;
    const socket = this.#h.runtimeSocket;
    const path = (file: string) => join(this.#certDir, file);
    const crtList = path("crt-list");
    const certs = changes.certs;
    try {
      for (const file of certs.changed) await replaceCert(socket, path(file), next.pems.get(file)!);
      for (const e of certs.added) await addCert(socket, crtList, path(e.file), next.pems.get(e.file)!, e.sni);
      for (const e of certs.resni) {
        await removeCert(socket, crtList, path(e.file), false);
        await addCrtListLine(socket, crtList, path(e.file), e.sni);
      }
      for (const m of changes.maps) {
        if (m.how === "edit") await editMap(socket, path(m.file), m.edits);
        else await replaceMap(socket, path(m.file), m.to.lines());
      }
      for (const file of certs.removed) await removeCert(socket, crtList, path(file), true);
    } catch (err) {
      return oneLine(err);
    }
    // Dropped backends: nothing routes to them now; their live servers go to maintenance.
    return await this.#slots(changes.dropped.commands);
  }

  /** After the Runtime API changed what runs: the files only have to agree for a later reload. */
  async #runtimeDone(
    changes: RuntimeChanges,
    next: DesiredState,
    lines: MapFileLines,
  ): Promise<Omit<ApplyResult, "durationMs">> {
    const certs = changes.certs;
    for (const file of [...certs.changed, ...certs.added.map((e) => e.file)]) {
      await writeFile(join(this.#certDir, file), next.pems.get(file)!, { mode: 0o600 });
    }
    // Files known to change are not read back to be compared first.
    const changed = { compare: false };
    for (const m of changes.maps) await writeFile(join(this.#certDir, m.file), mapText(next, m.file), changed);
    // Unchanged files are not even read back (a 10,000-ingress haproxy.cfg is about 2 MB).
    if (changes.crtListChanged) await writeFile(join(this.#certDir, "crt-list"), next.crtList);
    if (changes.configChanged) await writeFile(this.#h.configPath, next.config, changed);
    for (const m of changes.maps) m.diff.commit();
    this.#applied = { state: next, lines, extra: extraAfter(this.#applied?.extra, changes) };
    if (certs.removed.length > 0) await this.#removeStalePems(next);
    const certCount = certs.changed.length + certs.added.length + certs.removed.length + certs.resni.length;
    serversChanged.inc(changes.servers.changed);
    mapsChanged.inc(changes.maps.length);
    certsChanged.inc(certCount);
    return {
      kind: "runtime",
      ok: true,
      serversChanged: changes.servers.changed,
      mapsChanged: changes.maps.length,
      certsChanged: certCount,
      backendsDropped: changes.dropped.backends.length,
    };
  }

  /** Sends the slot commands; returns null on success or the first error. */
  async #slots(cmds: readonly SlotCommand[]): Promise<string | null> {
    for (const c of cmds) {
      let answer: string;
      try {
        answer = (await this.#h.runtime(c.command)).trim();
      } catch (err) {
        return `${c.command}: ${oneLine(err)}`;
      }
      const ok = c.kind === "addr"
        ? /^(IP changed|no need to change)/.test(answer)
        : c.kind === "add"
        ? answer === "New server registered."
        : answer === "";
      if (!ok) return `${c.command}: ${answer}`;
    }
    return null;
  }

  async #reload(next: DesiredState, lines: MapFileLines): Promise<Omit<ApplyResult, "durationMs">> {
    const kind: ApplyKind = this.#h.running ? "reload" : "start";
    // 1. Stage and check: nothing the running HAProxy could read is touched before the check passes.
    // A first start has nothing running to protect, and starting parses the configuration anyway
    // (a 10,000-backend configuration takes seconds to parse): it is checked only if it fails.
    if (kind === "reload") {
      const refused = await this.#stageAndCheck(next, kind);
      if (refused) return refused;
    }

    // 2. Certificates before the crt-list and the config that reference them.
    const previous = await this.#snapshot(next);
    try {
      await Deno.mkdir(this.#certDir, { recursive: true, mode: 0o700 });
      for (const [file, pem] of next.pems) await writeFile(join(this.#certDir, file), pem, { mode: 0o600 });
      await writeFile(join(this.#certDir, "crt-list"), next.crtList);
      for (const file of MAP_FILES) await writeFile(join(this.#certDir, file), mapText(next, file));
      if (this.#h.userlistsPath) await writeFile(this.#h.userlistsPath, next.userlists ?? "", { mode: 0o600 });
      await writeFile(this.#h.configPath, next.config);
    } catch (err) {
      await this.#restore(previous);
      return { kind, ok: false, serversChanged: 0, stage: "write", error: oneLine(err) };
    }

    // 3. Reload (or first start), verified.
    if (kind === "start") {
      try {
        await this.#h.start();
      } catch (err) {
        // Refused input waits for a change (stage check); anything else is retried (stage start).
        return await this.#stageAndCheck(next, kind) ??
          { kind, ok: false, serversChanged: 0, stage: "start", error: oneLine(err) };
      }
    } else {
      const r = await this.#h.reload();
      if (!r.ok) {
        await this.#restore(previous);
        return { kind, ok: false, serversChanged: 0, stage: "reload", error: r.error };
      }
    }
    this.#applied = { state: next, lines };
    this.#unprepared = true;
    await this.#removeStalePems(next);
    return { kind, ok: true, serversChanged: 0 };
  }

  /** `haproxy -c` of `next` written to a staging directory; the refusal, or null when it passes. */
  async #stageAndCheck(next: DesiredState, kind: ApplyKind): Promise<Omit<ApplyResult, "durationMs"> | null> {
    const staging = join(this.#workDir, "staging");
    const stagedCerts = join(staging, "certs");
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    await Deno.mkdir(stagedCerts, { recursive: true, mode: 0o700 });
    try {
      for (const [file, pem] of next.pems) await writeFile(join(stagedCerts, file), pem, { mode: 0o600 });
      await writeFile(join(stagedCerts, "crt-list"), next.crtList);
      for (const file of MAP_FILES) await writeFile(join(stagedCerts, file), mapText(next, file));
      const stagedConfig = join(staging, "haproxy.cfg");
      await writeFile(stagedConfig, next.config);
      const stagedUserlists = join(staging, "userlists.cfg");
      if (this.#h.userlistsPath) await writeFile(stagedUserlists, next.userlists ?? "", { mode: 0o600 });
      const check = await this.#h.check(
        stagedConfig,
        { IC_CERT_DIR: stagedCerts },
        this.#h.userlistsPath ? stagedUserlists : undefined,
      );
      if (!check.ok) {
        const error = check.output.split("\n").filter((l) => /ALERT|error/i.test(l)).join(" | ") || check.output;
        return { kind, ok: false, serversChanged: 0, stage: "check", error: error.replaceAll(staging, "<staged>") };
      }
    } finally {
      await Deno.remove(staging, { recursive: true }).catch(() => {});
    }
    return null;
  }

  /** The files a failed reload must put back: config, crt-list and the PEMs `next` would overwrite. */
  async #snapshot(next: DesiredState): Promise<Map<string, { text: string | null; mode: number }>> {
    const snap = new Map<string, { text: string | null; mode: number }>();
    snap.set(this.#h.configPath, { text: await readTextOrNull(this.#h.configPath), mode: 0o644 });
    const userlists = this.#h.userlistsPath;
    if (userlists) snap.set(userlists, { text: await readTextOrNull(userlists), mode: 0o600 });
    const crtList = join(this.#certDir, "crt-list");
    snap.set(crtList, { text: await readTextOrNull(crtList), mode: 0o644 });
    for (const file of MAP_FILES) {
      const path = join(this.#certDir, file);
      snap.set(path, { text: await readTextOrNull(path), mode: 0o644 });
    }
    for (const file of next.pems.keys()) {
      const path = join(this.#certDir, file);
      snap.set(path, { text: await readTextOrNull(path), mode: 0o600 });
    }
    return snap;
  }

  async #restore(snap: Map<string, { text: string | null; mode: number }>): Promise<void> {
    for (const [path, { text, mode }] of snap) {
      try {
        if (text === null) await Deno.remove(path).catch(() => {});
        else await writeFile(path, text, { mode });
      } catch (err) {
        log.error("cannot restore a file of the last good configuration", { path, error: oneLine(err) });
      }
    }
  }

  /** PEM files no longer listed are removed once HAProxy runs without them. */
  async #removeStalePems(next: DesiredState): Promise<void> {
    try {
      for await (const entry of Deno.readDir(this.#certDir)) {
        if (entry.isFile && isPemFile(entry.name) && !next.pems.has(entry.name)) {
          await Deno.remove(join(this.#certDir, entry.name));
          log.info("removed a certificate no longer used", { file: entry.name });
        }
      }
    } catch (err) {
      log.warn("cannot clean the cert dir", { dir: this.#certDir, error: oneLine(err) });
    }
  }
}

/**
 * The servers HAProxy has beyond the slot lines of the configuration a runtime change applied: those
 * it had, without the dropped backends', with the changed backends' replaced by the plan's.
 */
function extraAfter(before: ExtraServers | undefined, changes: RuntimeChanges): ExtraServers | undefined {
  if (!before?.size && changes.servers.extra.size === 0) return undefined;
  const out = new Map(before);
  for (const backend of changes.dropped.backends) out.delete(backend);
  for (const [backend, servers] of changes.servers.extra) {
    if (servers.length > 0) out.set(backend, servers);
    else out.delete(backend);
  }
  return out.size > 0 ? out : undefined;
}

/**
 * How the Applier writes its files: atomically (HAProxy never reads half a file), without waiting
 * for fsync. Every file is rewritten from the ConfigMap and Secrets before any start (a restarted
 * proxy applies with kind "start", which writes every file that differs), so a write lost in a
 * crash is written again; and an fsync costs tens of ms beside etcd, hundreds for the 2 MB
 * haproxy.cfg of 10,000 ingresses on a busy disk.
 */
function writeFile(path: string, data: string, opts: { mode?: number; compare?: boolean } = {}): Promise<boolean> {
  return writeFileAtomic(path, data, { ...opts, durable: false });
}
