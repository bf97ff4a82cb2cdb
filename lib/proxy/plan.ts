/**
 * @module proxy/plan
 * The proxy's reload decision, planned without I/O from two states: the one HAProxy runs (the last
 * state applied, with the checked lines of its map files) and the next one. The plan is
 * - refused: the next state cannot be used (a PEM file name, an unknown map file, a map line that is
 *   not `<key> <backend>`): nothing is applied;
 * - reload, whatever the next state, after a Runtime API change that did not complete and whose
 *   reload failed (`Running.unsettled`): what HAProxy runs is then known to no one;
 * - none: both ask for the same files;
 * - runtime: the configurations are plain (HAProxy cuts their sections where the proxy does:
 *   lib/render/slots.ts's `plainSections`) and have the same skeleton (lib/proxy/slots.ts), or the next one's is the
 *   running one's minus whole backends that nothing in the next state names
 *   (lib/render/dropped_backends.ts: the running HAProxy keeps them, unused, until its next reload),
 *   the same userlists and CA files, and crt-lists of plain `<file> [<sni>…]` lines, one per
 *   certificate file: the changes the Runtime API makes (lib/proxy/runtime_changes.ts sends them),
 *   by part: the server slots (with `add server` where a growable backend's endpoints outnumber
 *   the servers HAProxy has: the running configuration's and `Running.extra`), the map files (each
 *   edited in place, or replaced as a new version: `mapChange`), the certificates (replaced, added, removed, their SNI filters changed) and the
 *   live servers of dropped backends put in maintenance;
 * - reload: anything else, with the reason: HAProxy reads it with its configuration.
 * lib/proxy/apply.ts carries a plan out (files, Runtime API, reload, rollback).
 */
import { oneLine } from "../common/errors.ts";
import { isHost } from "../render/patterns.ts";
import { MAP_FILES, type MapFile, ORDERED_MAP_FILES } from "../render/maps.ts";
import type { ReadPart } from "../transport/parts.ts";
import { CA_FILE, isPemFile, PEM_FILE } from "./files.ts";
import { CheckedMap, type MapDiff } from "./map_state.ts";
import { alignSections, namedIn, sameSkeleton, sectionList } from "../render/dropped_backends.ts";
import { plainSections } from "../render/slots.ts";
import {
  type ExtraServers,
  growableBackends,
  parseSlots,
  retireCommands,
  setsServerState,
  type Slot,
  type SlotCommand,
  slotCommands,
  type SlotPlan,
} from "./slots.ts";

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

/** The checked lines of each map file of a state (lib/proxy/map_state.ts). */
export type MapFileLines = ReadonlyMap<MapFile, CheckedMap>;

/** What HAProxy runs: the state last applied and the checked lines of its map files. */
export interface Running {
  readonly state: DesiredState;
  readonly lines: MapFileLines;
  /**
   * The servers HAProxy has beyond the slot lines of `state.config`, by growable backend: added
   * through the Runtime API, or left when endpoints shrank; all parked (lib/proxy/slots.ts).
   * Absent: none (after a start or a reload).
   */
  readonly extra?: ExtraServers;
  /**
   * A Runtime API change from `state` did not complete, and no reload replaced what it changed:
   * HAProxy runs part of it, which neither state describes. The next plan reloads, whatever it is.
   */
  readonly unsettled?: boolean;
}

/** Why a state is applied with a (verified) reload, or a first start. */
export type ReloadReason =
  /** Nothing of ours runs: HAProxy starts (or is restarted) with the whole state. */
  | "not running"
  /**
   * haproxy.cfg differs beyond the addresses of its server slots (its skeleton) and beyond
   * backends dropped that nothing names, or one of the two is not plain (its sections are not cut
   * where HAProxy cuts them).
   */
  | "structure"
  /** The users of htpasswd Secrets are read with the configuration. */
  | "userlists"
  /** A CA bundle was added, removed or changed: `ca-file`s are read with the configuration. */
  | "CA files"
  /** A crt-list with per-line options (client certificate checks), or not one plain line per certificate file. */
  | "crt-list"
  /** A server line the Runtime API cannot change (a name, an unexpected form, other slots). */
  | "servers"
  /** A Runtime API change did not complete and its reload failed (`Running.unsettled`): a reload restores a known state. */
  | "runtime incomplete";

