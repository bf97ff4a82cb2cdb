/**
 * @module render/model
 * Builds the typed, validated, sorted model of one proxy from cluster objects. Everything the
 * templates see comes from here and has passed an anchored pattern (render/patterns.ts). The passes
 * over the merged routes (all-regex hosts, canaries, `www-redirect` twins) are render/route_passes.ts.
 *
 * Policy (what happens to invalid input; each case adds a problem that the controller turns
 * into an Event on the object):
 * - Ingress with an invalid namespace or name, or outside the allowed namespace: ignored.
 * - Rule with an invalid host: the rule is dropped.
 * - Path with an invalid path or pathType, or a non-Service backend: the path is dropped.
 * - Path whose Service, Service port or endpoints cannot be resolved: the route is kept and its
 *   backend has no servers (HAProxy answers 503) so the route goes live as soon as endpoints
 *   appear, without a reload.
 * - Endpoint whose address is not an IP literal of its slice's type, or is unspecified, loopback,
 *   link-local or link-local multicast (what the API server's ValidateEndpointIP refuses): the
 *   endpoint is dropped (`InvalidEndpoints` on the EndpointSlice).
 * - Two paths with the same host + path + pathType (also across ingresses): the oldest ingress
 *   (creationTimestamp, then namespace/name) wins, the other gets a `RouteConflict` problem.
 * - Several default backends: the oldest ingress's wins, the others get `DefaultBackendConflict`.
 * - TLS entry with a missing or invalid Secret or an invalid host: TLS is dropped for those hosts
 *   (they stay reachable over HTTP, without redirect). A host listed with two different Secrets
 *   keeps the oldest ingress's (the other gets `TLSHostConflict`).
 * - Annotation with an invalid value: the default applies.
 * `servable` is false when nothing at all can be routed (no route and no default backend).
 *
 * Matching (what the rendered ACLs do):
 * - Exact: the request path equals `path`. Prefix: element-wise, `/foo` matches `/foo` and
 *   `/foo/bar` but not `/foobar`; a trailing slash in `path` is ignored. ImplementationSpecific:
 *   treated exactly like Prefix, except with the Ingress annotation `path-regex`: then `path` is
 *   a regular expression matched case-insensitively from the start of the path (values.ts's
 *   pathRegex; an invalid one drops the path), after the host's Exact paths and before its
 *   prefixes, the longest regex first (lib/render/maps.ts, docs/routing-maps.md).
 * - Host: compared with the Host header without its port, lower-cased. `*.example.com` matches
 *   exactly one label (`a.example.com`, not `example.com` nor `a.b.example.com`).
 * - Order: rules of exact hosts first, then wildcard hosts, then rules without host; within each,
 *   longer paths first and Exact before prefix at equal length. A request whose host has rules but
 *   none of whose paths match falls through to the wildcard and host-less rules, then to the
 *   default backend (the oldest ingress's spec.defaultBackend, else a built-in 404).
 */
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import type { Risk } from "../annotations/table.ts";
import { isProxyName } from "./patterns.ts";
import type { CanaryRule } from "./canary.ts";
import { DEFAULT_SETTINGS } from "./settings.ts";
import type { ResolveContext } from "./settings_reader.ts";
import { memoBackendSettings } from "./settings_memo.ts";
import { type ReadContext, type Report, SERVICE_NAME_LABEL } from "./backend_resolve.ts";
import { fragmentOf, idOf, ModelMemo } from "./ingress_reading.ts";
import type {
  Backend,
  BuildResult,
  ClientCertCheck,
  ClusterLookup,
  IngressFragment,
  Model,
  Resolved,
  Route,
  TlsCert,
} from "./model_types.ts";
import { ingressSettings } from "./ingress_settings.ts";
import { addWwwTwins, type CanaryPath, joinCanaries, namespaceOf, regexHosts, wwwTwin } from "./route_passes.ts";
import { cmp, show } from "./show.ts";
import { compareRoutes } from "./route_order.ts";
import { type AfterReplay, compareKeys, type IngressKey, KeptMerge, MergeRecord } from "./model_delta.ts";
import { CATCH_ALL, DEFAULT_OWNERSHIP, HostOwners, type OwnershipPolicy, wildcardOf } from "./host_ownership.ts";

