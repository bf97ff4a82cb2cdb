/**
 * @module proxy/runtime_changes
 * Sends the route and certificate changes that lib/proxy/plan.ts planned to HAProxy 2.6's Runtime
 * API, without a reload:
 * - a map edited in place gets its entry edits in that order (`add map` and `set map` first,
 *   `del map` last), several `;`-separated commands per connection; each command is atomic;
 * - a map replaced as a new version: `prepare map` opens an empty new version, `add map @<v>` fills
 *   it (payloads of at most MAP_CHUNK_BYTES, which fit HAProxy's 16 kB CLI buffer, and keep a key's
 *   `\`, which the command line unescapes), and `commit map @<v>` switches every lookup to it at
 *   once and drops the old version (10,000 routes are about 50 payloads);
 * - a certificate whose PEM changed (same file, same crt-list line) is replaced by `set ssl cert`
 *   and `commit ssl cert` (`abort ssl cert` when the commit fails): new handshakes use it; a new one
 *   is created (`new ssl cert`) and listed (`add ssl crt-list`), an old one unlisted and unloaded.
 * Names are those HAProxy knows the files by: `<cert dir>/<file>` (the config refers to maps as
 * `${IC_CERT_DIR}/<file>` and `crt-base` is the cert dir).
 */
import { cliCommand } from "../haproxy/cli_socket.ts";
import type { MapEdit } from "./plan.ts";

/** The largest `add map` payload (and `;`-joined command line) sent at once. */
export const MAP_CHUNK_BYTES = 8 * 1024;

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

/** The command lines of `edits` to the map HAProxy loaded from `path`, in their order. */
export function mapEditCommands(path: string, edits: readonly MapEdit[]): string[] {
  return edits.map((e) => e.op === "del" ? `del map ${path} ${e.key}` : `${e.op} map ${path} ${e.key} ${e.value}`);
}

/** Edits the map HAProxy loaded from `path` in place, entry by entry, in the order of `edits`. */
export async function editMap(socket: string, path: string, edits: readonly MapEdit[]): Promise<void> {
  // several commands per connection (`;`-separated); each answers nothing on success
  for (const line of chunkLines(mapEditCommands(checkPath(path), edits)).map((c) => c.replaceAll("\n", "; "))) {
    const answer = await send(socket, line);
    if (answer !== "") throw new Error(`${line.slice(0, 200)}: ${answer.replaceAll("\n", " ")}`);
  }
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
