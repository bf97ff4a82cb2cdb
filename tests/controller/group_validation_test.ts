/**
 * Validation with isolation on a real model and rendering, with a plain function standing in for
 * `haproxy -c` (the cluster tests run the real one): a refused merged configuration is checked
 * by halves down to single members (member by member below four) and the members refused alone
 * are left out with an Event; a member refused alone
 * is left out again without a check while its configuration stays the same; a configuration that
 * passed is not checked again.
 */
import assert from "node:assert/strict";
import type { V1Ingress } from "@kubernetes/client-node";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { defaultClassParams } from "../../lib/controller/class_params.ts";
import { EventRecorder } from "../../lib/controller/events.ts";
import { defaultGlobalSettings } from "../../lib/controller/global_settings.ts";
import { GroupBuilder, type GroupConfig } from "../../lib/controller/group_build.ts";
import type { GroupSettings } from "../../lib/controller/group_settings.ts";
import { GroupValidator, type Validator } from "../../lib/controller/group_validation.ts";
import type { Writer } from "../../lib/controller/leader.ts";
import type { WorkCounts } from "../../lib/controller/metrics.ts";
import type { RouteSource } from "../../lib/controller/route_source.ts";
import { ingressObj, serviceObj } from "../../lib/dev/localenv/harness.ts";
import { DEFAULT_OWNERSHIP } from "../../lib/render/host_ownership.ts";
import { buildModel, loadTemplates, lookupFromLists } from "../../lib/render/mod.ts";
import { DEFAULT_PROXY_OPTIONS } from "../../lib/render/proxy_options.ts";

const okWriter: Writer = { request: <T>() => Promise.resolve(undefined as T) };

const member = (name: string, service: string, minute: number): KubeObject => {
  const ing = ingressObj("shop", name, [{ host: `${name}.example.com`, service }]);
  ing.metadata.uid = `uid-${name}`;
  ing.metadata.creationTimestamp = `2026-01-01T00:0${minute}:00Z`;
  return ing;
};

async function setup(namespaces = ["shop"]) {
  const counts: WorkCounts = { reconciles: 0, renders: 0, writes: 0, validations: 0 };
  const events = new EventRecorder(okWriter);
  const services = namespaces.flatMap((ns) => ["web", "api", "refused-svc"].map((s) => serviceObj(ns, s)));
  const builder = new GroupBuilder({
    templates: await loadTemplates(null),
    lookup: lookupFromLists({ services: services as any }),
    namespace: null,
    events,
    counts,
  });
  const source = {
    keyOf: (m: KubeObject) => `${m.metadata.namespace}/${m.metadata.name}`,
    modelInputs: (_group: string, members: readonly KubeObject[]) => members,
  } as unknown as RouteSource;
  const settings: GroupSettings = {
    params: defaultClassParams,
    proxy: DEFAULT_PROXY_OPTIONS,
    nginxCompat: false,
    ownership: DEFAULT_OWNERSHIP,
    global: defaultGlobalSettings,
    classValues: {},
  };
  const build = builder.start("class:web", source, settings);
  // `haproxy -c` stand-in: refuses any configuration with a backend of the Service refused-svc.
  const checked: string[] = [];
  const validate: Validator = (r) => {
    checked.push(r.config);
    return Promise.resolve(r.config.includes("refused-svc") ? { message: "refused", timedOut: false } : null);
  };
  const validator = new GroupValidator(validate, events, counts);
  const configOf = (members: readonly KubeObject[]): GroupConfig => {
    const built = build.model(members);
    return { members, built, rendered: build.render(built.model) };
  };
  return { build, validator, counts, events, configOf, lookup: builder.deps.lookup };
}