export type Plan =
  | { readonly kind: "refused"; readonly error: string }
  | { readonly kind: "none" }
  /** `lines`: the checked map lines of the next state (what runs once the plan is carried out). */
  | { readonly kind: "runtime"; readonly changes: RuntimeChanges; readonly lines: MapFileLines }
  | { readonly kind: "reload"; readonly reason: ReloadReason; readonly lines: MapFileLines };

/** What the Runtime API changes to take the running state to the next one, and the files that then differ. */
export interface RuntimeChanges {
  /** The `set server` and `add server` commands (lib/proxy/slots.ts). */
  readonly servers: SlotPlan;
  /** The map files whose content changed, in MAP_FILES order. */
  readonly maps: readonly MapChange[];
  readonly certs: CertChanges;
  /**
   * Backends the next configuration drops (nothing in it names them; the running HAProxy keeps
   * them until its next reload), and the commands that put their live servers in maintenance,
   * sent once the maps no longer route to them.
   */
  readonly dropped: { readonly backends: readonly string[]; readonly commands: readonly SlotCommand[] };
  /** haproxy.cfg differs (in its server slots, or by backends dropped). */
  readonly configChanged: boolean;
  readonly crtListChanged: boolean;
}

/** One map file's change: entry by entry, or as a new version holding every line of `to`. */
export type MapChange =
  & {
    readonly file: MapFile;
    /** Its lines in the next state. */
    readonly to: CheckedMap;
    /** The lines it adds and removes; `commit()` once the whole plan ran (lib/proxy/map_state.ts). */
    readonly diff: MapDiff & { commit(): void };
  }
  & ({ readonly how: "edit"; readonly edits: readonly MapEdit[] } | { readonly how: "replace" });

/** One entry edit of a map: `add map`/`set map <key> <value>`, `del map <key>`. */
export type MapEdit =
  | { readonly op: "add" | "set"; readonly key: string; readonly value: string }
  | { readonly op: "del"; readonly key: string };

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

/** One crt-list line as the renderer writes it: a PEM file and its SNI filters. */
export interface CrtListEntry {
  readonly file: string;
  readonly sni: readonly string[];
}

/** Up to this many changed entries a map is edited in place; beyond, replaced as a new version. */
export const MAP_EDIT_LIMIT = 100;

/**
 * The plan that takes HAProxy from `running` (null: nothing of ours runs) to `next` (module header).
 * Map files equal to the running ones were checked when they were applied and are not checked again.
 */
export function planApply(running: Running | null, next: DesiredState): Plan {
  for (const file of next.pems.keys()) {
    if (!isPemFile(file)) return { kind: "refused", error: `bad PEM file name ${file}` };
  }
  const lines = mapFileLines(next, running);
  if (typeof lines === "string") return { kind: "refused", error: lines };
  if (!running) return { kind: "reload", reason: "not running", lines };
  if (running.unsettled) return { kind: "reload", reason: "runtime incomplete", lines };
  if (sameState(running.state, next)) return { kind: "none" };
  const changes = runtimeChanges(running, next, lines);
  return typeof changes === "string" ? { kind: "reload", reason: changes, lines } : { kind: "runtime", changes, lines };
}

/** True when `a` and `b` ask for the same files. */
export function sameState(a: DesiredState, b: DesiredState): boolean {
  return sameText(a, b, "haproxy.cfg") && a.crtList === b.crtList && samePems(a.pems, b.pems) &&
    (a.userlists ?? "") === (b.userlists ?? "") &&
    MAP_FILES.every((f) => sameText(a, b, f));
}

/** The text of map `file` in `s` (a missing one is empty). */
export function mapText(s: DesiredState, file: MapFile): string {
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
  return file === "haproxy.cfg" ? a.config === b.config : mapText(a, file) === mapText(b, file);
}

