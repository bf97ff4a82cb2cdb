/**
 * The htpasswd part of lib/render/secret_content.ts: the cost limits of password hashes (one check,
 * and one Secret's lines together), shared by the controller's verdict and the proxy's userlist.
 */
import assert from "node:assert/strict";
import { hashCost, parseHtpasswd, PASSWORD_COST_LIMITS, userlistSection } from "../../lib/render/secret_content.ts";

const B64 = (n: number, c = "a") => c.repeat(n);
const bcrypt = (variant: "a" | "b" | "y", cost: number) => `$2${variant}$${String(cost).padStart(2, "0")}$${B64(53)}`;
const sha = (kind: 5 | 6, rounds: number | null) =>
  `$${kind}$${rounds === null ? "" : `rounds=${rounds}$`}saltsalt$${B64(kind === 5 ? 43 : 86, "b")}`;
const md5 = `$1$salt$${B64(22, "c")}`;

Deno.test("hashCost: bcrypt $2a$/$2b$/$2y$ up to the cost limit, refused above it with the cost named", () => {
  for (const v of ["a", "b", "y"] as const) {
    for (const cost of [4, 5, PASSWORD_COST_LIMITS.bcryptCost]) {
      assert.equal(hashCost(bcrypt(v, cost))?.tooCostly, null);
    }
    for (const cost of [8, 10, 16, 31]) {
      assert.equal(
        hashCost(bcrypt(v, cost))?.tooCostly,
        `bcrypt cost ${cost} is above the proxy's limit of 7; regenerate it with htpasswd -B -C 5`,
      );
    }
  }
  // each cost step doubles the work
  assert.equal(hashCost(bcrypt("y", 8))!.ms, 2 * hashCost(bcrypt("y", 7))!.ms);
  // shapes outside bcrypt's: cost 3 or 32, $2x$, a short hash
  for (const h of [bcrypt("y", 3), `$2y$32$${B64(53)}`, `$2x$05$${B64(53)}`, `$2y$05$${B64(52)}`]) {
    assert.equal(hashCost(h), null, h);
  }
});

Deno.test("hashCost: SHA-crypt up to 30,000 rounds (5,000 when absent), refused above; MD5-crypt's fixed cost passes", () => {
  for (const kind of [5, 6] as const) {
    for (const rounds of [null, 1_000, 5_000, 30_000]) assert.equal(hashCost(sha(kind, rounds))?.tooCostly, null);
    for (const rounds of [30_001, 1_000_000, 20_000_000, 999_999_999]) {
      assert.equal(
        hashCost(sha(kind, rounds))?.tooCostly,
        `SHA-crypt rounds=${rounds} is above the proxy's limit of 30000; regenerate it without rounds= (5000), ` +
          `e.g. with mkpasswd -m sha-512`,
      );
    }
    assert.equal(hashCost(sha(kind, null))!.ms, hashCost(sha(kind, 5_000))!.ms);
    assert.equal(hashCost(sha(kind, 999)), null, "rounds below 1000 are not a shape crypt(3) writes");
  }
  assert.deepEqual(hashCost(md5), { ms: 0.1, tooCostly: null });
  // every accepted shape stays under HAProxy's own 10 ms warning, estimated on the reference machine
  for (const h of [bcrypt("y", 7), sha(5, 30_000), sha(6, 30_000), md5]) assert.ok(hashCost(h)!.ms < 10, h);
});

Deno.test("parseHtpasswd: a costly line is refused naming its user (never the hash), the others kept", () => {
  const { users, refused } = parseHtpasswd([
    `alice:${bcrypt("y", 7)}`,
    `mallory:${bcrypt("b", 16)}`,
    `bob:${sha(6, 30_000)}`,
    `trudy:${sha(6, 20_000_000)}`,
    `oscar:${bcrypt("a", 31)}`,
    `carol:${md5}`,
  ].join("\n"));
  assert.deepEqual(users.map((u) => u.user), ["alice", "bob", "carol"]);
  assert.deepEqual(refused, [
    "user mallory: bcrypt cost 16 is above the proxy's limit of 7; regenerate it with htpasswd -B -C 5",
    "user trudy: SHA-crypt rounds=20000000 is above the proxy's limit of 30000; regenerate it without rounds= " +
    "(5000), e.g. with mkpasswd -m sha-512",
    "user oscar: bcrypt cost 31 is above the proxy's limit of 7; regenerate it with htpasswd -B -C 5",
  ]);
  for (const r of refused) assert.ok(!r.includes("aaaa") && !r.includes("bbbb"), "no hash in a message");
});

Deno.test("parseHtpasswd: the lines past one Secret's total cost are refused in one message naming the first user", () => {
  const each = hashCost(bcrypt("y", 7))!.ms;
  const fit = Math.floor(PASSWORD_COST_LIMITS.secretCheckMs / each);
  const lines = Array.from({ length: fit + 3 }, (_, i) => `u${i}:${bcrypt("y", 7)}`);
  // a refused line (costly, twice listed) costs nothing and is named on its own
  lines.splice(1, 0, `mallory:${bcrypt("y", 16)}`, `u0:${md5}`);
  const { users, refused } = parseHtpasswd(lines.join("\n"));
  assert.equal(users.length, fit);
  assert.deepEqual(users.map((u) => u.user), Array.from({ length: fit }, (_, i) => `u${i}`));
  assert.deepEqual(refused, [
    "user mallory: bcrypt cost 16 is above the proxy's limit of 7; regenerate it with htpasswd -B -C 5",
    "user u0: listed twice; the first line counts",
    `user u${fit} and the 2 usable lines after it: the Secret's hashes together cost more than the proxy checks ` +
    "for one Secret (HAProxy checks each line whenever it loads its configuration); use fewer users or htpasswd -B -C 5",
  ]);
  // cheap hashes: thousands of users fit
  const many = parseHtpasswd(Array.from({ length: 4_000 }, (_, i) => `u${i}:${md5}`).join("\n"));
  assert.deepEqual([many.users.length, many.refused], [4_000, []]);
});

Deno.test("userlistSection: the proxy never writes a hash above the limits, even when handed one", () => {
  assert.equal(
    userlistSection("ul_ns_users", [{ user: "alice", hash: bcrypt("y", 7) }]),
    `userlist ul_ns_users\n    user alice password '${bcrypt("y", 7)}'\n`,
  );
  for (const hash of [bcrypt("y", 8), bcrypt("b", 16), sha(6, 20_000_000), sha(5, 30_001)]) {
    assert.throws(() => userlistSection("ul_ns_users", [{ user: "mallory", hash }]), /bug: unchecked user mallory/);
  }
  const tooMany = Array.from({ length: 100 }, (_, i) => ({ user: `u${i}`, hash: bcrypt("y", 7) }));
  assert.throws(() => userlistSection("ul_ns_users", tooMany), /costs more than its limit/);
});
