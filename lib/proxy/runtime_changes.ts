/**
 * @module proxy/runtime_changes
 * Route and certificate changes through HAProxy 2.6's Runtime API, without a reload:
 * - a map file is replaced atomically: `prepare map` opens an empty new version, `add map @<v>`
 *   fills it (payloads of at most MAP_CHUNK_BYTES, which fit HAProxy's 16 kB CLI buffer), and
 *   `commit map @<v>` switches every lookup to it at once and drops the old version;
 * - a certificate whose PEM changed (same file, same crt-list line) is replaced by `set ssl cert`
 *   and `commit ssl cert` (`abort ssl cert` when the commit fails): new handshakes use it.
 * Names are those HAProxy knows the files by: `<cert dir>/<file>` (the config refers to maps as
 * `${IC_CERT_DIR}/<file>` and `crt-base` is the cert dir).
 */
import { cliCommand } from "../haproxy/cli_socket.ts";

/** The largest `add map` payload sent at once. */
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
