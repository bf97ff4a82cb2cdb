/**
 * @module proxy/files
 * The files the proxy hands to HAProxy: written atomically (temporary file in the same directory,
 * fsync, rename, fsync of the directory) so HAProxy never reads half a file, with mode 0600 for
 * key material; and the checks on `secrets.json` entries and their objects (contracts.md §4) that
 * decide which files may be written and under which name: TLS certificates, CA bundles (of Secrets
 * and of ConfigMaps, `configmap-ca`) and the `userlist` sections of htpasswd Secrets (written
 * together to `userlists.cfg`, a second `-f`). A TLS or CA object that is missing or unusable is
 * left out with its reason (lib/proxy/left_out.ts says what takes its place); it never stops the others.
 */
import { basename, dirname, join } from "node:path";
// lib/render/patterns.ts imports nothing, so the proxy loads no renderer with its name patterns.
import { CA_FILE, CONFIGMAP_CA_FILE, isDns1123Label, isDns1123Subdomain, PEM_FILE } from "../render/patterns.ts";
import {
  type Htpasswd,
  parseHtpasswd,
  PASSWORD_COST_LIMITS,
  userlistName,
  userlistSection,
  usersCheckMs,
} from "../render/secret_content.ts";
import { asciiField, caBundle, caBundleProblem, tlsPair } from "../pki/secret_checks.ts";

/**
 * What a listed object becomes: a certificate + key PEM, a CA bundle, or a `userlist` section (of
 * a Secret); or the CA bundle of a ConfigMap (`configmap-ca`).
 */
export type SecretKind = "tls" | "ca" | "htpasswd" | "configmap-ca";
export const SECRET_KINDS: readonly SecretKind[] = ["tls", "ca", "htpasswd", "configmap-ca"];

/**
 * A `secrets.json` entry: the Secret (for `configmap-ca`, the ConfigMap) `namespace/name` is
 * written to `<certDir>/<file>` (`tls`: `<ns>_<name>.pem`, `ca`: `<ns>_<name>_ca.pem`,
 * `configmap-ca`: `<ns>_<name>_configmap_ca.pem`) or, for `htpasswd`, as the userlist
 * `ul_<ns>_<name>` of `userlists.cfg` (`file` is then `null`).
 */
export interface SecretRef {
  readonly kind: SecretKind;
  readonly file: string | null;
  readonly namespace: string;
  readonly name: string;
}

/** The only file names a PEM may get: `<namespace>_<name>.pem` of DNS-1123 names. */
export { CA_FILE, CONFIGMAP_CA_FILE, PEM_FILE };

/** A file of the cert dir the proxy writes from a Secret or ConfigMap: a TLS certificate or a CA bundle. */
export function isSecretFile(file: string): boolean {
  return PEM_FILE.test(file) || CA_FILE.test(file);
}

/**
 * The certificate the proxy serves as the default when the certificates of the crt-list's first
 * line are left out (lib/proxy/left_out.ts). No Secret's file can have this name: a namespace is
 * never empty.
 */
export const STAND_IN_FILE = "_no-certificate.pem";

/** A PEM file of the cert dir: a Secret's file or the stand-in certificate. */
export function isPemFile(file: string): boolean {
  return isSecretFile(file) || file === STAND_IN_FILE;
}

/** The file an object of this kind gets (null: `htpasswd`, which goes into `userlists.cfg`). */
export function secretFile(kind: SecretKind, namespace: string, name: string): string | null {
  switch (kind) {
    case "tls":
      return `${namespace}_${name}.pem`;
    case "ca":
      return `${namespace}_${name}_ca.pem`;
    case "configmap-ca":
      return `${namespace}_${name}_configmap_ca.pem`;
    case "htpasswd":
      return null;
  }
}

/** The object a `secrets.json` entry names is a ConfigMap (else a Secret). */
export function isConfigMapRef(ref: Pick<SecretRef, "kind">): boolean {
  return ref.kind === "configmap-ca";
}

