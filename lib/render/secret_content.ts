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
 * match, so it is refused with a message rather than silently locking its user out. A hash whose
 * check costs more than {@link PASSWORD_COST_LIMITS} allows is refused too: HAProxy runs crypt(3)
 * in the worker thread that serves every host of the proxy, on each request naming that user, and
 * once per line whenever it loads its configuration (docs/password-hash-costs.md).
 */

/** A user name HAProxy compares with the decoded `Authorization: Basic` credentials. */
const USER = /^[A-Za-z0-9._@+-]{1,64}$/;
const B64 = "[./A-Za-z0-9]";
/** The crypt(3) hashes libxcrypt accepts, each anchored to its exact shape; the groups hold the cost. */
const BCRYPT = new RegExp(`^\\$2[aby]\\$(0[4-9]|[12][0-9]|3[01])\\$${B64}{53}$`);
const SHA256_CRYPT = new RegExp(`^\\$5\\$(?:rounds=([1-9][0-9]{3,8})\\$)?${B64}{1,16}\\$${B64}{43}$`);
const SHA512_CRYPT = new RegExp(`^\\$6\\$(?:rounds=([1-9][0-9]{3,8})\\$)?${B64}{1,16}\\$${B64}{86}$`);
const MD5_CRYPT = new RegExp(`^\\$1\\$${B64}{1,8}\\$${B64}{22}$`);

/**
 * What one password check may cost, and all the lines of one Secret together. Measured with
 * Debian 12's crypt(3) on the reference machine (docs/password-hash-costs.md): bcrypt doubles per
 * cost step (7: 6.4 ms, 10: 50 ms, 16: ~3.2 s), SHA-crypt grows with its rounds (30,000: 6.4 ms
 * SHA-256, 7.4 ms SHA-512; 5,000 when `rounds=` is absent), MD5-crypt is fixed (0.1 ms). A check
 * blocks the HAProxy thread that serves every other host meanwhile; HAProxy's own parser warns from
 * 10 ms and its watchdog kills the whole process when a thread is stuck for about 2 s. The bounds
 * keep every accepted check under 10 ms and `haproxy -c`, start and reload (one check per line)
 * under about half a second per Secret.
 */
export const PASSWORD_COST_LIMITS = {
  /** The highest bcrypt cost (`$2y$07$…`); `htpasswd -B` writes 5 by default. */
  bcryptCost: 7,
  /** The most SHA-crypt rounds (`$6$rounds=30000$…`). */
  shaCryptRounds: 30_000,
  /** The estimated check time (ms, reference machine) of all the usable lines of one Secret. */
  secretCheckMs: 500,
  /** ... of the userlists of one namespace on a proxy (the proxy empties those past it: they deny everyone). */
  namespaceCheckMs: 1_000,
  /** ... of all the userlists of a proxy (past it, the namespaces costing most are emptied first). */
  proxyCheckMs: 5_000,
} as const;

/** The estimated check time (ms, reference machine) of `users`, whose hashes are of accepted shapes. */
export function usersCheckMs(users: readonly HtpasswdUser[]): number {
  let ms = 0;
  for (const u of users) ms += hashCost(u.hash)?.ms ?? 0;
  return ms;
}

/** The estimated time of one check (ms, reference machine) and, when above the limits, why it is refused. */
export interface HashCost {
  readonly ms: number;
  readonly tooCostly: string | null;
}

/** The cost of checking `hash`; null when it is not one of the accepted shapes. */
export function hashCost(hash: string): HashCost | null {
  const limits = PASSWORD_COST_LIMITS;
  const bcrypt = BCRYPT.exec(hash);
  if (bcrypt) {
    const cost = Number(bcrypt[1]);
    return {
      ms: 0.05 * 2 ** cost,
      tooCostly: cost > limits.bcryptCost
        ? `bcrypt cost ${cost} is above the proxy's limit of ${limits.bcryptCost}; regenerate it with htpasswd -B -C 5`
        : null,
    };
  }
  for (const [re, msPerRound] of [[SHA256_CRYPT, 0.000215], [SHA512_CRYPT, 0.000245]] as const) {
    const sha = re.exec(hash);
    if (!sha) continue;
    const rounds = sha[1] === undefined ? 5_000 : Number(sha[1]);
    return {
      ms: msPerRound * rounds,
      tooCostly: rounds > limits.shaCryptRounds
        ? `SHA-crypt rounds=${rounds} is above the proxy's limit of ${limits.shaCryptRounds}; regenerate it ` +
          `without rounds= (5000), e.g. with mkpasswd -m sha-512`
        : null,
    };
  }
  return MD5_CRYPT.test(hash) ? { ms: 0.1, tooCostly: null } : null;
}

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
 * user name or hash of another shape, `$apr1$`, a hash above {@link PASSWORD_COST_LIMITS}, a
 * user's second line and the lines past the Secret's total cost are refused.
 */
export function parseHtpasswd(text: string): Htpasswd {
  const users: HtpasswdUser[] = [];
  const refused: string[] = [];
  const seen = new Set<string>();
  let ms = 0;
  /** The first line past the Secret's total cost, and how many usable lines follow it. */
  let overBudget: { user: string; more: number } | null = null;
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.replace(/\r$/, "").trim();
    if (line === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    const user = colon < 0 ? "" : line.slice(0, colon);
    const hash = colon < 0 ? "" : line.slice(colon + 1);
    const cost = hashCost(hash);
    if (!USER.test(user)) {
      refused.push(`line ${i + 1}: not "user:hash" with a user name of letters, digits and ._@+-`);
    } else if (hash.startsWith("$apr1$")) {
      refused.push(
        `user ${user}: $apr1$ (Apache MD5) is not supported by the proxy's crypt(3); regenerate with htpasswd -B (bcrypt)`,
      );
    } else if (cost === null) {
      refused.push(`user ${user}: the hash is not bcrypt ($2y$), SHA-crypt ($5$, $6$) or MD5-crypt ($1$)`);
    } else if (cost.tooCostly !== null) {
      refused.push(`user ${user}: ${cost.tooCostly}`);
    } else if (seen.has(user)) {
      refused.push(`user ${user}: listed twice; the first line counts`);
    } else if (overBudget !== null || ms + cost.ms > PASSWORD_COST_LIMITS.secretCheckMs) {
      if (overBudget === null) overBudget = { user, more: 0 };
      else overBudget.more++;
    } else {
      seen.add(user);
      ms += cost.ms;
      users.push({ user, hash });
    }
  }
  if (overBudget !== null) {
    const more = overBudget.more === 0 ? "" : ` and the ${overBudget.more} usable lines after it`;
    refused.push(
      `user ${overBudget.user}${more}: the Secret's hashes together cost more than the proxy checks for one ` +
        `Secret (HAProxy checks each line whenever it loads its configuration); use fewer users or htpasswd -B -C 5`,
    );
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
  let ms = 0;
  for (const u of users) {
    const cost = hashCost(u.hash);
    if (!USER.test(u.user) || cost === null || cost.tooCostly !== null) {
      throw new Error(`bug: unchecked user ${u.user}`);
    }
    ms += cost.ms;
    lines.push(`    user ${u.user} password '${u.hash}'`);
  }
  if (ms > PASSWORD_COST_LIMITS.secretCheckMs) throw new Error(`bug: userlist ${name} costs more than its limit`);
  return lines.join("\n") + "\n";
}