export { compareRoutes, ModelMemo, SERVICE_NAME_LABEL };
/** The types the callers of buildModel name (the model's own modules import them from model_types.ts). */
export type { Backend, BuildResult, ClusterLookup, Model, Problem, Route, Server, TlsCert } from "./model_types.ts";

export interface ModelInput {
  ingresses: readonly V1Ingress[];
  lookup: ClusterLookup;
  /** With --restrict-to-operator-namespace: ingresses of other namespaces are refused. */
  namespace?: string | null;
  /**
   * Accept loopback endpoint addresses (127.0.0.0/8, ::1), which the API server refuses and the
   * model refuses too by default. Only for tests and benchmarks whose backends listen on the host's
   * loopback and whose objects never pass an API server; the controller never sets it.
   */
  allowLoopbackEndpoints?: boolean;
  /**
   * The lower layers of annotations/resolve.ts's precedence, bare keys: the controller's global
   * ConfigMap and the class's parameters (lib/controller/global_settings.ts).
   */
  layers?: { global?: Readonly<Record<string, string>>; class?: Readonly<Record<string, string>> };
  /** Annotations of this risk and above are ignored (the global `annotation-risk-limit`). */
  disableRiskAtOrAbove?: Risk | null;
  /** Who may serve a host (render/host_ownership.ts); default: Strict, no pins. */
  ownership?: OwnershipPolicy;
  /**
   * The owners the last model of this proxy decided (BuildResult.owners): a host stays with its
   * owner while the owner still names it. With a memo, the memo's are used.
   */
  previousOwners?: ReadonlyMap<string, string> | null;
  /**
   * Keeps each Ingress's fragment between models (lib/render/ingress_reading.ts): only for callers
   * whose Ingresses and lookup objects are replaced, never changed in place (the controller's caches).
   */
  memo?: ModelMemo;
  /**
   * A build only to check some of the proxy's Ingresses (validation isolating a refused one): the
   * memo's fragments are read and kept, but its last build and owners are neither started from by
   * a delta nor replaced. The hosts stay with the owners the last published build decided (sticky),
   * which a build of one member alone would otherwise hand to that member's namespace.
   */
  trial?: boolean;
}

/** The `passthrough.map` value of a host whose TLS connections are terminated, not passed through. */
export const PASS_TERMINATE = "ic_terminate";

/** The legacy prefix; its keys are aliases of `ingress-controller.io/` keys (lib/annotations/table.ts). */
export const ANNOTATION_PREFIX = "ingress.kubernetes.io/";
export const SSL_REDIRECT_ANNOTATION = `${ANNOTATION_PREFIX}ssl-redirect`;
export const BALANCE_ANNOTATION = `${ANNOTATION_PREFIX}load-balance`;
export const TIMEOUT_ANNOTATION = `${ANNOTATION_PREFIX}timeout-server`;

/** A lookup over plain lists (tests, benchmarks, the demo). */
export function lookupFromLists(lists: {
  services?: readonly V1Service[];
  endpointSlices?: readonly V1EndpointSlice[];
  secrets?: readonly V1Secret[];
}): ClusterLookup {
  const key = (ns: string | undefined, n: string | undefined) => `${ns ?? ""}/${n ?? ""}`;
  const services = new Map((lists.services ?? []).map((s) => [key(s.metadata?.namespace, s.metadata?.name), s]));
  const secrets = new Map((lists.secrets ?? []).map((s) => [key(s.metadata?.namespace, s.metadata?.name), s]));
  const slices = new Map<string, V1EndpointSlice[]>();
  for (const s of lists.endpointSlices ?? []) {
    const k = key(s.metadata?.namespace, s.metadata?.labels?.[SERVICE_NAME_LABEL]);
    slices.set(k, [...(slices.get(k) ?? []), s]);
  }
  return {
    service: (ns, n) => services.get(key(ns, n)),
    endpointSlices: (ns, svc) => slices.get(key(ns, svc)) ?? [],
    secret: (ns, n) => secrets.get(key(ns, n)),
  };
}