/**
 * Writes `data` to `path` atomically: readers see the old or the new content, never a mix, also
 * after a crash. Returns false (and writes nothing) when the file already has exactly this
 * content and mode. `durable: false` skips the fsyncs (the rename stays atomic for readers; a
 * crash may lose the write): for files that are rewritten from their source after any restart.
 * `compare: false` writes without reading the file first: for content known to differ.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  opts: { mode?: number; durable?: boolean; compare?: boolean } = {},
): Promise<boolean> {
  const mode = opts.mode ?? 0o644;
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (opts.compare !== false && await sameContent(path, bytes, mode)) return false;
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
 * Parses and checks `secrets.json`: an array of `{kind?, file?, namespace, name}` with DNS-1123
 * names, `kind` one of {@link SECRET_KINDS} (default `tls`), `file` exactly what
 * {@link secretFile} gives (absent for `htpasswd`), sorted by kind, then file or name, no
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
  const keys = new Map<SecretRef, string>();
  const listed = new Set<string>();
  for (const [i, entry] of parsed.entries()) {
    const e = entry as Record<string, unknown> | null;
    if (typeof e !== "object" || e === null) throw new Error(`secrets.json[${i}] is not an object`);
    const { namespace, name } = e;
    const kind = e.kind ?? "tls";
    if (!SECRET_KINDS.includes(kind as SecretKind)) {
      throw new Error(`secrets.json[${i}]: kind ${JSON.stringify(kind)} is not one of ${SECRET_KINDS.join(", ")}`);
    }
    if (!isDns1123Label(namespace)) {
      throw new Error(`secrets.json[${i}]: namespace ${JSON.stringify(namespace)} is not a DNS-1123 label`);
    }
    if (!isDns1123Subdomain(name)) {
      throw new Error(`secrets.json[${i}]: name ${JSON.stringify(name)} is not a DNS-1123 subdomain`);
    }
    const want = secretFile(kind as SecretKind, namespace, name);
    const file = e.file ?? null;
    const pattern = kind === "configmap-ca" ? CONFIGMAP_CA_FILE : null;
    if (file !== want || (want !== null && !isSecretFile(want)) || (pattern && !pattern.test(want!))) {
      throw new Error(
        `secrets.json[${i}]: file ${JSON.stringify(file)} must be ` +
          (want === null ? `absent for kind ${kind}` : JSON.stringify(want)),
      );
    }
    const ref: SecretRef = Object.freeze({ kind: kind as SecretKind, file: want, namespace, name });
    const key = refKey(ref);
    if (listed.has(key)) {
      throw new Error(`secrets.json: ${kind} ${objectKind(ref)} ${namespace}/${name} is listed twice`);
    }
    listed.add(key);
    keys.set(ref, key);
    refs.push(ref);
  }
  // Keys made once (and a Set for the duplicates): with 10,000 entries, searching the list took seconds.
  return refs.sort((a, b) => keys.get(a)! < keys.get(b)! ? -1 : keys.get(a)! > keys.get(b)! ? 1 : 0);
}

function refKey(r: SecretRef): string {
  return `${r.kind} ${r.file ?? ""} ${r.namespace}/${r.name}`;
}

/** `Secret` or `ConfigMap`: what an entry names, for messages. */
export function objectKind(ref: Pick<SecretRef, "kind">): "Secret" | "ConfigMap" {
  return isConfigMapRef(ref) ? "ConfigMap" : "Secret";
}

/** The fields of a Secret this module reads. */
export interface TlsSecretLike {
  type?: string;
  metadata?: { name?: string; namespace?: string };
  data?: Record<string, string>;
}

/**
 * The PEM file content HAProxy wants for a kubernetes.io/tls Secret: the certificate chain
 * (`tls.crt`) then the key (`tls.key`). Throws an Error naming the Secret and saying why when
 * the proxy cannot serve it (lib/pki/secret_checks.ts: the controller's verdict, judged again on
 * what the proxy read).
 */
export function tlsSecretPem(ref: Pick<SecretRef, "namespace" | "name">, secret: TlsSecretLike): string {
  return pemOrThrow(ref, tlsVerdict(secret));
}

