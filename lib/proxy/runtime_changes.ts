/**
 * @module proxy/runtime_changes
 * Route and certificate changes through HAProxy 2.6's Runtime API, without a reload:
 * - a map file with at most MAP_EDIT_LIMIT changed entries is edited in place, entry by entry:
 *   `add map` and `set map` first, `del map` last. Each command is atomic, and because entries are
 *   only removed once every new one is in, a request in between is answered by the union of the
 *   old and new tables, whose answer (the first lookup step with a match, its longest key) is
 *   always the old or the new routing's answer, never a third one;
 * - a larger change replaces the map atomically: `prepare map` opens an empty new version,
 *   `add map @<v>` fills it (payloads of at most MAP_CHUNK_BYTES, which fit HAProxy's 16 kB CLI
 *   buffer), and `commit map @<v>` switches every lookup to it at once and drops the old version
 *   (its cost grows with the map: 10,000 routes are about 50 payloads);
 * - a map whose line order is its lookup order (`routes-regex.map`, read by `map_reg`) is always
 *   replaced as a new version: `add map` appends, so an entry added in place could land behind
 *   entries it must precede; and only a payload keeps a key's `\` (the command line unescapes it);
 * - a certificate whose PEM changed (same file, same crt-list line) is replaced by `set ssl cert`
 *   and `commit ssl cert` (`abort ssl cert` when the commit fails): new handshakes use it.
 * Names are those HAProxy knows the files by: `<cert dir>/<file>` (the config refers to maps as
 * `${IC_CERT_DIR}/<file>` and `crt-base` is the cert dir).
 */
import { basename } from "node:path";
import { cliCommand } from "../haproxy/cli_socket.ts";
import { ORDERED_MAP_FILES } from "../render/maps.ts";
import type { MapDiff } from "./map_state.ts";

/** The largest `add map` payload (and `;`-joined command line) sent at once. */
export const MAP_CHUNK_BYTES = 8 * 1024;
/** Up to this many changed entries a map is edited in place; beyond, replaced as a new version. */
export const MAP_EDIT_LIMIT = 100;

/** A path that can be placed in a Runtime API command line (its words are split on spaces). */
function checkPath(path: string): string {
  if (!/^[!-~]+$/.test(path)) throw new Error(`${JSON.stringify(path)} cannot be named in a Runtime API command`);
  return path;
}

/** Sends one command; its trimmed answer, or an Error with the command and HAProxy's answer. */
async function send(socket: string, command: string, payload?: string): Promise<string> {
  return (await cliCommand(socket, command, payload === undefined ? {} : { payload })).trim();
}

/** Payloads of whole lines, each at most MAP_CHUNK_BYTES (a longer single line goes alone). */
export function chunkLines(lines: readonly string[], max = MAP_CHUNK_BYTES): string[] {
  const chunks: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const l of lines) {
    if (current.length > 0 && size + l.length + 1 > max) {
      chunks.push(current.join("\n"));
      [current, size] = [[], 0];
    }
    current.push(l);
    size += l.length + 1;
  }
  if (current.length > 0) chunks.push(current.join("\n"));
  return chunks;
}

/** The in-place edits of a map change (lines added and removed): adds and sets first, deletes last. */
export function mapEdits(path: string, change: MapDiff): string[] {
  const split = (l: string) => [l.slice(0, l.indexOf(" ")), l.slice(l.indexOf(" ") + 1)] as const;
  const gone = new Map(change.removed.map(split));
  const edits: string[] = [];
  for (const [k, v] of change.added.map(split)) edits.push(`${gone.delete(k) ? "set" : "add"} map ${path} ${k} ${v}`);
  for (const k of gone.keys()) edits.push(`del map ${path} ${k}`);
  return edits;
}

/**
 * Turns the map HAProxy loaded from `path` into `to` (`<key> <value>` lines, in order), given the
 * lines that `change` adds and removes: in place when few entries change, no key holds a `;`
 * (which separates CLI commands) and the map's order does not matter, else as a new version
 * committed at once (only then are all of `to`'s lines needed). Returns how: "edit" or "replace".
 */
