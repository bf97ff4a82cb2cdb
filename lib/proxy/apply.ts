/**
 * @module proxy/apply
 * Applies a rendered configuration (haproxy.cfg, crt-list, routing map files, PEM files) to the
 * running HAProxy with the least disruption, and never leaves it without a good configuration:
 * - identical to what runs → nothing;
 * - same skeleton, same crt-list and the same certificate files → Runtime API, no reload:
 *   `set server` per changed slot, each changed map file replaced atomically and each changed
 *   certificate replaced (lib/proxy/runtime_changes.ts); then the files are written so that a
 *   later reload agrees (HAProxy 2.6 forgets runtime changes on reload);
 * - anything else → the files are staged and checked with `haproxy -c` (real environment, the
 *   staged cert dir), then written atomically (certificates first, config last) and HAProxy is
 *   reloaded through the master socket and the reload verified. A failing check or reload
 *   leaves the last good files and workers in place and is reported (log, metric, result).
 */
import { join } from "node:path";
import { log } from "../log/logger.ts";
import { CA_FILE, isPemFile, PEM_FILE, readTextOrNull, writeFileAtomic } from "./files.ts";
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
import { parseSlots, skeleton, type SlotCommand, slotCommands, type SlotPlan } from "./slots.ts";
import {
  addCert,
  addCrtListLine,
  type CrtListEntry,
  parseCrtList,
  removeCert,
  replaceCert,
  updateMap,
} from "./runtime_changes.ts";
import { isHost } from "../render/patterns.ts";
import { MAP_FILES, type MapFile } from "../render/maps.ts";
import type { ReadPart } from "../transport/parts.ts";
import { CheckedMap } from "./map_state.ts";
import { oneLine } from "../errors.ts";