function samePems(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/**
 * The checked lines of each map file of `s`, or why one cannot be used (lib/render/maps.ts's
 * MAP_LINE). A file the same as in `known.state` reuses its checked lines; a changed one has only
 * the lines that were not there checked (lib/proxy/map_state.ts).
 */
function mapFileLines(s: DesiredState, known: Running | null): MapFileLines | string {
  for (const file of s.maps?.keys() ?? []) {
    if (!(MAP_FILES as readonly string[]).includes(file)) return `unknown map ${file}`;
  }
  const lines = (file: MapFile) => {
    const before = known?.lines.get(file) ?? null;
    if (before && sameText(known!.state, s, file)) return before;
    return CheckedMap.of(file, mapText(s, file), s.parts?.get(file), before);
  };
  try {
    return new Map(MAP_FILES.map((file) => [file, lines(file)]));
  } catch (err) {
    return oneLine(err);
  }
}

/**
 * The Runtime API changes that take `running` to `next` (whose map lines are `lines`), or why
 * `next` needs a reload.
 */
function runtimeChanges(running: Running, next: DesiredState, lines: MapFileLines): RuntimeChanges | ReloadReason {
  const last = running.state;
  // The same haproxy.cfg (a route-only or certificate change): no slot to compare.
  const sameConfig = sameText(last, next, "haproxy.cfg");
  const config = sameConfig
    ? { servers: { commands: [], changed: 0, extra: new Map() }, dropped: NONE_DROPPED }
    : configChanges(last, next, running.extra);
  if (typeof config === "string") return config;
  if ((last.userlists ?? "") !== (next.userlists ?? "")) return "userlists";
  const certs = certChanges(last, next);
  if (typeof certs === "string") return certs;
  return {
    ...config,
    maps: MAP_FILES.filter((f) => !sameText(last, next, f))
      .map((f) => mapChange(f, running.lines.get(f) ?? CheckedMap.EMPTY, lines.get(f)!)),
    certs,
    configChanged: !sameConfig,
    crtListChanged: last.crtList !== next.crtList,
  };
}

const NONE_DROPPED: RuntimeChanges["dropped"] = { backends: [], commands: [] };

/**
 * The slot commands that take `last`'s configuration to `next`'s, and the backends it drops, when
 * the two differ only in slot addresses (and, in growable backends, in the number of slots) and by
 * backends dropped that nothing in `next` (its configuration, userlists and map files) names
 * (lib/render/dropped_backends.ts); else why not. `extra`: the servers HAProxy has beyond `last`'s
 * slot lines. Only the sections that differ are parsed for slots: at 10,000 backends, parsing every
 * slot line of both texts took longer than the rest of a change.
 */
function configChanges(
  last: DesiredState,
  next: DesiredState,
  extra: ExtraServers = new Map(),
): Pick<RuntimeChanges, "servers" | "dropped"> | "structure" | "servers" {
  const [from, to] = [sectionList(last.config), sectionList(next.config)];
  const aligned = alignSections(from, to, sameSkeleton);
  if (!aligned) return "structure";
  // Sections, slots and growable backends are read as HAProxy reads them only in a plain
  // configuration. `next`'s sections are `last`'s but the changed and the dropped ones: only the
  // changed ones are read again (`last` was most often `next` of the plan before).
  if (!knownPlain(last.config) || aligned.changed.some(([, j]) => !plainSections(to.keys[j]))) return "structure";
  plainKnown = { config: next.config, plain: true };
  const dropped = aligned.dropped.map((i) => from.backend(i)!);
  const texts = () => [next.config, next.userlists ?? "", ...MAP_FILES.map((f) => mapText(next, f))];
  if (dropped.length > 0 && namedIn(dropped, texts())) return "structure";
  // A defaults section's `default-server` that sets the servers' state: slot lines do not say it.
  const defaults = defaultsOf(to);
  if (setsServerState(defaults)) return "servers";
  const slotsOf = (list: typeof from, indexes: readonly number[]) =>
    parseSlots(indexes.map((i) => list.keys[i]).join("\n"));
  const before = withExtra(slotsOf(from, aligned.changed.map(([i]) => i)), extra);
  const changedNext = aligned.changed.map(([, j]) => to.keys[j]).join("\n");
  const after = parseSlots(changedNext);
  const gone = slotsOf(from, aligned.dropped);
  const servers = before && after ? slotCommands(before, after, growableBackends(changedNext, defaults)) : null;
  if (!servers || !gone) return "servers";
  return { servers, dropped: { backends: dropped, commands: retireCommands(gone, new Set(dropped)) } };
}

/**
 * The configuration last found plain or not (lib/render/slots.ts's `plainSections`): most often the
 * running one, which a change then does not read whole again.
 */
let plainKnown: { readonly config: string; readonly plain: boolean } | null = null;

/** `plainSections(config)`, read again only for another configuration than the one last known. */
function knownPlain(config: string): boolean {
  if (plainKnown?.config !== config) plainKnown = { config, plain: plainSections(config) };
  return plainKnown.plain;
}

/** `slots` and the servers beyond them of its backends. */
function withExtra(slots: Map<string, Slot> | null, extra: ExtraServers): Map<string, Slot> | null {
  if (!slots || extra.size === 0) return slots;
  for (const backend of new Set([...slots.values()].map((s) => s.backend))) {
    for (const s of extra.get(backend) ?? []) slots.set(`${backend}/${s.server}`, s);
  }
  return slots;
}

/** The `defaults` sections of a (plain) configuration, joined: what its backends may take from them. */
function defaultsOf(config: { readonly keys: readonly string[] }): string {
  return config.keys.filter((k) => k.startsWith("defaults")).join("\n");
}

/**
 * How map `file` goes from `from` to `to` through the Runtime API. In place, entry by entry, when
 * at most MAP_EDIT_LIMIT entries change: `add map` and `set map` first, `del map` last, so a request
 * in between is answered by the union of the old and new tables, whose answer (the first lookup step
 * with a match, its longest key) is always the old or the new routing's answer, never a third one.
 * Otherwise as a new version committed at once (its cost grows with the map): when more entries
 * change, when a key or value holds a `;` (which separates CLI commands), and always for a map whose
 * line order is its lookup order (`routes-regex.map`): `add map` appends, so an entry added in place
 * could land behind entries it must precede; and only a payload keeps a key's `\`.
 */
function mapChange(file: MapFile, from: CheckedMap, to: CheckedMap): MapChange {
  const diff = from.diff(to);
  if (ORDERED_MAP_FILES.has(file)) return { file, to, diff, how: "replace" };
  const edits = mapEdits(diff);
  const semicolon = (e: MapEdit) => e.key.includes(";") || (e.op !== "del" && e.value.includes(";"));
  if (edits.length > MAP_EDIT_LIMIT || edits.some(semicolon)) return { file, to, diff, how: "replace" };
  return { file, to, diff, how: "edit", edits };
}

/** The entry edits of a map change (lines added and removed): adds and sets first, deletes last. */
export function mapEdits(change: MapDiff): MapEdit[] {
  const split = (l: string) => [l.slice(0, l.indexOf(" ")), l.slice(l.indexOf(" ") + 1)] as const;
  const gone = new Map(change.removed.map(split));
  const edits: MapEdit[] = [];
  for (const [key, value] of change.added.map(split)) edits.push({ op: gone.delete(key) ? "set" : "add", key, value });
  for (const key of gone.keys()) edits.push({ op: "del", key });
  return edits;
}

/**
 * The certificate changes from `last` to `next`, or why they need a reload: a crt-list of another
 * shape (per-host options such as client certificate checks, a file not listed once), or a CA
 * bundle added, removed or changed (HAProxy reads `ca-file`s when it loads its configuration).
 */
export function certChanges(last: DesiredState, next: DesiredState): CertChanges | "CA files" | "crt-list" {
  const cas = (s: DesiredState) => [...s.pems].filter(([f]) => CA_FILE.test(f));
  if (JSON.stringify(cas(last)) !== JSON.stringify(cas(next))) return "CA files";
  const certs = (s: DesiredState) => new Map([...s.pems].filter(([f]) => PEM_FILE.test(f)));
  const [lastPems, nextPems] = [certs(last), certs(next)];
  const changed = (files: Iterable<string>) => [...files].filter((f) => lastPems.get(f) !== nextPems.get(f));
  if (last.crtList === next.crtList) {
    if (lastPems.size !== nextPems.size || [...nextPems.keys()].some((f) => !lastPems.has(f))) return "crt-list";
    return { changed: changed(nextPems.keys()), added: [], removed: [], resni: [] };
  }
  const from = parseCrtList(last.crtList, (f) => PEM_FILE.test(f), isHost);
  const to = parseCrtList(next.crtList, (f) => PEM_FILE.test(f), isHost);
  // every PEM is listed exactly once (what the renderer writes); anything else is left to a reload
  if (!from || !to || !sameKeys(from, lastPems) || !sameKeys(to, nextPems)) return "crt-list";
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
 * Parses a crt-list of `<file> [<sni>…]` lines (one per file) with `isFile`/`isSni` checks;
 * null when a line has another shape (options, comments, a file twice): then only a reload applies it.
 */
function parseCrtList(
  text: string,
  isFile: (f: string) => boolean,
  isSni: (h: string) => boolean,
): Map<string, CrtListEntry> | null {
  const entries = new Map<string, CrtListEntry>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const [file, ...sni] = line.split(" ");
    if (!isFile(file) || !sni.every(isSni) || entries.has(file)) return null;
    entries.set(file, { file, sni });
  }
  return entries;
}