function timestampOf(i: V1Ingress): number {
  const t = i.metadata?.creationTimestamp as unknown;
  const ms = t instanceof Date ? t.getTime() : typeof t === "string" ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : Number.MAX_SAFE_INTEGER;
}

/**
 * `list` sorted by compareIngresses, each key computed once (not per comparison: 10,000 ingresses
 * meant ~300,000 date parses), and with a memo once per Ingress object. The keys hold no Ingress:
 * the merge state keeps them until its next full build, and a key holding its object kept every
 * Ingress object replaced since (10,000 of them after the first status writes) alive as well.
 */
function oldestFirst(list: readonly V1Ingress[], memo: ModelMemo | undefined): Sorted[] {
  return list.map((i): Sorted => ({ i, key: sortKeyOf(i, memo), fragment: null }))
    .sort((a, b) => compareKeys(a.key, b.key));
}

/** An Ingress in conflict order, and its fragment once read (the same object: 10,000 of these a full build). */
interface Sorted {
  i: V1Ingress;
  key: IngressKey;
  fragment: IngressFragment | null;
}

function sortKeyOf(i: V1Ingress, memo: ModelMemo | undefined): IngressKey {
  let k = memo?.sortKeys.get(i);
  if (!k) {
    k = { t: timestampOf(i), id: idOf(i) };
    memo?.sortKeys.set(i, k);
  }
  return k;
}

/** Oldest first; then namespace/name: the order in which ingresses win conflicts. */
export function compareIngresses(a: V1Ingress, b: V1Ingress): number {
  return timestampOf(a) - timestampOf(b) || cmp(idOf(a), idOf(b));
}
/** What the replay of the fragments builds up (the rules between Ingresses live here). */
interface Merge {
  routes: Map<string, Route>;
  certs: Map<string, TlsCert>;
  /** SNI host → the certificate file serving it (the first, i.e. oldest, ingress wins). */
  sniOwner: Map<string, { file: string; secret: string; ingress: string }>;
  redirect: Map<string, string>;
  /** Host → its client certificate check and the Ingress that set it (the oldest wins). */
  clientCerts: Map<string, ClientCertCheck & { ingress: string }>;
  defaultBackend: { name: string; ingress: string } | null;
  /** Paths of canary Ingresses, joined to their main routes once every Ingress is read. */
  canaryPaths: CanaryPath[];
  /** Hosts of Ingresses with `www-redirect`: their twins (`www.` added or removed) redirect to them. */
  wwwHosts: { host: string; ns: string; id: string }[];
  /** Hosts of Ingresses with `ssl-passthrough`, in Ingress order. */
  passHosts: { host: string; id: string; problem: Report }[];
  /** Hosts an Ingress with `path-regex: all` routes: every path there is a regex (`regexHosts`). */
  regexHosts: Set<string>;
  /** Who may serve which host (Strict); null: every namespace may (InterNamespaceAllowed). */
  owners: HostOwners | null;
}

