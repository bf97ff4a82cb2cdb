/**
 * Proxies that share a namespace never get names that meet: no proxy is named like another proxy or
 * like one of its derived objects (`-stats`, `-part-<slot>`), whatever namespaces and names tenants
 * choose. Checked over every key made of tokens that tempt a collision (hyphens, derived endings,
 * hex digits), for Gateway proxies in the controller's namespace and in their own, and for classes.
 */
import assert from "node:assert/strict";
import { gatewayProxyName, gatewayProxyPlace } from "../../lib/controller/objects.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import { shortHash } from "../../lib/controller/short_hash.ts";

const settings = { operatorNamespace: "ops", gatewayProxiesInGatewayNamespace: false };

/** The proxy's own name and the names of the objects derived from it. */
function namesOf(proxy: string): string[] {
  return [proxy, `${proxy}-stats`, ...Array.from({ length: 3 }, (_, i) => `${proxy}-part-${i}`)];
}

/** Fails when two owners (keys) would get the same object name. */
function assertApart(owners: Map<string, string>): void {
  const seen = new Map<string, string>();
  for (const [owner, proxy] of owners) {
    assert.match(proxy, /^[a-z]([-a-z0-9]*[a-z0-9])?$/, owner);
    assert.ok(proxy.length <= 55, `${owner}: ${proxy}`);
    for (const name of namesOf(proxy)) {
      const other = seen.get(name);
      assert.ok(other === undefined, `${owner} and ${other} both name ${name}`);
      seen.set(name, owner);
    }
  }
}

const TOKENS = ["a", "b", "team", "web", "stats", "part", "0", "part-0", "haproxy", "gw"];

/** Every join of 1–3 tokens by `-` that is a DNS label. */
function labels(extra: string[] = []): string[] {
  const out = new Set<string>(extra);
  for (const x of TOKENS) {
    out.add(x);
    for (const y of TOKENS) {
      out.add(`${x}-${y}`);
      for (const z of TOKENS) out.add(`${x}-${y}-${z}`);
    }
  }
  return [...out].filter((l) => /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(l));
}

Deno.test("proxy names: the collisions a tenant could aim at get names apart", () => {
  assert.equal(gatewayProxyName("apps/web"), "gw-apps-web");
  // Two spellings of the same text: one keeps the plain form, the other is marked.
  assert.notEqual(gatewayProxyName("a-b/c"), gatewayProxyName("a/b-c"));
  // A Gateway named like another's part 0 or stats Service.
  for (const name of ["web-part-0", "web-stats", "web-haproxy"]) {
    assert.ok(!namesOf(gatewayProxyName("team/web")).includes(gatewayProxyName(`team/${name}`)), name);
  }
  assert.ok(!namesOf(gatewayProxyName("team/web")).includes(gatewayProxyName("team-web/part-0")));
  // A name ending like the marked form cannot take another Gateway's marked name.
  const marked = gatewayProxyName("a-b/c");
  assert.equal(marked, `gw-a-b-c-${shortHash("a-b/c", 8)}`);
  assert.notEqual(gatewayProxyName(`a/b-c-${shortHash("a-b/c", 8)}`), marked);
  // Classes (cluster-scoped, named by administrators) follow the same rule.
  assert.equal(sharedProxyName("web"), "haproxy-class-web");
  assert.ok(!namesOf(sharedProxyName("web")).includes(sharedProxyName("web-part-0")));
});

Deno.test("proxy names: no two Gateways of all these keys share an object name in the controller's namespace", () => {
  const all = labels([`c-${shortHash("a-b/c", 8)}`, shortHash("a/b", 8), "x".repeat(50)]);
  const owners = new Map<string, string>();
  for (const ns of labels().filter((l) => l.split("-").length <= 2)) {
    for (const name of all) {
      const key = `${ns}/${name}`;
      owners.set(key, gatewayProxyPlace(key, settings).name);
    }
  }
  assertApart(owners);
});

Deno.test("proxy names: Gateways in their own namespace and classes keep apart too", () => {
  const inOwn = new Map<string, string>();
  const classes = new Map<string, string>();
  for (const name of labels([`gw-${shortHash("x/y", 16)}`, shortHash("web", 10)])) {
    inOwn.set(name, gatewayProxyPlace(`tenant/${name}`, { ...settings, gatewayProxiesInGatewayNamespace: true }).name);
    classes.set(name, sharedProxyName(name));
  }
  assertApart(inOwn);
  assertApart(classes);
});
