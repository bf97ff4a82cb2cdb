/**
 * @module transport/parts
 * How a proxy's configuration travels through the API server without any object exceeding its
 * 1 MiB limit, and without a change to one Ingress resending the configuration of all of them
 * (docs/config-transport.md). Pure functions: the controller splits, the proxy assembles.
 *
 * - A configuration whose files fit `INLINE_LIMIT` together stays in the proxy's ConfigMap as
 *   today (contracts §4): the "head".
 * - Otherwise each file larger than `FILE_INLINE_LIMIT` is cut into parts at content-defined
 *   boundaries and each part goes into a ConfigMap of its own (`<proxy>-part-<slot>`); the head
 *   keeps the small files and `parts.json`, the ordered list of `{name, sha256}` of each split
 *   file. A boundary depends only on the unit it precedes, so editing one backend or one map line
 *   changes one part (rarely two) and the other parts keep their content and their slot.
 * - Units: a line that does not start with white space opens a unit and the lines that follow
 *   with leading white space belong to it (an HAProxy section, a map or crt-list line, one JSON
 *   array item per line). Parts are joined back byte for byte.
 */
import { createHash } from "node:crypto";
import { DEFLATE_SUFFIX, deflatedForm, MAX_PART_BYTES, PART_DATA_KEY } from "./part_encoding.ts";

export { MAX_PART_BYTES, PART_DATA_KEY };

/** All files together up to this size stay inline in the head. */
export const INLINE_LIMIT = 512 * 1024;
/** Above INLINE_LIMIT, files up to this size still stay inline. */
export const FILE_INLINE_LIMIT = 32 * 1024;
/**
 * Mean part size the boundaries aim at, in characters of text. Small enough that the part a change
 * rewrites, and carries in the head, is a cheap write and a cheap read: the controller cuts, hashes
 * and deflates it again, the proxy inflates it, hashes it and checks its map lines again (a one-route
 * change of 10,000 took about 4 ms longer with parts of 64 KiB of map lines); large enough that
 * 10,000 Ingresses make a few dozen parts. Parts are stored deflated (lib/transport/part_encoding.ts).
 */
export const TARGET_PART_BYTES = 16 * 1024;
/**
 * Files cut into parts of a multiple of the target: `haproxy.cfg`, which a route change never
 * touches (an endpoint change rewrites one of its parts), in parts of 128 KiB, since each part
 * creation costs the API server about the same whatever its size and a first publish creates them
 * all: 8.2 MB of text at 100,000 Ingresses make 63 parts instead of 250.
 */
export const TARGET_SCALES: Readonly<Record<string, number>> = Object.freeze({ "haproxy.cfg": 8 });
/**
 * A file of more than this many targets is cut into parts of twice the target (and goes back to
 * the target below LARGE_FILE_DOWN of them): 4 MiB of map lines (about 120,000 routes) are cut
 * into parts of 32 KiB.
 */
export const LARGE_FILE_TARGETS = 256;
export const LARGE_FILE_DOWN = 192;

/**
 * The part size a file of `size` characters is cut at, for the target `base`: `2 * base` above
 * LARGE_FILE_TARGETS targets. `last`, the size it was cut at the last time, is kept between
 * LARGE_FILE_DOWN and LARGE_FILE_TARGETS targets, so that a file whose size goes back and forth
 * around the limit is not cut anew (every part rewritten) at each crossing.
 */
export function partTargetOf(size: number, base: number, last?: number): number {
  if (size > LARGE_FILE_TARGETS * base) return 2 * base;
  if (last === 2 * base && size >= LARGE_FILE_DOWN * base) return last;
  return base;
}

/** Head key listing the parts of each split file. */
export const PARTS_KEY = "parts.json";
/** Annotation on a part ConfigMap: the sha256 (hex) of its content. */
export const PART_SHA_ANNOTATION = "ingress-controller.io/part-sha256";

/**
 * Annotation on the head ConfigMap: the sha256 (hex) of its whole `data` ({@link configDigest}).
 * The proxy applies a head only when it matches; the controller compares it with what it wrote.
 */
export const CONFIG_SHA_ANNOTATION = "ingress-controller.io/config-sha256";