/** What reading one Ingress of `input` needs, and the key of the settings its fragment was read with. */
function readContext(
  input: ModelInput,
): { ctx: ReadContext; env: string; namespace: string | null; policy: OwnershipPolicy } {
  const resolve: ResolveContext = {
    layers: input.layers ?? {},
    disableRiskAtOrAbove: input.disableRiskAtOrAbove ?? null,
  };
  const resolveKey = JSON.stringify(resolve);
  const ctx: ReadContext = {
    lookup: input.lookup,
    allowLoopbackEndpoints: input.allowLoopbackEndpoints === true,
    resolve,
    resolveKey,
    baseline: memoBackendSettings(resolveKey, resolve, {}, {}, null).json,
    defaultJson: JSON.stringify(DEFAULT_SETTINGS),
    ingressDefaults: ingressSettings(resolve, {}, () => {}),
    problems: [],
    backends: new Map(),
    services: new Set(),
    secrets: new Set(),
  };
  const namespace = input.namespace ?? null;
  const policy = input.ownership ?? DEFAULT_OWNERSHIP;
  const env = `${resolveKey}\0${ctx.allowLoopbackEndpoints}\0${namespace ?? ""}\0${JSON.stringify(policy)}`;
  return { ctx, env, namespace, policy };
}

/**
 * Reads the fragments of `input.ingresses[start..end)` into `input.memo` (kept as a build would keep
 * them), so that a large first build can be read in slices with other work between them: the build
 * that follows finds them kept and only merges. Without a memo it does nothing.
 */
export function readFragments(input: ModelInput, start: number, end: number): void {
  const memo = input.memo;
  if (!memo) return;
  const { ctx, env, namespace } = readContext(input);
  for (let i = start; i < end; i++) fragmentOf(ctx, input.ingresses[i], env, namespace, memo);
}

