/**
 * lib/render/host_ownership.ts: who owns a host of a shared proxy (oldest claim, sticky, pins,
 * wildcards, the catch-all) and where an owned host's unmatched requests stop.
 */
import assert from "node:assert/strict";
import {
  CATCH_ALL,
  DEFAULT_OWNERSHIP,
  HostOwners,
  type OwnershipPolicy,
  parsePins,
  wildcardOf,
} from "../../lib/render/host_ownership.ts";

const strict = (pins: OwnershipPolicy["pins"] = []): OwnershipPolicy => ({ mode: "Strict", pins });

function decided(
  claimants: { ns: string; claims: string[] }[],
  policy = strict(),
  previous: Map<string, string> | null = null,
): HostOwners {
  const o = new HostOwners(policy);
  o.decide(claimants, (c) => c, previous);
  return o;
}

Deno.test("host ownership: the oldest claimant owns a host; a younger namespace is refused, its own namespace is not", () => {
  const o = decided([
    { ns: "bank", claims: ["login.bank.test"] },
    { ns: "evil", claims: ["login.bank.test", "evil.test"] },
    { ns: "bank", claims: ["login.bank.test"] },
  ]);
  assert.equal(o.ownerOf("login.bank.test"), "bank");
  assert.ok(o.mayServe("bank", "login.bank.test"));
  assert.ok(!o.mayServe("evil", "login.bank.test"));
  assert.equal(o.ownerOf("evil.test"), "evil");
  assert.equal(o.ownerOf("nobody.test"), null);
});

Deno.test("host ownership: a wildcard covers the hosts under it that no older claim of another namespace names", () => {
  const o = decided([
    { ns: "a", claims: ["old.x.test"] },
    { ns: "w", claims: ["*.x.test"] },
    { ns: "b", claims: ["new.x.test"] },
    { ns: "w", claims: ["mine.x.test"] },
  ]);
  assert.equal(o.ownerOf("old.x.test"), "a", "older than the wildcard: kept");
  assert.equal(o.ownerOf("new.x.test"), "w", "younger than the wildcard: the wildcard's");
  assert.equal(o.ownerOf("any.x.test"), "w");
  assert.equal(o.ownerOf("mine.x.test"), "w");
  assert.equal(o.ownerOf("a.b.x.test"), null, "a wildcard covers one label");
  assert.equal(o.ownerOf("x.test"), null);
  assert.ok(!o.mayServe("b", "new.x.test"));
});

Deno.test("host ownership: the catch-all is a claim of its own, by the same oldest-first rule", () => {
  const o = decided([{ ns: "edge", claims: [CATCH_ALL] }, { ns: "evil", claims: [CATCH_ALL, "e.test"] }]);
  assert.equal(o.ownerOf(CATCH_ALL), "edge");
  assert.ok(!o.mayServe("evil", CATCH_ALL));
  assert.ok(o.mayServe("evil", "e.test"));
});

Deno.test("host ownership: sticky, a host stays with its owner while the owner still names it", () => {
  // bank's first Ingress is gone; evil's is now older than bank's remaining one.
  const claims = [{ ns: "evil", claims: ["login.bank.test"] }, { ns: "bank", claims: ["login.bank.test"] }];
  assert.equal(decided(claims).ownerOf("login.bank.test"), "evil", "without history: the oldest");
  const previous = new Map([["login.bank.test", "bank"]]);
  assert.equal(decided(claims, strict(), previous).ownerOf("login.bank.test"), "bank");
  // bank names it no more: it moves.
  assert.equal(decided([claims[0]], strict(), previous).ownerOf("login.bank.test"), "evil");
});

Deno.test("host ownership: pins decide whatever the age; a domain pin covers every depth, * the catch-all", () => {
  const pins = parsePins("login.bank.test=bank, *.corp.test=corp, *=edge");
  assert.ok(pins.ok);
  const o = decided([
    { ns: "evil", claims: ["login.bank.test", "a.b.corp.test", "*.corp.test", CATCH_ALL, "free.test"] },
    { ns: "bank", claims: ["login.bank.test"] },
  ], strict(pins.pins));
  assert.equal(o.ownerOf("login.bank.test"), "bank");
  assert.equal(o.ownerOf("a.b.corp.test"), "corp");
  assert.equal(o.ownerOf("*.corp.test"), "corp");
  assert.equal(o.ownerOf("corp.test"), null, "the domain itself is not under *.corp.test");
  assert.equal(o.ownerOf(CATCH_ALL), "edge");
  assert.equal(o.ownerOf("free.test"), "evil");
  assert.deepEqual(o.ownedHosts(), ["*.corp.test", "free.test", "login.bank.test"]);
});

Deno.test("host ownership: pinned-hosts is parsed with anchored patterns, one line per problem", () => {
  assert.deepEqual(parsePins(""), { ok: true, pins: [] });
  assert.deepEqual(parsePins("a.test=x\n*.b.test=y\n"), {
    ok: true,
    pins: [{ host: "a.test", namespace: "x" }, { host: "*.b.test", namespace: "y" }],
  });
  for (const bad of ["a.test", "a.test=", "A.test=x", "a.test=x,a.test=y", "*.=x", "a test=x", "a.test=x=y"]) {
    const p = parsePins(bad);
    assert.ok(!p.ok, bad);
    assert.doesNotMatch(p.reason, /\n/);
  }
});

Deno.test("host ownership: stops, an owned host never falls through to another namespace's wildcard or catch-all", () => {
  const o = decided([
    { ns: "edge", claims: [CATCH_ALL, "e.x.test", "e.y.test"] },
    { ns: "w", claims: ["*.x.test"] },
    { ns: "a", claims: ["a.y.test", "a.x.test"] },
    { ns: "w", claims: ["w.x.test"] },
  ]);
  assert.equal(o.ownerOf("a.x.test"), "w", "younger than the wildcard");
  assert.deepEqual(o.stops(), [
    ["*.x.test", "404"], // the wildcard's unmatched requests: not to edge's catch-all
    ["a.y.test", "404"], // no wildcard above it, the catch-all is edge's
    ["e.x.test", "catch-all"], // skip w's wildcard, on to its own namespace's catch-all
    // e.y.test: nothing of another namespace is in its way; w.x.test: its wildcard's stop applies
  ]);
  assert.deepEqual(decided([{ ns: "a", claims: ["a.test", "*.a.test"] }]).stops(), []);
});

Deno.test("host ownership: the default is Strict without pins; wildcardOf", () => {
  assert.deepEqual(DEFAULT_OWNERSHIP, { mode: "Strict", pins: [] });
  assert.equal(wildcardOf("a.b.test"), "*.b.test");
  assert.equal(wildcardOf("localhost"), null);
  assert.equal(wildcardOf("*.b.test"), null);
});