export interface PartRef {
  /** Name of the part ConfigMap. */
  name: string;
  /** sha256 (hex) of its content. */
  sha256: string;
}

export interface Part extends PartRef {
  content: string;
  /** The content deflated, base64 (lib/transport/part_encoding.ts), when that is smaller: stored in `binaryData`. */
  deflated: string | null;
  /** The head carries this content itself (`carried.<sha256>`): the part is written after the head. */
  carried?: boolean;
}

export interface SplitResult {
  /** `data` of the head ConfigMap. */
  head: Record<string, string>;
  /** `binaryData` of the head ConfigMap: the carried parts that travel deflated (`carried.<sha256>.deflate`). */
  headBinary: Record<string, string>;
  /** The parts the head refers to, each once (a part shared by two files is stored once). */
  parts: Part[];
}

export function sha256Hex(s: string): string {
  return createHash("sha256").update(s).digest("hex");
}

/**
 * The digest of a head's `data` and `binaryData`: sha256 (hex) of the JSON array of the `[key,
 * value]` pairs of its `data` in key order, or, when it has `binaryData`, of the array of both such
 * arrays (JSON: no two different contents give the same text, and an array of pairs is never an
 * array of two arrays of pairs). A value that is not a string counts as JSON too, so anything but
 * the controller's own data fails to match.
 */
export function configDigest(
  data: Readonly<Record<string, unknown>> | null | undefined,
  binaryData?: Readonly<Record<string, unknown>> | null,
): string {
  const entries = (d: Readonly<Record<string, unknown>> | null | undefined) =>
    Object.keys(d ?? {}).sort().map((k) => [k, d![k]]);
  const binary = entries(binaryData);
  return sha256Hex(JSON.stringify(binary.length === 0 ? entries(data) : [entries(data), binary]));
}

/** Name of part slot `slot` of proxy `proxy` (a ConfigMap name: `proxy` is a DNS-1035 label). */
export function partName(proxy: string, slot: number): string {
  return `${proxy}-part-${slot}`;
}

/** The slot of a part name of `proxy`, or null. */
export function slotOf(proxy: string, name: string): number | null {
  const prefix = `${proxy}-part-`;
  if (!name.startsWith(prefix)) return null;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9][0-9]{0,5})$/.test(rest) ? Number(rest) : null;
}

/** Cuts `text` into units (see the module header), keeping every byte. */
export function units(text: string): string[] {
  return [...unitsFrom(text, 0)];
}

/** The units of `text` from `start` (a unit start) on. */
function* unitsFrom(text: string, start: number): Generator<string> {
  let pos = start;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const end = nl === -1 ? text.length : nl + 1;
    const next = text.charCodeAt(end);
    // The unit ends before a line that starts with something other than white space.
    if (end >= text.length || (next !== 0x20 && next !== 0x09 && next !== 0x0a)) {
      yield text.slice(start, end);
      start = end;
    }
    pos = end;
  }
}

/** The length of the unit of `text` that starts at `start`. */
function firstUnitLength(text: string, start: number): number {
  return unitsFrom(text, start).next().value?.length ?? 0;
}

/** The sizes that decide when and how a configuration is split. */
export interface SplitLimits {
  inline: number;
  fileInline: number;
  targetPart: number;
  /** New part content up to this size in all (and CARRY_PARTS parts) rides in the head; default CARRY_LIMIT. */
  carry?: number;
  /** Files cut at a multiple of `targetPart` (TARGET_SCALES by default; none when other limits are given). */
  scales?: Readonly<Record<string, number>>;
}

export const DEFAULT_LIMITS: SplitLimits = Object.freeze({
  inline: INLINE_LIMIT,
  fileInline: FILE_INLINE_LIMIT,
  targetPart: TARGET_PART_BYTES,
  scales: TARGET_SCALES,
});

/**
 * A change's new parts ride in the head when they are this small in all (docs/config-transport.md):
 * the head is then the one write a change waits for, and the proxy reads nothing else.
 */
export const CARRY_LIMIT = 128 * 1024; // stored characters: deflated, base64, where that is smaller
/** ... and at most this many (a first publish, with every part new, writes its parts first). */
export const CARRY_PARTS = 2;
/** Head key prefix of carried part content: `carried.<sha256>` in `data`, `carried.<sha256>.deflate` in `binaryData`. */
export const CARRIED_PREFIX = "carried.";