/** Builds the model of one proxy; see the module header for what happens to invalid input. */
export function buildModel(input: ModelInput): BuildResult {
  const { ctx, env, namespace, policy } = readContext(input);
  const accepted: string[] = [];
  const m: Merge = {
    routes: new Map(),
    certs: new Map(),
    sniOwner: new Map(),
    redirect: new Map(),
    clientCerts: new Map(),
    defaultBackend: null,
    canaryPaths: [],
    wwwHosts: [],
    passHosts: [],
    regexHosts: new Set(),
    owners: null,
  };
  const memo = input.memo;
  const trial = input.trial === true;
  // Ingresses gone are dropped from the memo's latest objects now and then, not on every build
  // (nor on a trial of a few of them: the others are still there).
  if (memo && !trial && memo.latest.size > 2 * input.ingresses.length + 64) {
    const ids = new Set(input.ingresses.map(idOf));
    for (const id of memo.latest.keys()) if (!ids.has(id)) memo.latest.delete(id);
  }
  if (!trial && memo?.merge?.env === env) {
    const delta = memo.merge.apply(
      input.ingresses,
      (i) => fragmentOf(ctx, i, env, namespace, memo),
      (i) => sortKeyOf(i, memo),
      input.lookup.generation?.() ?? null,
    );
    if (delta) {
      memo.deltas++;
      if (memo.merge.inPlace) memo.inPlaceDeltas++;
      return delta;
    }
  }
  // With a memo, the replay is recorded, so that the next change may be a delta (model_delta.ts).
  const record = memo && !trial ? new MergeRecord() : null;
  const replayed: { fragment: IngressFragment; key: IngressKey; accepted: boolean }[] = [];
  const unserved: string[] = [];
  const read = oldestFirst(input.ingresses, memo);
  for (const r of read) r.fragment = fragmentOf(ctx, r.i, env, namespace, memo);
  if (policy.mode === "Strict") {
    m.owners = new HostOwners(policy);
    const previous = (memo ? memo.owners : input.previousOwners) ?? null;
    m.owners.decide(read, (r) => r.fragment!.accepted ? r.fragment : null, previous);
  }
  for (const { fragment: read1, key } of read) {
    const fragment = read1!;
    for (const s of fragment.secrets) {
      ctx.secrets.add(s);
      record?.secret(s);
    }
    const before = ctx.problems.length;
    const served = fragment.accepted && claimsServed(ctx, m.owners, fragment);
    if (served) accepted.push(fragment.id);
    else if (fragment.accepted) unserved.push(fragment.id);
    replay(ctx, m, fragment, record);
    if (record) {
      replayed.push({ fragment, key, accepted: served });
      if (ctx.problems.length > before) record.problems.set(fragment.id, ctx.problems.slice(before));
    }
  }

  const { routes, redirect, clientCerts, defaultBackend } = m;
  const replayProblems = ctx.problems.length;
  regexHosts(ctx, routes, m.regexHosts);
  const canaries = joinCanaries(ctx, routes, m.canaryPaths);
  addWwwTwins(ctx, routes, m.wwwHosts, m.owners);
  const passthrough = passthroughBackends(ctx, routes, m.passHosts);
  const passHosts = excludeFromPassthrough(passthrough.hosts, routes, m);
  const model: Model = {
    canaries,
    ingresses: accepted,
    unserved,
    routes: [...routes.values()].sort(compareRoutes),
    backends: [...usedBackends(ctx, routes, canaries, defaultBackend), ...passthrough.backends]
      .sort((a, b) => cmp(a.name, b.name)),
    defaultBackend: defaultBackend?.name ?? null,
    tls: excludeOwnedHosts([...m.certs.values()], m.owners).sort((a, b) => cmp(a.file, b.file)),
    redirectHosts: [...redirect.keys()].sort(),
    redirectCodes: Object.fromEntries([...redirect].filter(([, c]) => c !== "308").sort()),
    ...(clientCerts.size > 0
      ? {
        clientCerts: Object.fromEntries(
          [...clientCerts].sort(([a], [b]) => cmp(a, b)).map(([h, { namespace, name, verify }]) => [h, {
            namespace,
            name,
            verify,
          }]),
        ),
      }
      : {}),
    passthrough: passHosts,
    stops: m.owners?.stops().map(([host, stop]) => ({ host, stop })) ?? [],
    refs: { services: [...ctx.services].sort(), secrets: [...ctx.secrets].sort() },
  };
  const servable = model.routes.length > 0 || model.defaultBackend !== null;
  if (!servable) {
    for (const id of accepted) {
      ctx.problems.push({
        object: id,
        kind: "Ingress",
        reason: "NothingToServe",
        message: "no valid rule and no default backend: every request gets 404",
      });
    }
  }
  const unique = new Map(ctx.problems.map((p) => [JSON.stringify(p), p]));
  if (memo && !trial) {
    // What the passes after the replay looked at: a delta must leave it alone (model_delta.ts).
    const after: AfterReplay = {
      keys: new Set(m.canaryPaths.map((c) => c.key)),
      hosts: new Set([
        ...m.regexHosts,
        ...m.wwwHosts.map((w) => wwwTwin(w.host)),
        ...m.passHosts.map((p) => p.host),
        ...passHosts.map((p) => p.host),
      ]),
      backends: new Set(canaries.map((c) => c.canary)),
      problems: ctx.problems.slice(replayProblems),
    };
    memo.merge = servable
      ? new KeptMerge(env, record!, routes, ctx.backends, model, replayed, after, m.owners, policy)
      : null;
    memo.owners = m.owners?.owners ?? null;
  }
  return { model, problems: [...unique.values()], servable, owners: m.owners?.owners ?? null };
}

/** The owner of a claim, as problems name it. */
function claimName(claim: string): string {
  return claim === CATCH_ALL ? "the catch-all (rules without host and spec.defaultBackend)" : `host ${claim}`;
}

/**
 * Reports each claim of `f` another namespace owns (one Warning per host); false when the
 * Ingress names hosts and owns none of them (its status then lists no address).
 */
