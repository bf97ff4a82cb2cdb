/**
 * The route sources of one controller, with two plain sources beside each other (the Ingress
 * source's form of keys, and a second source whose group and member keys carry a prefix of their
 * own, as a Gateway API source would): each group goes to the source that claims it, and a Service
 * or Secret used by members of both queues the groups of both.
 */
import assert from "node:assert/strict";
import { GroupIndex, type GroupKey } from "../../lib/controller/groups.ts";
import type { GlobalSettings } from "../../lib/controller/global_settings.ts";
import { type RouteSource, RouteSources } from "../../lib/controller/route_source.ts";

/** Members filed by hand; what RouteSources does not use throws. */
function plainSource(name: string, prefix: string) {
  const index = new GroupIndex();
  const users = new Map<string, string[]>();
  const calls: string[] = [];
  const source = {
    name,
    claims: (group: GroupKey) =>
      prefix === "" ? !group.includes(":") || group.startsWith("class:") : group.startsWith(prefix),
    size: () => index.groups().length,
    groupOf: (key: string) => index.groupOf(key),
    groups: () => index.groups(),
    users: (ref: string) => users.get(ref) ?? [],
    refileAll: (onlyIfMoved: boolean) => void calls.push(`refile ${onlyIfMoved}`),
    globalChanged: (_: GlobalSettings) => void calls.push("global"),
  } as unknown as RouteSource;
  const file = (key: string, group: GroupKey, uses: string[] = []) => {
    index.set(key, group);
    for (const ref of uses) users.set(ref, [...(users.get(ref) ?? []), key]);
  };
  return { source, file, calls };
}

Deno.test("route sources: each group goes to the source that claims it; the first takes the others", () => {
  const ingresses = plainSource("ingresses", "");
  const routes = plainSource("httproutes", "gateway:");
  const sources = new RouteSources([ingresses.source, routes.source]);
  assert.equal(sources.of("class:web"), ingresses.source);
  assert.equal(sources.of("shop/app"), ingresses.source);
  assert.equal(sources.of("gateway:shop/edge"), routes.source);
  assert.equal(sources.of("unknown:x"), ingresses.source);
});

Deno.test("route sources: members of both sources using one Service queue the groups of both", () => {
  const ingresses = plainSource("ingresses", "");
  const routes = plainSource("httproutes", "gateway:");
  const sources = new RouteSources([ingresses.source, routes.source]);
  ingresses.file("shop/app", "class:web", ["service:shop/api"]);
  ingresses.file("shop/other", "class:web", ["service:shop/other"]);
  routes.file("HTTPRoute:shop/api", "gateway:shop/edge", ["service:shop/api"]);
  assert.deepEqual([...sources.groupsUsing("service:shop/api")], ["class:web", "gateway:shop/edge"]);
  assert.deepEqual([...sources.groupsUsing("service:shop/other")], ["class:web"]);
  assert.deepEqual(sources.groups(), ["class:web", "gateway:shop/edge"]);
  assert.equal(sources.groupOf("HTTPRoute:shop/api"), "gateway:shop/edge");
  assert.equal(sources.groupOf("shop/app"), "class:web");
  assert.equal(sources.groupOf("shop/none"), null);
  assert.deepEqual(sources.sizes(), { ingresses: 1, httproutes: 1 });
});

Deno.test("route sources: a new term, a sync and a global change reach every source", () => {
  const ingresses = plainSource("ingresses", "");
  const routes = plainSource("httproutes", "gateway:");
  const sources = new RouteSources([ingresses.source, routes.source]);
  sources.refileAll(true);
  sources.globalChanged({} as GlobalSettings);
  assert.deepEqual(ingresses.calls, ["refile true", "global"]);
  assert.deepEqual(routes.calls, ["refile true", "global"]);
});