export function carriedKey(sha256: string): string {
  return `${CARRIED_PREFIX}${sha256}`;
}

/** FNV-1a over the UTF-16 code units: cheap, stable, well spread (a boundary decision, not a digest). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A boundary before `unit` with probability size/target, decided by the unit's own bytes. */
function boundaryBefore(unit: string, target: number): boolean {
  return fnv1a(unit) / 0x1_0000_0000 < unit.length / target;
}

/**
 * Cuts `text` into chunks at content-defined unit boundaries; joined, they give `text` back. The
 * chunks are slices of `text`: they hold no copy of it (the configuration of 10,000 Ingresses is
 * 2 MB), and a caller keeping them keeps `text` (see resliced).
 */
export function chunks(text: string, target = TARGET_PART_BYTES): string[] {
  const out: string[] = [];
  let from = 0; // where the chunk being built starts
  let pos = 0; // where its units end
  const flush = () => {
    if (pos > from) out.push(text.slice(from, pos));
    from = pos;
  };
  for (const unit of unitsFrom(text, 0)) {
    if (pos > from && boundaryBefore(unit, target)) flush();
    if (pos - from + unit.length > MAX_PART_BYTES) flush();
    pos += unit.length;
    if (unit.length > MAX_PART_BYTES) {
      // Only a hostile or absurd unit gets here: cut it at fixed offsets.
      out.push(...oversizedPieces(unit));
      from = pos;
    }
  }
  flush();
  return out;
}

/**
 * A unit longer than MAX_PART_BYTES cut at fixed offsets, one code unit short where a cut would
 * part a surrogate pair (stored apart, each half would come back from the API server as U+FFFD).
 */
function oversizedPieces(unit: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < unit.length;) {
    let end = Math.min(i + MAX_PART_BYTES, unit.length);
    const before = unit.charCodeAt(end - 1);
    if (end < unit.length && before >= 0xd800 && before <= 0xdbff) end--;
    out.push(unit.slice(i, end));
    i = end;
  }
  return out;
}

/** Whether a chunk may be a piece of an oversized unit (such pieces are MAX_PART_BYTES or one less). */
function mayBePiece(c: ChunkOf): boolean {
  return c.content.length >= MAX_PART_BYTES - 1;
}

/**
 * The chunks of each large file split last, with their digests, per proxy (namespace and name)
 * and file (the last CHUNK_MEMO_FILES of them): a change to one Ingress of 10,000 changes one file
 * (a map), and the others are not cut and hashed again. The renderer hands back the same string for
 * an unchanged file, which compares at once; an equal copy is compared once. A proxy's entries go
 * when its files are inline or gone.
 */
const chunkMemo = new Map<string, { text: string; target: number; chunks: readonly ChunkOf[] }>();
const CHUNK_MEMO_FILES = 64;

interface ChunkOf {
  content: string;
  sha256: string;
}

/**
 * Per proxy (`<namespace>/<proxy>`, the last DEFLATE_MEMO_PROXIES of them): the deflated form of
 * each part of its last split, by sha256, so that a change deflates its new parts only.
 */
const deflateMemo = new Map<string, Map<string, string | null>>();
const DEFLATE_MEMO_PROXIES = 64;

/** Sets each part's deflated form, from the last split of proxy `key` where it had the part. */
function deflateParts(key: string, parts: Part[]): void {
  const known = deflateMemo.get(key);
  const forms = new Map<string, string | null>();
  for (const p of parts) {
    const form = known?.has(p.sha256) ? known.get(p.sha256)! : deflatedForm(p.content);
    forms.set(p.sha256, form);
    p.deflated = form;
  }
  deflateMemo.delete(key);
  deflateMemo.set(key, forms);
  if (deflateMemo.size > DEFLATE_MEMO_PROXIES) deflateMemo.delete(deflateMemo.keys().next().value!);
}

