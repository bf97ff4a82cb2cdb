/**
 * @module render/secret_content
 * The checks on the content of htpasswd files (`auth`, contracts.md §4) and the HAProxy
 * `userlist` sections made from them (TLS certificates and CA bundles: lib/pki/secret_checks.ts).
 * Shared by the controller, which keeps
 * only a verdict of a Secret (lib/render/tls_secret.ts), and the proxy, which writes the files
 * (lib/proxy/files.ts); it imports nothing, so the proxy loads no renderer with it.
 *
 * HAProxy 2.6 checks `user … password HASH` with the system's crypt(3): on Debian 12 (libxcrypt)
 * bcrypt (`$2a$`, `$2b$`, `$2y$`), SHA-crypt (`$5$`, `$6$`) and MD5-crypt (`$1$`) work, while
 * Apache's MD5 (`$apr1$`, the default of `htpasswd -m`) is unknown to it: such a line could never
 * match, so it is refused with a message rather than silently locking its user out.
 */

/** A user name HAProxy compares with the decoded `Authorization: Basic` credentials. */
const USER = /^[A-Za-z0-9._@+-]{1,64}$/;
const B64 = "[./A-Za-z0-9]";
/** The crypt(3) hashes glibc/libxcrypt accept, each anchored to its exact shape. */
const HASHES: readonly RegExp[] = [
  new RegExp(`^\\$2[aby]\\$(?:0[4-9]|[12][0-9]|3[01])\\$${B64}{53}$`), // bcrypt
  new RegExp(`^\\$5\\$(?:rounds=[1-9][0-9]{3,8}\\$)?${B64}{1,16}\\$${B64}{43}$`), // SHA-256-crypt
  new RegExp(`^\\$6\\$(?:rounds=[1-9][0-9]{3,8}\\$)?${B64}{1,16}\\$${B64}{86}$`), // SHA-512-crypt
  new RegExp(`^\\$1\\$${B64}{1,8}\\$${B64}{22}$`), // MD5-crypt
];

/** One usable htpasswd line. */
export interface HtpasswdUser {
  readonly user: string;
  readonly hash: string;
}

/** The usable users of an htpasswd text and, per refused line, why (naming the user, never the hash). */
export interface Htpasswd {
  readonly users: readonly HtpasswdUser[];
  readonly refused: readonly string[];
}

/**
 * Parses an htpasswd file: `user:hash` per line; empty lines and `#` comments are skipped. A
 * user name or hash of another shape, `$apr1$`, and a user's second line are refused.
 */
export function parseHtpasswd(text: string): Htpasswd {
  const users: HtpasswdUser[] = [];
  const refused: string[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.replace(/\r$/, "").trim();
    if (line === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const user = colon < 0 ? "" : line.slice(0, colon);
    const hash = colon < 0 ? "" : line.slice(colon + 1);
    if (!USER.test(user)) {
      refused.push(`line ${i + 1}: not "user:hash" with a user name of letters, digits and ._@+-`);
    } else if (hash.startsWith("$apr1$")) {
      refused.push(
        `user ${user}: $apr1$ (Apache MD5) is not supported by the proxy's crypt(3); regenerate with htpasswd -B (bcrypt)`,
      );
    } else if (!HASHES.some((re) => re.test(hash))) {
      refused.push(`user ${user}: the hash is not bcrypt ($2y$), SHA-crypt ($5$, $6$) or MD5-crypt ($1$)`);
    } else if (users.some((u) => u.user === user)) {
      refused.push(`user ${user}: listed twice; the first line counts`);
    } else users.push({ user, hash });
  }
  return { users, refused };
}

/** The userlist of the htpasswd Secret `namespace/name`: `ul_<namespace>_<name>`. */
export function userlistName(namespace: string, name: string): string {
  return `ul_${namespace}_${name}`;
}

/**
 * A `userlist` section; with no users it denies everyone. Names and hashes come from
 * {@link parseHtpasswd}; the hash is single-quoted, as HAProxy expands nothing there.
 */
export function userlistSection(name: string, users: readonly HtpasswdUser[]): string {
  if (!/^ul_[a-z0-9._-]{1,300}$/.test(name)) throw new Error(`bug: unsafe userlist name ${JSON.stringify(name)}`);
  const lines = [`userlist ${name}`];
  for (const u of users) {
    if (!USER.test(u.user) || !HASHES.some((re) => re.test(u.hash))) throw new Error(`bug: unchecked user ${u.user}`);
    lines.push(`    user ${u.user} password '${u.hash}'`);
  }
  return lines.join("\n") + "\n";
}