function claimsServed(ctx: ReadContext, owners: HostOwners | null, f: IngressFragment): boolean {
  if (owners === null || f.claims.length === 0) return true;
  let served = 0;
  for (const c of f.claims) {
    const owner = owners.ownerOf(c);
    if (owner === f.ns) {
      served++;
      continue;
    }
    const pinned = owners.pinned(c) !== null;
    const w = c === CATCH_ALL ? null : wildcardOf(c);
    const through = !pinned && owner !== null && owners.owners.get(c) === undefined && w !== null
      ? ` (its wildcard ${w})`
      : "";
    ctx.problems.push({
      object: f.id,
      kind: "Ingress",
      reason: "HostAlreadyClaimed",
      message: owner === null
        ? `${claimName(c)} is reserved by the administrator (pinned-hosts) for another namespace; ` +
          "its rules, TLS entries and annotations in this Ingress are not served"
        : `${claimName(c)} belongs to namespace ${owner}${through}${pinned ? ", pinned by the administrator" : ""}` +
          "; its rules, TLS entries and annotations in this Ingress are not served (namespace-ownership: Strict)",
    });
  }
  return served > 0;
}

/** Takes what resolving a backend produced (only for references the model uses). */
function take(ctx: ReadContext, r: Resolved, record: MergeRecord | null): string | null {
  record?.take(r);
  for (const p of r.problems) ctx.problems.push(p);
  for (const b of r.backends) if (!ctx.backends.has(b.name)) ctx.backends.set(b.name, b);
  for (const s of r.services) ctx.services.add(s);
  for (const s of r.secrets) ctx.secrets.add(s);
  return r.name;
}