function hashedChunks(key: string, text: string, base: number, known: ReadonlyMap<string, string>): readonly ChunkOf[] {
  const hit = chunkMemo.get(key);
  chunkMemo.delete(key); // most recently used last
  let out: ChunkOf[];
  let target = partTargetOf(text.length, base, hit?.target);
  const cut = (t: number) => chunks(text, t).map((content) => ({ content, sha256: sha256Hex(content) }));
  if (hit && hit.target === target) {
    // An equal copy of the text may be another string: the chunks are cut from the new one, so
    // that the memo does not keep the old one besides it.
    out = hit.text === text ? resliced(text, hit.chunks) : rechunk(hit.text, hit.chunks, text, target);
  } else if (!hit && partTargetOf(text.length, base, 2 * base) !== target) {
    // Between the two sizes with no memory of the last cut (a restart, or the memo moved on): the
    // cut whose parts the proxy has already, so that not every part is written anew.
    const [small, large] = [cut(target), cut(2 * base)];
    const reused = (cs: ChunkOf[]) => cs.filter((c) => known.has(c.sha256)).length;
    [out, target] = reused(large) > reused(small) ? [large, 2 * base] : [small, target];
  } else {
    out = cut(target);
  }
  chunkMemo.set(key, { text, target, chunks: out });
  if (chunkMemo.size > CHUNK_MEMO_FILES) chunkMemo.delete(chunkMemo.keys().next().value!);
  return out;
}

/** The memo's entries (`<namespace>/<proxy>` NUL `<file>`), oldest first: what it holds text for. */
export function memoizedSplits(): string[] {
  return [...chunkMemo.keys()];
}

/** Forgets the memo of proxy `key`'s files other than `kept` (inline or gone now: their text is not held for nothing). */
function forgetChunks(key: string, kept: ReadonlySet<string>): void {
  for (const k of [...chunkMemo.keys()]) {
    if (k.startsWith(`${key}\0`) && !kept.has(k.slice(key.length + 1))) chunkMemo.delete(k);
  }
}

/**
 * The length of the longest common prefix (or, with `piece` reading from the end, suffix) of `a`
 * and `b`, at most `limit`: found by halving, each step comparing one piece of both natively. A
 * loop over the characters of a 400 KB map file cost about a millisecond of every change.
 */
function commonLength(
  a: string,
  b: string,
  limit: number,
  piece: (s: string, from: number, to: number) => string,
): number {
  let known = 0; // the first `known` characters are the same
  let hi = limit;
  while (known < hi) {
    const mid = known + Math.ceil((hi - known) / 2);
    if (piece(a, known, mid) === piece(b, known, mid)) known = mid;
    else hi = mid - 1;
  }
  return known;
}

/**
 * The chunks of `text` as `chunks` would cut it, given the chunks of `before`: a chunk depends only
 * on where it starts and the units from there, so the chunks before the first difference are kept,
 * cutting starts again at the chunk that holds it, and stops once a cut falls where one fell in
 * `before` past the last difference (the rest is the same). Only new chunks are hashed. A cut is
 * decided by the unit after it: the chunk before the one holding the difference is cut again too.
 */