Deno.test("group validation: a member refused alone is left out, and left out again without a check", async () => {
  const { build, validator, counts, events, configOf } = await setup();
  const [a, bad, c] = [member("a", "web", 1), member("bad", "refused-svc", 2), member("c", "api", 3)];
  const config = configOf([a, bad, c]);
  assert.ok(config.rendered.config.includes("refused-svc"), "the stand-in sees the member's backend");

  const first = await validator.check(build, config);
  assert.deepEqual(first?.members.map((m) => m.metadata.name), ["a", "c"]);
  assert.ok(!first!.rendered.config.includes("refused-svc"));
  // The merged one, each member alone, and the configuration without the refused member.
  assert.equal(counts.validations, 5);
  assert.deepEqual(events.recent.map((e) => [e.object, e.reason]), [["shop/bad", "ValidationFailed"]]);

  // Same members, same configurations: the refused member is left out before any check, and the
  // configuration of the others passed already.
  const again = await validator.check(build, configOf([a, bad, c]));
  assert.deepEqual(again?.members.map((m) => m.metadata.name), ["a", "c"]);
  assert.equal(counts.validations, 5);

  // Once forgotten (no longer served), it is checked anew.
  validator.forgetMember("shop/bad");
  await validator.check(build, configOf([a, bad, c]));
  assert.ok(counts.validations > 5);
});

Deno.test("group validation: a refusal in a large group is isolated by halves, not member by member", async () => {
  const { build, validator, counts, events, configOf } = await setup();
  const members = Array.from({ length: 32 }, (_, i) => member(`m${i}`, i === 21 ? "refused-svc" : "web", i % 10));
  const first = await validator.check(build, configOf(members));
  assert.deepEqual(
    first?.members.map((m) => m.metadata.name),
    members.filter((_, i) => i !== 21).map((m) => m.metadata.name),
  );
  assert.deepEqual(events.recent.map((e) => [e.object, e.reason]), [["shop/m21", "ValidationFailed"]]);
  // The whole, its two halves of 16, the refused half's two of 8, the refused 8's two parts of 4
  // member by member, and the kept ones: 1 + 2 + 2 + 8 + 1, against 1 + 32 + 1 member by member.
  assert.equal(counts.validations, 14);
});

Deno.test("group validation: a configuration that passes comes back as it is, and is not checked twice", async () => {
  const { build, validator, counts, configOf } = await setup();
  const config = configOf([member("a", "web", 1), member("c", "api", 3)]);
  assert.equal(await validator.check(build, config), config);
  const same = configOf(config.members);
  assert.equal(await validator.check(build, same), same);
  assert.equal(counts.validations, 1);
});

Deno.test("group validation: a group whose only member is refused has nothing to publish", async () => {
  const { build, validator, events, configOf } = await setup();
  assert.equal(await validator.check(build, configOf([member("bad", "refused-svc", 2)])), null);
  assert.deepEqual(events.recent.map((e) => e.reason), ["ValidationFailed"]);
});

Deno.test("validation's builds of a member alone or of halves keep a sticky host with its owner", async () => {
  const { build, validator, lookup } = await setup(["t1", "t2", "t3"]);
  const named = (ns: string, name: string, host: string, service: string, minute: number): KubeObject => {
    const ing = ingressObj(ns, name, [{ host, service }]);
    ing.metadata.uid = `uid-${ns}-${name}`;
    ing.metadata.creationTimestamp = `2026-01-01T00:0${minute}:00Z`;
    return ing;
  };
  // t2 names shop.example first and owns it; t1's Ingress naming it too is older (created earlier).
  const t2 = named("t2", "shop", "shop.example", "web", 5);
  const t1 = named("t1", "shop", "shop.example", "web", 1);
  assert.equal(build.model([t2]).owners?.get("shop.example"), "t2");
  assert.equal(build.model([t2, t1]).owners?.get("shop.example"), "t2", "sticky");
  // A third namespace's member that haproxy -c refuses arrives: each member is checked alone.
  const bad = named("t3", "bad", "bad.example", "refused-svc", 7);
  const built = build.model([t2, t1, bad]);
  assert.equal(built.owners?.get("shop.example"), "t2", "sticky before validation");
  const checked = await validator.check(build, { members: [t2, t1, bad], built, rendered: build.render(built.model) });
  assert.deepEqual(checked?.members.map((m) => m.metadata.namespace), ["t2", "t1"]);
  const want = buildModel({ ingresses: [t2, t1] as unknown as V1Ingress[], lookup, previousOwners: built.owners });
  assert.equal(want.owners?.get("shop.example"), "t2");
  assert.equal(checked!.built.owners?.get("shop.example"), "t2", "the host moved to t1 after validation");
});