/** Replays one Ingress's steps with the rules between Ingresses (module header: oldest wins). */
function replay(ctx: ReadContext, m: Merge, f: IngressFragment, record: MergeRecord | null): void {
  const id = f.id;
  const problem: Report = (reason, message) => ctx.problems.push({ object: id, kind: "Ingress", reason, message });
  // Steps for hosts of other namespaces are left out silently: claimsServed reported each host once.
  const owners = m.owners;
  const may = (host: string) => owners === null || owners.mayServe(f.ns, host);
  let tlsHosts = 0;
  for (const s of f.steps) {
    switch (s.step) {
      case "problem":
        ctx.problems.push(s.problem);
        break;
      case "tls": {
        const { t, cert } = s;
        const served: string[] = [];
        for (const h of s.hosts) {
          if (!may(h)) continue;
          const owner = m.sniOwner.get(h);
          if (owner === undefined || owner.file === cert.file) {
            m.sniOwner.set(h, { file: cert.file, secret: `${cert.namespace}/${cert.name}`, ingress: id });
            served.push(h);
          } else {
            problem(
              "TLSHostConflict",
              `spec.tls[${t}]: host ${h} already uses Secret ${owner.secret} ` +
                `of ingress ${owner.ingress}, which is older; ignored for this Secret`,
            );
          }
        }
        tlsHosts += served.length;
        const existing = m.certs.get(cert.file);
        if (served.length === 0) {
          // A certificate is served only for SNI names of its Ingress's namespace: never as a default.
          if (!existing) {
            problem(
              "TLSNotServed",
              `spec.tls[${t}]: Secret ${cert.namespace}/${cert.name} serves none of its hosts here (each belongs to ` +
                "another namespace or uses an older Ingress's Secret); not served",
            );
          }
          break;
        }
        const merged = new Set([...(existing?.hosts ?? []), ...served]);
        m.certs.set(cert.file, { ...cert, hosts: [...merged].sort() });
        if (f.sslRedirect) {
          for (const h of served) if (!m.redirect.has(h)) m.redirect.set(h, f.redirectCode);
        }
        const clientCert = f.clientCert;
        for (const h of clientCert ? served : []) {
          const owner = m.clientCerts.get(h);
          const same = owner && owner.namespace === f.ns && owner.name === clientCert!.name &&
            owner.verify === clientCert!.verify;
          if (!owner || same) {
            if (!owner) m.clientCerts.set(h, { ...clientCert!, ingress: id });
          } else {
            problem(
              "ClientCertConflict",
              `spec.tls[${t}]: host ${h} already checks client certificates as ingress ${owner.ingress} says, ` +
                "which is older; client-cert annotations ignored for this host",
            );
          }
        }
        break;
      }
      case "clientCertWithoutTls":
        if (tlsHosts === 0) {
          problem(
            "ClientCertWithoutTLS",
            "annotation ingress-controller.io/client-cert-ca-secret: the Ingress serves no TLS host (spec.tls), so " +
              `no client certificate is asked for${
                f.clientCert?.verify === "required" ? " and every request gets 403" : ""
              }`,
          );
        }
        break;
      case "defaultBackend": {
        if (!may(CATCH_ALL)) break;
        const be = take(ctx, s.resolved, record);
        if (!be) break;
        if (m.defaultBackend === null) m.defaultBackend = { name: be, ingress: id };
        else if (m.defaultBackend.name !== be) {
          problem(
            "DefaultBackendConflict",
            `spec.defaultBackend is ignored: ingress ${m.defaultBackend.ingress} is older and sets the default backend`,
          );
        }
        break;
      }
      case "www":
        if (may(s.host)) m.wwwHosts.push({ host: s.host, ns: f.ns, id });
        break;
      case "passthrough":
        if (may(s.host)) m.passHosts.push({ host: s.host, id, problem });
        break;
      case "forceRedirect":
        if (may(s.host) && !m.redirect.has(s.host)) m.redirect.set(s.host, f.redirectCode);
        break;
      case "canary": {
        const be = take(ctx, s.resolved, record);
        if (be) {
          m.canaryPaths.push({ ns: f.ns, key: s.key, backend: be, settings: f.canary!, where: s.where, problem });
        }
        break;
      }
      case "route": {
        if (!may(s.host || CATCH_ALL)) break;
        record?.claim(s.key);
        const winner = m.routes.get(s.key);
        if (winner) {
          problem(
            "RouteConflict",
            `${s.where}: host ${show(s.host || "*")} path ${show(s.path)} (${s.pathType}) is already routed by ` +
              `ingress ${winner.ingress}${winner.ingress === id ? "" : ", which is older"}; path ignored`,
          );
          break;
        }
        const be = take(ctx, s.resolved, record);
        // The route object is the step's own: one per Ingress object, so what is derived from it
        // (its map line) is kept too (lib/render/maps.ts).
        const { host, path, pathType, match } = s;
        if (be) {
          m.routes.set(s.key, s.route ??= Object.freeze({ host, path, pathType, match, backend: be, ingress: id }));
          if (f.regexAll) m.regexHosts.add(host);
        }
        break;
      }
    }
  }
}

/**
 * `ssl-passthrough`: as ingress-nginx, a host's TLS connections go to the Service of its root path
 * (`/`, Prefix or ImplementationSpecific) of the same Ingress, through a `mode tcp` copy of that
 * Service's backend with its own server slots. A host without such a path keeps TLS termination.
 */
