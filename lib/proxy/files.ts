/**
 * @module proxy/files
 * The files the proxy hands to HAProxy: written atomically (temporary file in the same directory,
 * fsync, rename, fsync of the directory) so HAProxy never reads half a file, with mode 0600 for
 * key material; and the checks on `secrets.json` entries and TLS Secrets (contracts.md §4) that
 * decide which PEM files may be written and under which name.
 */
import { basename, dirname, join } from "node:path";
// lib/render/patterns.ts imports nothing, so the proxy loads no renderer with its name patterns.
import { isDns1123Label, isDns1123Subdomain, PEM_FILE } from "../render/patterns.ts";

/** A `secrets.json` entry: the kubernetes.io/tls Secret `namespace/name` is written to `<certDir>/<file>`. */
export interface SecretRef {
  readonly file: string;
  readonly namespace: string;
  readonly name: string;
}

/** The only file names a PEM may get: `<namespace>_<name>.pem` of DNS-1123 names. */
export { PEM_FILE };

/**
 * Writes `data` to `path` atomically: readers see the old or the new content, never a mix, also
 * after a crash. Returns false (and writes nothing) when the file already has exactly this
 * content and mode. `durable: false` skips the fsyncs (the rename stays atomic for readers; a
 * crash may lose the write): for files that are rewritten from their source after any restart.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number; durable?: boolean } = {},
): Promise<boolean> {
  const mode = opts.mode ?? 0o644;
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (await sameContent(path, bytes, mode)) return false;
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.tmp-${crypto.randomUUID()}`);
  // createNew + the mode at open: the key material is never readable by others, not even briefly.
  const file = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    try {
      let done = 0;
      while (done < bytes.length) done += await file.write(bytes.subarray(done));
      if (opts.durable !== false) await file.sync();
    } finally {
      file.close();
    }
    await Deno.chmod(tmp, mode); // the umask may have narrowed the mode given at open
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  if (opts.durable !== false) await syncDir(dir);
  return true;
}

async function sameContent(path: string, bytes: Uint8Array, mode: number): Promise<boolean> {
  try {
    const st = await Deno.stat(path);
    if (!st.isFile || st.size !== bytes.length || ((st.mode ?? 0) & 0o777) !== mode) return false;
    const old = await Deno.readFile(path);
    if (old.length !== bytes.length) return false;
    // a plain loop: about ten times faster than every() on the 400 kB map of 10,000 routes
    for (let i = 0; i < old.length; i++) if (old[i] !== bytes[i]) return false;
    return true;
  } catch {
    return false;
  }
}

/** fsync of a directory makes the rename itself durable. */
async function syncDir(dir: string): Promise<void> {
  let d: Deno.FsFile | null = null;
  try {
    d = await Deno.open(dir, { read: true });
    await d.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    d?.close();
  }
}

/** Reads a text file, or null when it does not exist. */
export async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * Parses and checks `secrets.json`: an array of `{file, namespace, name}` with DNS-1123 names,
 * `file` exactly `<namespace>_<name>.pem` and matching {@link PEM_FILE}, sorted by file, no
 * duplicates. Throws an Error naming the bad entry.
 */
export function parseSecretRefs(text: string): SecretRef[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim() === "" ? "[]" : text);
  } catch (err) {
    throw new Error(`secrets.json is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new Error("secrets.json must be a JSON array of {file, namespace, name}");
  const refs: SecretRef[] = [];
  for (const [i, entry] of parsed.entries()) {
    const e = entry as Record<string, unknown> | null;
    if (typeof e !== "object" || e === null) throw new Error(`secrets.json[${i}] is not an object`);
    const { file, namespace, name } = e;
    if (!isDns1123Label(namespace)) {
      throw new Error(`secrets.json[${i}]: namespace ${JSON.stringify(namespace)} is not a DNS-1123 label`);
    }
    if (!isDns1123Subdomain(name)) {
      throw new Error(`secrets.json[${i}]: name ${JSON.stringify(name)} is not a DNS-1123 subdomain`);
    }
    if (typeof file !== "string" || !PEM_FILE.test(file) || file !== `${namespace}_${name}.pem`) {
      throw new Error(`secrets.json[${i}]: file ${JSON.stringify(file)} must be "${namespace}_${name}.pem"`);
    }
    if (refs.some((r) => r.file === file)) throw new Error(`secrets.json: ${file} is listed twice`);
    refs.push(Object.freeze({ file, namespace, name }));
  }
  return refs.sort((a, b) => a.file < b.file ? -1 : a.file > b.file ? 1 : 0);
}

/** The fields of a Secret this module reads. */
export interface TlsSecretLike {
  type?: string;
  metadata?: { name?: string; namespace?: string };
  data?: Record<string, string>;
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----/;
const KEY_BLOCK =
  /-----BEGIN ((RSA|EC) )?PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END ((RSA|EC) )?PRIVATE KEY-----/;

/**
 * The PEM file content HAProxy wants for a kubernetes.io/tls Secret: the certificate chain
 * (`tls.crt`) then the key (`tls.key`). Throws an Error naming the Secret when it is not of that
 * type or does not hold PEM data.
 */
export function tlsSecretPem(ref: SecretRef, secret: TlsSecretLike): string {
  const what = `Secret ${ref.namespace}/${ref.name}`;
  if (secret.type !== "kubernetes.io/tls") {
    throw new Error(`${what} has type ${JSON.stringify(secret.type ?? "")}, not kubernetes.io/tls`);
  }
  const crt = decodeField(secret, "tls.crt", what);
  const key = decodeField(secret, "tls.key", what);
  if (!CERT_BLOCK.test(crt)) throw new Error(`${what}: tls.crt holds no PEM certificate`);
  if (!KEY_BLOCK.test(key)) throw new Error(`${what}: tls.key holds no PEM private key`);
  return `${crt.trimEnd()}\n${key.trimEnd()}\n`;
}

function decodeField(secret: TlsSecretLike, field: string, what: string): string {
  const b64 = secret.data?.[field];
  if (typeof b64 !== "string" || b64 === "") throw new Error(`${what} has no ${field}`);
  let text: string;
  try {
    const bin = atob(b64);
    text = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    throw new Error(`${what}: ${field} is not base64 of UTF-8 text`);
  }
  // A PEM file is ASCII; anything else (NUL, control characters) has no business in it.
  if (/[^\x20-\x7e\r\n\t]/.test(text)) throw new Error(`${what}: ${field} holds non-PEM bytes`);
  return text;
}