export async function updateMap(
  socket: string,
  path: string,
  change: MapDiff,
  to: () => readonly string[],
): Promise<"edit" | "replace"> {
  const name = checkPath(path);
  const edits = mapEdits(name, change);
  if (edits.length > MAP_EDIT_LIMIT || edits.some((e) => e.includes(";")) || ORDERED_MAP_FILES.has(basename(name))) {
    await replaceMap(socket, name, to());
    return "replace";
  }
  // several commands per connection (`;`-separated); each answers nothing on success
  for (const line of chunkLines(edits).map((c) => c.replaceAll("\n", "; "))) {
    const answer = await send(socket, line);
    if (answer !== "") throw new Error(`${line.slice(0, 200)}: ${answer.replaceAll("\n", " ")}`);
  }
  return "edit";
}

/** Replaces the whole content of the map HAProxy loaded from `path` by `lines` (`<key> <value>`), atomically. */
export async function replaceMap(socket: string, path: string, lines: readonly string[]): Promise<void> {
  const name = checkPath(path);
  const prepared = await send(socket, `prepare map ${name}`);
  const version = /^New version created: (\d+)$/.exec(prepared)?.[1];
  if (!version) throw new Error(`prepare map ${name}: ${prepared}`);
  for (const chunk of chunkLines(lines)) {
    const added = await send(socket, `add map @${version} ${name}`, chunk);
    if (added !== "") throw new Error(`add map @${version} ${name}: ${added}`);
  }
  const committed = await send(socket, `commit map @${version} ${name}`);
  if (committed !== "") throw new Error(`commit map @${version} ${name}: ${committed}`);
}

/** Replaces the certificate and key HAProxy loaded from `path` by `pem` (certificate chain then key). */
export async function replaceCert(socket: string, path: string, pem: string): Promise<void> {
  const name = checkPath(path);
  // A payload ends at its first empty line; PEM parsers ignore blank lines and carriage returns.
  const payload = pem.replaceAll("\r", "").split("\n").filter((l) => l.trim() !== "").join("\n");
  const set = await send(socket, `set ssl cert ${name}`, payload);
  if (!/^Transaction (created|updated) for certificate /.test(set)) throw new Error(`set ssl cert ${name}: ${set}`);
  const committed = await send(socket, `commit ssl cert ${name}`);
  if (!/Success!/.test(committed)) {
    await send(socket, `abort ssl cert ${name}`).catch(() => "");
    throw new Error(`commit ssl cert ${name}: ${committed.replaceAll("\n", " ")}`);
  }
}

/** One crt-list line as the renderer writes it: a PEM file and its SNI filters. */
export interface CrtListEntry {
  readonly file: string;
  readonly sni: readonly string[];
}

/**
 * Parses a crt-list of `<file> [<sni>…]` lines (one per file) with `isFile`/`isSni` checks;
 * null when a line has another shape (options, comments, a file twice): then only a reload applies it.
 */
export function parseCrtList(
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

/** Loads a new certificate and serves it for its SNI filters (appended to the running crt-list). */
export async function addCert(
  socket: string,
  crtList: string,
  path: string,
  pem: string,
  sni: readonly string[],
): Promise<void> {
  const name = checkPath(path);
  const created = await send(socket, `new ssl cert ${name}`);
  if (!/^New empty certificate store /.test(created)) throw new Error(`new ssl cert ${name}: ${created}`);
  await replaceCert(socket, name, pem);
  await addCrtListLine(socket, crtList, name, sni);
}

/** Adds the crt-list line of an already loaded certificate. */
export async function addCrtListLine(
  socket: string,
  crtList: string,
  path: string,
  sni: readonly string[],
): Promise<void> {
  const list = checkPath(crtList);
  const added = await send(socket, `add ssl crt-list ${list}`, [checkPath(path), ...sni.map(checkPath)].join(" "));
  if (!/Success!/.test(added)) throw new Error(`add ssl crt-list ${list} ${path}: ${added.replaceAll("\n", " ")}`);
}

/** Removes a certificate's crt-list line; with `unload`, the certificate too (it is no longer used). */
export async function removeCert(socket: string, crtList: string, path: string, unload: boolean): Promise<void> {
  const [list, name] = [checkPath(crtList), checkPath(path)];
  const removed = await send(socket, `del ssl crt-list ${list} ${name}`);
  if (!/deleted in crtlist/.test(removed)) throw new Error(`del ssl crt-list ${list} ${name}: ${removed}`);
  if (!unload) return;
  const deleted = await send(socket, `del ssl cert ${name}`);
  if (!/deleted!/.test(deleted)) throw new Error(`del ssl cert ${name}: ${deleted}`);
}