/** What the ConfigMap and Secrets say HAProxy should run. */
export interface DesiredState {
  readonly config: string;
  readonly crtList: string;
  /**
   * PEM content by file name: certificates ({@link PEM_FILE}), CA bundles ({@link CA_FILE}) and the
   * stand-in certificate (lib/proxy/left_out.ts).
   */
  readonly pems: ReadonlyMap<string, string>;
  /** `userlists.cfg` (the userlists of htpasswd Secrets), HAProxy's second `-f` file; absent: empty. */
  readonly userlists?: string;
  /** The routing map files (lib/render/maps.ts) by name; a missing one is empty. */
  readonly maps?: ReadonlyMap<MapFile, string>;
  /**
   * The parts each file that travelled in parts was joined from, in order (docs/config-transport.md;
   * each part's digest computed from its content when it was read). Two states whose file came in
   * parts are compared by their part lists, never byte by byte; and a map's changed lines are in
   * its changed parts.
   */
  readonly parts?: ReadonlyMap<string, readonly ReadPart[]>;
}

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
  #last: DesiredState | null = null;
  /** The checked lines of the running map files (those of `#last`). */
  #lastLines: MapFileLines = new Map();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: ApplierOptions) {
    this.#h = opts.haproxy;
    this.#workDir = opts.workDir;
    this.#certDir = opts.certDir;
  }

  /** The state HAProxy runs now (null before the first successful start). */
  get current(): DesiredState | null {
    return this.#last;
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
      result = await this.#decideAndApply(next);
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
          durationMs: done.durationMs,
          serversChanged: done.serversChanged,
          mapsChanged: done.mapsChanged ?? 0,
          certsChanged: done.certsChanged ?? 0,
        });
      } else log.v(4)?.info("proxy config unchanged", { durationMs: done.durationMs });
    } else {
      applyFailures.inc({ stage: done.stage ?? "reload" });
      log.error("proxy config not applied; the last good configuration keeps serving", {
        kind: done.kind,
        stage: done.stage,
        error: done.error,
        durationMs: done.durationMs,
      });
    }
    return done;
  }

  async #decideAndApply(next: DesiredState): Promise<Omit<ApplyResult, "durationMs">> {
    for (const file of next.pems.keys()) {
      if (!isPemFile(file)) {
        return { kind: "none", ok: false, serversChanged: 0, stage: "input", error: `bad PEM file name ${file}` };
      }
    }
    const last = this.#last;
    // Map files equal to the running ones were checked when they were applied.
    const lines = mapFileLines(next, last && this.#h.running ? { state: last, lines: this.#lastLines } : null);
    if (typeof lines === "string") return { kind: "none", ok: false, serversChanged: 0, stage: "input", error: lines };
    if (last && this.#h.running) {
      if (sameState(last, next)) return { kind: "none", ok: true, serversChanged: 0 };
      const plan = runtimePlan(last, next);
      if (plan) {
        const failure = await this.#runtime(plan, lines, next);
        if (!failure) {
          // What runs already changed; the files only have to agree for a later reload.
          const certs = plan.certs;
          for (const file of [...certs.changed, ...certs.added.map((e) => e.file)]) {
            await writeFile(join(this.#certDir, file), next.pems.get(file)!, { mode: 0o600 });
          }
          // Files known to change are not read back to be compared first.
          const changed = { compare: false };
          for (const file of plan.maps) await writeFile(join(this.#certDir, file), mapOf(next, file), changed);
          // Unchanged files are not even read back (a 10,000-ingress haproxy.cfg is about 2 MB).
          if (next.crtList !== last.crtList) {
            await writeFile(join(this.#certDir, "crt-list"), next.crtList);
          }
          if (!sameText(last, next, "haproxy.cfg")) await writeFile(this.#h.configPath, next.config, changed);
          for (const file of plan.maps) plan.mapDiffs.get(file)!.commit();
          [this.#last, this.#lastLines] = [next, lines];
          if (certs.removed.length > 0) await this.#removeStalePems(next);
          const certCount = certs.changed.length + certs.added.length + certs.removed.length + certs.resni.length;
          serversChanged.inc(plan.slots.changed);
          mapsChanged.inc(plan.maps.length);
          certsChanged.inc(certCount);
          return {
            kind: "runtime",
            ok: true,
            serversChanged: plan.slots.changed,
            mapsChanged: plan.maps.length,
            certsChanged: certCount,
          };
        }
        applyFailures.inc({ stage: "runtime" });
        log.warn("Runtime API change failed; applying with a reload instead", { error: failure });
      }
    }
    return await this.#reload(next, lines);
  }

  /**
   * Endpoints first (a moved route may need them), then new and changed certificates (before the
   * redirect map sends clients to them), then the maps, then certificates no longer used; null or
   * the first error.
   */
  async #runtime(plan: RuntimePlan, lines: MapFileLines, next: DesiredState): Promise<string | null> {
    const failure = await this.#slots(plan.slots.commands);
    if (failure) return failure;
    const socket = this.#h.runtimeSocket;
    const path = (file: string) => join(this.#certDir, file);
    const crtList = path("crt-list");
    try {
      for (const file of plan.certs.changed) await replaceCert(socket, path(file), next.pems.get(file)!);
      for (const e of plan.certs.added) await addCert(socket, crtList, path(e.file), next.pems.get(e.file)!, e.sni);
      for (const e of plan.certs.resni) {
        await removeCert(socket, crtList, path(e.file), false);
        await addCrtListLine(socket, crtList, path(e.file), e.sni);
      }
      for (const file of plan.maps) {
        const diff = (this.#lastLines.get(file) ?? CheckedMap.EMPTY).diff(lines.get(file)!);
        plan.mapDiffs.set(file, diff);
        await updateMap(socket, path(file), diff, () => lines.get(file)!.lines());
      }
      for (const file of plan.certs.removed) await removeCert(socket, crtList, path(file), true);
    } catch (err) {
      return oneLine(err);
    }
    return null;
  }

  /** Sends the slot commands; returns null on success or the first error. */
  async #slots(cmds: SlotCommand[]): Promise<string | null> {
    for (const c of cmds) {
      let answer: string;
      try {
        answer = (await this.#h.runtime(c.command)).trim();
      } catch (err) {
        return `${c.command}: ${oneLine(err)}`;
      }
      const ok = c.kind === "addr" ? /^(IP changed|no need to change)/.test(answer) : answer === "";
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
      for (const file of MAP_FILES) await writeFile(join(this.#certDir, file), mapOf(next, file));
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
    this.#last = next;
    this.#lastLines = lines;
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
      for (const file of MAP_FILES) await writeFile(join(stagedCerts, file), mapOf(next, file));
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
 * How the Applier writes its files: atomically (HAProxy never reads half a file), without waiting
 * for fsync. Every file is rewritten from the ConfigMap and Secrets before any start (a restarted
 * proxy applies with kind "start", which writes every file that differs), so a write lost in a
 * crash is written again; and an fsync costs tens of ms beside etcd, hundreds for the 2 MB
 * haproxy.cfg of 10,000 ingresses on a busy disk.
 */
function writeFile(path: string, data: string, opts: { mode?: number; compare?: boolean } = {}): Promise<boolean> {
  return writeFileAtomic(path, data, { ...opts, durable: false });
}

/** True when `a` and `b` ask for the same files. */
export function sameState(a: DesiredState, b: DesiredState): boolean {
  return sameText(a, b, "haproxy.cfg") && a.crtList === b.crtList && samePems(a.pems, b.pems) &&
    (a.userlists ?? "") === (b.userlists ?? "") &&
    MAP_FILES.every((f) => sameText(a, b, f));
}

function mapOf(s: DesiredState, file: MapFile): string {
  return s.maps?.get(file) ?? "";
}

/**
 * True when `a` and `b` have the same `file` (haproxy.cfg or a map): for two files joined from
 * parts, the same part list (digests of the content read; the split is content-defined, so a text
 * split again gives the same parts, and at worst an equal text split otherwise counts as a change
 * that changes nothing); else the same text.
 */
function sameText(a: DesiredState, b: DesiredState, file: "haproxy.cfg" | MapFile): boolean {
  const [pa, pb] = [a.parts?.get(file), b.parts?.get(file)];
  if (pa && pb) return pa.length === pb.length && pa.every((p, i) => p.sha256 === pb[i].sha256);
  return file === "haproxy.cfg" ? a.config === b.config : mapOf(a, file) === mapOf(b, file);
}

type MapFileLines = ReadonlyMap<MapFile, CheckedMap>;

/**
 * The checked lines of each map file of `s`, or why one cannot be used (lib/render/maps.ts's
 * MAP_LINE). A file the same as in `known.state` reuses its checked lines; a changed one has only
 * the lines that were not there checked (lib/proxy/map_state.ts).
 */
function mapFileLines(
  s: DesiredState,
  known: { state: DesiredState; lines: MapFileLines } | null,
): MapFileLines | string {
  for (const file of s.maps?.keys() ?? []) {
    if (!(MAP_FILES as readonly string[]).includes(file)) return `unknown map ${file}`;
  }
  const lines = (file: MapFile) => {
    const before = known?.lines.get(file) ?? null;
    if (before && sameText(known!.state, s, file)) return before;
    return CheckedMap.of(file, mapOf(s, file), s.parts?.get(file), before);
  };
  try {
    return new Map(MAP_FILES.map((file) => [file, lines(file)]));
  } catch (err) {
    return oneLine(err);
  }
}

function samePems(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** What the Runtime API changes to take the running state to the next one. */
export interface RuntimePlan {
  slots: SlotPlan;
  /** Map files whose content changed. */
  maps: MapFile[];
  /** Their changes as sent (committed once the whole plan ran). */
  mapDiffs: Map<MapFile, ReturnType<CheckedMap["diff"]>>;
  certs: CertChanges;
}

/** Certificate changes between two states whose configurations have the same skeleton. */
export interface CertChanges {
  /** Files in both whose PEM changed. */
  changed: string[];
  /** New files with their crt-list line. */
  added: CrtListEntry[];
  /** Files no longer listed. */
  removed: string[];
  /** Files in both whose SNI filters changed. */
  resni: CrtListEntry[];
}

/**
 * The certificate changes from `last` to `next`, or null when they need a reload: a crt-list of
 * another shape (per-host options such as client certificate checks), or a CA bundle added,
 * removed or changed (HAProxy reads `ca-file`s when it loads its configuration).
 */
export function certChanges(last: DesiredState, next: DesiredState): CertChanges | null {
  const cas = (s: DesiredState) => [...s.pems].filter(([f]) => CA_FILE.test(f));
  if (JSON.stringify(cas(last)) !== JSON.stringify(cas(next))) return null;
  const certs = (s: DesiredState) => new Map([...s.pems].filter(([f]) => PEM_FILE.test(f)));
  const [lastPems, nextPems] = [certs(last), certs(next)];
  const changed = (files: Iterable<string>) => [...files].filter((f) => lastPems.get(f) !== nextPems.get(f));
  if (last.crtList === next.crtList) {
    if (lastPems.size !== nextPems.size || [...nextPems.keys()].some((f) => !lastPems.has(f))) return null;
    return { changed: changed(nextPems.keys()), added: [], removed: [], resni: [] };
  }
  const from = parseCrtList(last.crtList, (f) => PEM_FILE.test(f), isHost);
  const to = parseCrtList(next.crtList, (f) => PEM_FILE.test(f), isHost);
  // every PEM is listed exactly once (what the renderer writes); anything else is left to a reload
  if (!from || !to || !sameKeys(from, lastPems) || !sameKeys(to, nextPems)) return null;
  return {
    changed: changed([...to.keys()].filter((f) => from.has(f))),
    added: [...to.values()].filter((e) => !from.has(e.file)),
    removed: [...from.keys()].filter((f) => !to.has(f)),
    resni: [...to.values()].filter((e) => from.has(e.file) && from.get(e.file)!.sni.join(" ") !== e.sni.join(" ")),
  };
}

function sameKeys(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): boolean {
  return a.size === b.size && [...a.keys()].every((k) => b.has(k));
}

/**
 * The Runtime API changes that take the running state `last` to `next`, or null when `next`
 * needs a reload (the structure differs, a crt-list of another shape, or a slot is not runtime-safe).
 */
export function runtimePlan(last: DesiredState, next: DesiredState): RuntimePlan | null {
  // The same haproxy.cfg (a route-only or certificate change): no slot to compare.
  const sameConfig = sameText(last, next, "haproxy.cfg");
  if (!sameConfig && skeleton(last.config) !== skeleton(next.config)) return null;
  // users are read with the configuration: a changed htpasswd Secret is a reload
  if ((last.userlists ?? "") !== (next.userlists ?? "")) return null;
  const certs = certChanges(last, next);
  if (!certs) return null;
  let slots: SlotPlan | null = { commands: [], changed: 0 };
  if (!sameConfig) {
    const from = parseSlots(last.config);
    const to = parseSlots(next.config);
    if (!from || !to) return null;
    slots = slotCommands(from, to);
  }
  if (!slots) return null;
  return {
    slots,
    maps: MAP_FILES.filter((f) => !sameText(last, next, f)),
    mapDiffs: new Map(),
    certs,
  };
}

/** The slot commands when `next` differs from `last` in endpoints only, else null. */
export function endpointOnly(last: DesiredState, next: DesiredState): SlotPlan | null {
  const plan = runtimePlan(last, next);
  const c = plan?.certs;
  const noCerts = c && c.changed.length + c.added.length + c.removed.length + c.resni.length === 0;
  return plan && plan.maps.length === 0 && noCerts && last.crtList === next.crtList ? plan.slots : null;
}