/**
 * The CA bundle (`ca.crt`) of a Secret of any type; throws an Error naming the Secret and saying
 * why when it is not PEM certificates only, each of which parses.
 */
export function caSecretPem(ref: Pick<SecretRef, "namespace" | "name">, secret: TlsSecretLike): string {
  return pemOrThrow(ref, caVerdict(secret));
}

function tlsVerdict(secret: TlsSecretLike): PemVerdict {
  const pair = tlsPair(secret);
  return "problem" in pair ? pair : { pem: `${pair.crt.trimEnd()}\n${pair.key.trimEnd()}\n` };
}

function caVerdict(secret: TlsSecretLike): PemVerdict {
  const ca = caBundle(secret);
  return "problem" in ca ? ca : { pem: `${ca.text.trim()}\n` };
}

/** A ConfigMap's `ca.crt` (plain text, not base64: `data` of a ConfigMap), checked as a Secret's. */
function configMapCaVerdict(cm: TlsSecretLike): PemVerdict {
  const text = cm.data?.["ca.crt"];
  if (typeof text !== "string" || text === "") return { problem: "there is no ca.crt" };
  const problem = caBundleProblem(text);
  return problem === null ? { pem: `${text.trim()}\n` } : { problem };
}

function pemOrThrow(ref: Pick<SecretRef, "namespace" | "name">, verdict: PemVerdict): string {
  if ("problem" in verdict) throw new Error(`Secret ${ref.namespace}/${ref.name}: ${verdict.problem}`);
  return verdict.pem;
}

/** The users of an htpasswd Secret (key `auth`); an Error naming the Secret when it has no such key. */
export function htpasswdOf(ref: Pick<SecretRef, "namespace" | "name">, secret: TlsSecretLike): Htpasswd {
  const auth = asciiField(secret, "auth");
  if ("problem" in auth) throw new Error(`Secret ${ref.namespace}/${ref.name}: ${auth.problem}`);
  return parseHtpasswd(auth.text);
}

/** A PEM file's content, or why the Secret cannot give one. */
type PemVerdict = { readonly pem: string } | { readonly problem: string };

/**
 * The verdict on each Secret object by kind: a watch hands out the same object until the Secret
 * changes, and every configuration change lists every Secret again (10,000 TLS Secrets were
 * decoded from base64 and checked on each one-route change).
 */
const pems = new WeakMap<TlsSecretLike, { tls?: PemVerdict; ca?: PemVerdict; "configmap-ca"?: PemVerdict }>();

const VERDICTS = { tls: tlsVerdict, ca: caVerdict, "configmap-ca": configMapCaVerdict } as const;

function pemOf(ref: SecretRef, secret: TlsSecretLike): PemVerdict {
  const kind = ref.kind === "htpasswd" ? "tls" : ref.kind;
  const known = pems.get(secret) ?? {};
  const verdict = known[kind] ?? verdictOf(kind, secret);
  pems.set(secret, { ...known, [kind]: verdict });
  return verdict;
}

/** The verdict of `kind` on `secret`: a check that throws leaves this Secret out, never the whole configuration. */
function verdictOf(kind: keyof typeof VERDICTS, secret: TlsSecretLike): PemVerdict {
  try {
    return VERDICTS[kind](secret);
  } catch (err) {
    return { problem: `its content cannot be checked (${(err as Error).message.replace(/\s+/g, " ").slice(0, 120)})` };
  }
}

/**
 * Empties the userlists past the budgets of PASSWORD_COST_LIMITS (docs/password-hash-costs.md):
 * HAProxy checks every line's hash whenever it loads its configuration, so userlists of many
 * Secrets could hold its check, start and reload past their time limits, for every tenant. In each
 * namespace, the Secrets (in list order) past `namespaceCheckMs`; then, while the proxy's total is
 * past `proxyCheckMs`, every Secret of the namespace costing most. An emptied userlist denies
 * everyone (never open), and each is passed to `warn`.
 */