export function rechunk(
  before: string,
  old: readonly ChunkOf[],
  text: string,
  target = TARGET_PART_BYTES,
): ChunkOf[] {
  const fresh = (t: string) => chunks(t, target).map((content) => ({ content, sha256: sha256Hex(content) }));
  // Cuts inside an oversized unit are at fixed offsets, not unit starts: cut everything again.
  if (old.some(mayBePiece)) return fresh(text);
  const common = Math.min(before.length, text.length);
  const first = commonLength(before, text, common, (s, from, to) => s.slice(from, to));
  if (first === before.length && first === text.length) return resliced(text, old);
  // the length of the common suffix, not overlapping the common prefix
  const tail = commonLength(before, text, common - first, (s, from, to) => s.slice(s.length - to, s.length - from));
  // Keep the chunks that end before the first difference.
  const out: ChunkOf[] = [];
  let start = 0;
  let i = 0;
  while (i < old.length && start + old[i].content.length < first) {
    out.push(old[i]);
    start += old[i].content.length;
    i++;
  }
  // The cut after the last kept chunk was decided by the unit after it (its hash, and the size
  // rule): the chunk is cut again unless that unit, to the first character of the line after it
  // (which ends it), lies before the first difference, and so is the same unit.
  if (i > 0 && !(i < old.length && start + firstUnitLength(before, start) < first)) {
    start -= out.pop()!.content.length;
    i--;
  }
  // Old chunk starts past the last difference, as positions in `text`.
  const shift = text.length - before.length;
  const resume = new Map<number, number>();
  for (let k = i, at = start; k < old.length; at += old[k].content.length, k++) {
    if (at >= before.length - tail) resume.set(at + shift, k);
  }
  let from = start; // where the chunk being built starts
  let pos = start; // where its units end
  const push = () => {
    const content = text.slice(from, pos);
    out.push({ content, sha256: sha256Hex(content) });
    from = pos;
  };
  for (const unit of unitsFrom(text, start)) {
    if (pos > from && (boundaryBefore(unit, target) || pos - from + unit.length > MAX_PART_BYTES)) {
      push();
      const k = resume.get(pos);
      if (k !== undefined) return resliced(text, [...out, ...old.slice(k)]);
    }
    if (unit.length > MAX_PART_BYTES) return fresh(text);
    pos += unit.length;
  }
  if (pos > from) push();
  return resliced(text, out);
}

/**
 * `chunks` (each the same content at the same place of `text`) as slices of `text`: a chunk kept
 * from an earlier configuration is a slice of that one, and kept it whole (2 MB at 10,000
 * Ingresses) besides the new one.
 */
function resliced(text: string, chunks: readonly ChunkOf[]): ChunkOf[] {
  let at = 0;
  return chunks.map(({ content, sha256 }) => {
    const piece = text.slice(at, at += content.length);
    return { content: piece, sha256 };
  });
}

function byteSize(files: Readonly<Record<string, string>>): number {
  let n = 0;
  for (const v of Object.values(files)) n += v.length;
  return n;
}

/**
 * Splits `files` for proxy `proxy` (of `namespace`: proxies of the same name in two namespaces are
 * two). `previous` maps part names in use to their sha256: a chunk whose content a previous part
 * holds keeps that part (no write), the others take free slots.
 * `limits` other than the defaults are for tests that want parts from a small configuration.
 */
export function splitConfig(
  proxy: string,
  files: Readonly<Record<string, string>>,
  previous: ReadonlyMap<string, string> = new Map(),
  limits: SplitLimits = DEFAULT_LIMITS,
  namespace = "",
): SplitResult {
  if (PARTS_KEY in files) throw new Error(`${PARTS_KEY} is reserved`);
  const memoKey = `${namespace}/${proxy}`;
  if (byteSize(files) <= limits.inline) {
    forgetChunks(memoKey, new Set());
    deflateMemo.delete(memoKey);
    return { head: { ...files }, headBinary: {}, parts: [] };
  }
  forgetChunks(memoKey, new Set(Object.keys(files).filter((f) => files[f].length > limits.fileInline)));
  const bySha = new Map<string, string>();
  for (const [name, sha] of previous) if (slotOf(proxy, name) !== null && !bySha.has(sha)) bySha.set(sha, name);
  const head: Record<string, string> = {};
  const index: Record<string, PartRef[]> = {};
  const planned: { sha256: string; content: string }[] = [];
  for (const [file, text] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    if (text.length <= limits.fileInline) {
      head[file] = text;
      continue;
    }
    index[file] = [];
    const base = limits.targetPart * (limits.scales?.[file] ?? 1);
    for (const { content, sha256 } of hashedChunks(`${memoKey}\0${file}`, text, base, bySha)) {
      index[file].push({ name: "", sha256 });
      planned.push({ sha256, content });
    }
  }
  // Reuse slots by content, then fill the lowest free slots.
  const names = new Map<string, string>();
  const taken = new Set<number>();
  for (const p of planned) {
    const reuse = bySha.get(p.sha256);
    if (reuse && !names.has(p.sha256)) {
      names.set(p.sha256, reuse);
      taken.add(slotOf(proxy, reuse)!);
    }
  }
  let next = 0;
  for (const p of planned) {
    if (names.has(p.sha256)) continue;
    while (taken.has(next)) next++;
    names.set(p.sha256, partName(proxy, next));
    taken.add(next);
  }
  const parts: Part[] = [];
  const stored = new Set<string>();
  for (const p of planned) {
    const name = names.get(p.sha256)!;
    if (stored.has(name)) continue;
    stored.add(name);
    parts.push({ name, sha256: p.sha256, content: p.content, deflated: null });
  }
  deflateParts(memoKey, parts);
  for (const refs of Object.values(index)) for (const r of refs) r.name = names.get(r.sha256)!;
  head[PARTS_KEY] = JSON.stringify(index);
  // A change's few new parts ride in the head, written once; the parts follow for the next heads.
  const fresh = parts.filter((p) => previous.get(p.name) !== p.sha256);
  const freshBytes = fresh.reduce((n, p) => n + (p.deflated ?? p.content).length, 0);
  const headBinary: Record<string, string> = {};
  if (fresh.length > 0 && fresh.length <= CARRY_PARTS && freshBytes <= (limits.carry ?? CARRY_LIMIT)) {
    for (const p of fresh) {
      if (p.deflated !== null) headBinary[carriedKey(p.sha256) + DEFLATE_SUFFIX] = p.deflated;
      else head[carriedKey(p.sha256)] = p.content;
      p.carried = true;
    }
  }
  return { head, headBinary, parts: parts.sort((a, b) => slotOf(proxy, a.name)! - slotOf(proxy, b.name)!) };
}