function passthroughBackends(
  ctx: ReadContext,
  routes: Map<string, Route>,
  hosts: { host: string; id: string; problem: Report }[],
): { hosts: { host: string; backend: string; ns: string }[]; backends: Backend[] } {
  const out = new Map<string, { backend: string; ns: string }>();
  const backends = new Map<string, Backend>();
  for (const { host, id, problem } of hosts) {
    if (out.has(host)) continue;
    const root = [routes.get(`${host} / Prefix`), routes.get(`${host} / ImplementationSpecific`)]
      .find((r) => r?.ingress === id);
    const b = root && ctx.backends.get(root.backend);
    if (!b) {
      problem(
        "InvalidAnnotation",
        `annotation ingress-controller.io/ssl-passthrough: host ${host} has no root path (/) of this Ingress ` +
          "to pass TLS connections to; its TLS connections are terminated by the proxy",
      );
      continue;
    }
    const name = `be_${b.namespace}_${b.service}_${b.port}_tcp`;
    if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${show(name)}`);
    const { settings: _, ...plain } = b;
    backends.set(name, { ...plain, name, mode: "tcp", timeoutServer: null });
    out.set(host, { backend: name, ns: b.namespace });
  }
  return {
    hosts: [...out].map(([host, { backend, ns }]) => ({ host, backend, ns })).sort((a, b) => cmp(a.host, b.host)),
    backends: [...backends.values()],
  };
}

/**
 * Hosts under a passthrough wildcard (`*.bank.test`) that another namespace than the wildcard's
 * routes, terminates or owns keep TLS termination: PASS_TERMINATE in `passthrough.map` stops the
 * wildcard lookup for them. Returns the passthrough hosts with those added, sorted by host.
 */
function excludeFromPassthrough(
  pass: readonly { host: string; backend: string; ns: string }[],
  routes: Map<string, Route>,
  m: Merge,
): { host: string; backend: string }[] {
  const out = pass.map(({ host, backend }) => ({ host, backend }));
  const wildcards = new Map(pass.filter((p) => p.host.startsWith("*.")).map((p) => [p.host, p.ns]));
  if (wildcards.size === 0) return out;
  const passing = new Set(pass.map((p) => p.host));
  const servedBy = new Map<string, Set<string>>();
  const add = (host: string, ns: string | null) => {
    if (ns === null || host === "" || host.startsWith("*.") || passing.has(host)) return;
    let s = servedBy.get(host);
    if (!s) servedBy.set(host, s = new Set());
    s.add(ns);
  };
  for (const r of routes.values()) add(r.host, namespaceOf(r.ingress));
  for (const [h, o] of m.sniOwner) add(h, namespaceOf(o.ingress));
  for (const h of m.owners?.ownedHosts() ?? []) add(h, m.owners!.ownerOf(h));
  for (const [host, namespaces] of servedBy) {
    const w = wildcardOf(host);
    const ns = w === null ? undefined : wildcards.get(w);
    if (ns !== undefined && [...namespaces].some((n) => n !== ns)) out.push({ host, backend: PASS_TERMINATE });
  }
  return out.sort((a, b) => cmp(a.host, b.host));
}

/** The certificates with their wildcards' exclusions: the exact hosts under them another namespace owns. */
function excludeOwnedHosts(certs: TlsCert[], owners: HostOwners | null): TlsCert[] {
  if (owners === null || !certs.some((c) => c.hosts.some((h) => h.startsWith("*.")))) return certs;
  const under = new Map<string, string[]>();
  for (const h of owners.ownedHosts()) {
    const w = wildcardOf(h);
    if (w !== null) under.set(w, [...(under.get(w) ?? []), h]);
  }
  return certs.map((c) => {
    const excluded = c.hosts.flatMap((w) => (under.get(w) ?? []).filter((h) => owners.ownerOf(h) !== c.namespace));
    return excluded.length === 0 ? c : { ...c, excluded: [...new Set(excluded)].sort() };
  });
}

/** The backends something routes to (a canary's main route leaves its former backend unused), unsorted. */
function usedBackends(
  ctx: ReadContext,
  routes: Map<string, Route>,
  canaries: CanaryRule[],
  defaultBackend: { name: string } | null,
): Backend[] {
  const used = new Set<string>();
  for (const r of routes.values()) used.add(r.backend);
  for (const c of canaries) used.add(c.canary);
  if (defaultBackend) used.add(defaultBackend.name);
  const fallbacks: string[] = [];
  for (const b of ctx.backends.values()) if (b.fallback && used.has(b.name)) fallbacks.push(b.fallback);
  for (const f of fallbacks) used.add(f);
  const out: Backend[] = [];
  for (const b of ctx.backends.values()) if (used.has(b.name)) out.push(b);
  return out;
}