function withinBudgets(
  userlists: { ref: SecretRef; users: Htpasswd["users"]; ms: number }[],
  warn: (secret: string, reason: string) => void,
): void {
  const limits = PASSWORD_COST_LIMITS;
  const empty = (u: (typeof userlists)[number], why: string) => {
    warn(`${u.ref.namespace}/${u.ref.name}`, `${why}: its userlist denies everyone`);
    u.users = [];
    u.ms = 0;
  };
  const byNs = new Map<string, number>();
  for (const u of userlists) {
    const total = (byNs.get(u.ref.namespace) ?? 0) + u.ms;
    if (u.ms > 0 && total > limits.namespaceCheckMs) {
      empty(
        u,
        `the htpasswd Secrets of namespace ${u.ref.namespace} on this proxy would take HAProxy more than ` +
          `${limits.namespaceCheckMs} ms of password checks at each load`,
      );
    } else byNs.set(u.ref.namespace, total);
  }
  let total = [...byNs.values()].reduce((a, b) => a + b, 0);
  const costliest = [...byNs].sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  for (const [ns, ms] of costliest) {
    if (total <= limits.proxyCheckMs) break;
    for (const u of userlists) {
      if (u.ref.namespace === ns && u.ms > 0) {
        empty(
          u,
          `the htpasswd Secrets of this proxy would take HAProxy more than ${limits.proxyCheckMs} ms of ` +
            `password checks at each load, and namespace ${ns}'s cost the most`,
        );
      }
    }
    total -= ms;
  }
}

/** A listed Secret or ConfigMap as the proxy knows it: the object, `null` when it is known not to exist, `undefined` when not known yet. */
export type SecretLookup = (ref: SecretRef) => TlsSecretLike | null | undefined;

/** A listed TLS or CA Secret (or CA ConfigMap) whose file is left out of the configuration, and why. */
export interface LeftOut {
  readonly ref: SecretRef;
  readonly reason: string;
}

/** The files of the listed Secrets: PEMs by file name, `userlists.cfg`, and the Secrets left out. */
export interface SecretContents {
  pems: Map<string, string>;
  userlists: string;
  leftOut: LeftOut[];
}

/**
 * What the listed Secrets and ConfigMaps become (contracts.md §4). An object whose watch has not
 * listed it yet is waited for (`waiting`). A TLS or CA Secret or a CA ConfigMap known to be missing
 * or with content the proxy cannot use gets no file and is in `leftOut` with its reason: everything
 * else is applied. An htpasswd
 * Secret known to be missing or without a usable `auth` gives an empty `userlist ul_<ns>_<name>`
 * (every request on its routes gets 401, never open) and blocks nothing else; each refused line
 * is passed to `warn`.
 */
export function secretContents(
  refs: readonly SecretRef[],
  lookup: SecretLookup,
  warn: (secret: string, reason: string) => void,
): SecretContents | { waiting: SecretRef } {
  const pems = new Map<string, string>();
  const userlists: { ref: SecretRef; users: Htpasswd["users"]; ms: number }[] = [];
  const leftOut: LeftOut[] = [];
  for (const ref of refs) {
    const secret = lookup(ref);
    if (secret === undefined) return { waiting: ref };
    if (ref.kind !== "htpasswd") {
      const verdict: PemVerdict = secret === null
        ? { problem: `the ${objectKind(ref)} does not exist` }
        : pemOf(ref, secret);
      if ("pem" in verdict) pems.set(ref.file!, verdict.pem);
      else leftOut.push({ ref, reason: verdict.problem });
      continue;
    }
    const id = `${ref.namespace}/${ref.name}`;
    let users: Htpasswd["users"] = [];
    if (secret === null) warn(id, "the Secret does not exist: its userlist denies everyone");
    else {
      try {
        const parsed = htpasswdOf(ref, secret);
        for (const reason of parsed.refused) warn(id, reason);
        users = parsed.users;
      } catch (err) {
        warn(id, `${(err as Error).message}: its userlist denies everyone`);
      }
    }
    userlists.push({ ref, users, ms: usersCheckMs(users) });
  }
  withinBudgets(userlists, warn);
  return {
    pems,
    userlists: userlists.map((u) => userlistSection(userlistName(u.ref.namespace, u.ref.name), u.users)).join(""),
    leftOut,
  };
}