/** The part list of a head, validated; throws on a malformed `parts.json`. */
export function partRefs(proxy: string, head: Readonly<Record<string, string>>): Map<string, PartRef[]> {
  const out = new Map<string, PartRef[]>();
  const text = head[PARTS_KEY];
  if (text === undefined) return out;
  const parsed = JSON.parse(text) as unknown;
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`${PARTS_KEY} is not an object`);
  for (const [file, refs] of Object.entries(parsed as Record<string, unknown>)) {
    if (!Array.isArray(refs)) throw new Error(`${PARTS_KEY}: ${JSON.stringify(file)} is not a list`);
    out.set(
      file,
      refs.map((r) => {
        const { name, sha256 } = (r ?? {}) as Record<string, unknown>;
        if (typeof name !== "string" || slotOf(proxy, name) === null) {
          throw new Error(`${PARTS_KEY}: ${JSON.stringify(name)} is not a part of ${proxy}`);
        }
        if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) {
          throw new Error(`${PARTS_KEY}: part ${name} has no sha256`);
        }
        return { name, sha256 };
      }),
    );
  }
  return out;
}

/** A part as read: its content and the sha256 of that content, computed once when it was read. */
export interface ReadPart {
  content: string;
  sha256: string;
}

/** A part as read from `content` (its digest computed here). */
export function readPart(content: string): ReadPart {
  return { content, sha256: sha256Hex(content) };
}

/** A head's files with their parts joined back, and the parts each split file was joined from, in order. */
export interface AssembledConfig {
  files: Record<string, string>;
  parts: Map<string, ReadPart[]>;
}

/**
 * The files of a head with their parts joined back, or the list of parts still missing (absent
 * from `parts`, or holding other content than the head names: a newer write is on its way).
 */
export function assembleConfig(
  proxy: string,
  head: Readonly<Record<string, string>>,
  parts: ReadonlyMap<string, ReadPart>,
): AssembledConfig | { missing: PartRef[] } {
  const refs = partRefs(proxy, head);
  const files: Record<string, string> = {};
  const joined = new Map<string, ReadPart[]>();
  for (const [k, v] of Object.entries(head)) if (k !== PARTS_KEY && !k.startsWith(CARRIED_PREFIX)) files[k] = v;
  const missing: PartRef[] = [];
  for (const [file, list] of refs) {
    const found: ReadPart[] = [];
    // `+=` keeps the parts as they are (a rope): nothing is copied until the text is read
    let text = "";
    for (const r of list) {
      const part = parts.get(r.name);
      if (part === undefined || part.sha256 !== r.sha256) missing.push(r);
      else {
        text += part.content;
        found.push(part);
      }
    }
    files[file] = text;
    joined.set(file, found);
  }
  return missing.length > 0 ? { missing } : { files, parts: joined };
}
