/**
 * @module render/ingress_reading
 * Reads one Ingress into a fragment: everything about it that does not depend on the other
 * Ingresses of the proxy (its names, annotations, TLS Secrets, paths and the backends they resolve
 * to, with the problems found on the way), as a list of steps in the order they were found (the
 * fragment's types: render/model_types.ts). The model (lib/render/model.ts) replays the fragments
 * oldest first and applies the rules between Ingresses there (conflicts, TLS host owners,
 * canaries), so the outcome is the same as reading everything in one pass.
 *
 * With a ModelMemo, a fragment is kept for its Ingress object and reused while the objects it read
 * (Services, EndpointSlices, Secrets, found through the lookup) are the same objects and the
 * settings layers are the same: the controller's caches hand out one object until it changes, so a
 * change to one of 10,000 Ingresses reads one Ingress again, not 10,000 (docs/controller-scale.md).
 */
import type { V1EndpointSlice, V1Ingress, V1IngressBackend } from "@kubernetes/client-node";
import { isDns1123Label, isDns1123Subdomain, isHost, isPath } from "./patterns.ts";
import { pathRegex } from "../annotations/values.ts";
import { ingressSettings } from "./ingress_settings.ts";
import { type SecretLike, tlsSummaryOf } from "./tls_secret.ts";
import { hasTableAnnotations } from "./settings_memo.ts";
import { type ReadContext, type Report, resolveBackend } from "./backend_resolve.ts";
import { show } from "./show.ts";
import type { IngressKey, KeptMerge } from "./model_delta.ts";
import { CATCH_ALL } from "./host_ownership.ts";
import type {
  ClientCertCheck,
  ClusterLookup,
  IngressFragment,
  Match,
  PathType,
  Problem,
  Resolved,
  Step,
  TlsCert,
} from "./model_types.ts";

const NONE: never[] = Object.freeze([]) as never[];

/** Something a fragment read through the lookup, and what it got. */
type Read =
  | { kind: "service"; ns: string; name: string; got: unknown }
  | { kind: "slices"; ns: string; name: string; got: readonly V1EndpointSlice[] }
  | { kind: "secret"; ns: string; name: string; got: SecretLike | undefined };

interface Kept {
  fragment: IngressFragment;
  /** The settings layers, the risk limit and the model options the fragment was read with. */
  env: string;
  /**
   * What it read, flat: kind, namespace, name and what it got, four items per read (an object per
   * read and its array were 170 bytes an Ingress; this is 110).
   */
  reads: readonly unknown[];
  /** The lookup's generation when the reads were last found unchanged (ClusterLookup.generation). */
  generation: number | null;
  /** The last Ingress object this was taken for (see `fragmentOf`). */
  ing: V1Ingress;
}

/**
 * Fragments kept between models, per Ingress object. Only for callers whose lookup and Ingress
 * objects are never changed in place (the controller's caches replace objects): a changed object
 * must be a new object.
 */
export class ModelMemo {
  readonly kept = new WeakMap<V1Ingress, Kept>();
  /** The sort key of each Ingress (its creation time and id). */
  readonly sortKeys = new WeakMap<V1Ingress, IngressKey>();
  /** What was kept last for each Ingress (by id), with its last object: see `fragmentOf`. */
  readonly latest = new Map<string, Kept>();
  /** The last full build's state, from which the next one may be a delta (lib/render/model_delta.ts). */
  merge: KeptMerge | null = null;
  /** The owners the last build decided (render/host_ownership.ts): the next full build keeps them while they claim. */
  owners: ReadonlyMap<string, string> | null = null;
  /** Builds made as deltas (for tests and the scale benchmark). */
  deltas = 0;
  /** Of those, the deltas that found their changes by comparing the input with the last one only (KeptMerge). */
  inPlaceDeltas = 0;

  /**
   * `ing` replaces the last object of its Ingress in the cache, its status alone changed: when it
   * reads the same, it has the same fragment from now on (what `fragmentOf` would find at the next
   * build). Called as each status write comes back, so that the first change after a first
   * publish's 100,000 status writes does not compare 100,000 objects.
   */
  adopt(ing: V1Ingress): void {
    if (this.kept.has(ing)) return;
    const last = this.latest.get(idOf(ing));
    if (last && sameReading(last.ing, ing)) this.kept.set(ing, last);
  }
}

function sameRead(lookup: ClusterLookup, r: Read): boolean {
  switch (r.kind) {
    case "service":
      return lookup.service(r.ns, r.name) === r.got;
    case "secret":
      return lookup.secret(r.ns, r.name) === r.got;
    case "slices": {
      const now = lookup.endpointSlices(r.ns, r.name);
      return now.length === r.got.length && now.every((s, i) => s === r.got[i]);
    }
  }
}

/** `reads` as Kept holds them, in an array of its exact size (one grown by push keeps room for 16 more). */
function flatReads(reads: readonly Read[]): unknown[] {
  const flat: unknown[] = new Array(reads.length * 4);
  reads.forEach((r, i) => {
    flat[4 * i] = r.kind;
    flat[4 * i + 1] = r.ns;
    flat[4 * i + 2] = r.name;
    flat[4 * i + 3] = r.got;
  });
  return flat;
}

/** Whether every read of `flat` (Kept's `reads`) finds what it got then. */
function sameReads(lookup: ClusterLookup, flat: readonly unknown[]): boolean {
  for (let i = 0; i < flat.length; i += 4) {
    const r = { kind: flat[i], ns: flat[i + 1], name: flat[i + 2], got: flat[i + 3] } as Read;
    if (!sameRead(lookup, r)) return false;
  }
  return true;
}

/** A lookup that notes what it hands out (each object once). */
function recording(lookup: ClusterLookup, reads: Read[]): ClusterLookup {
  const seen = new Set<string>();
  const note = (r: Read) => {
    const key = `${r.kind} ${r.ns}/${r.name}`;
    if (seen.has(key)) return;
    seen.add(key);
    reads.push(r);
  };
  return {
    service(ns, name) {
      const got = lookup.service(ns, name);
      note({ kind: "service", ns, name, got });
      return got;
    },
    endpointSlices(ns, name) {
      const got = lookup.endpointSlices(ns, name);
      note({ kind: "slices", ns, name, got });
      return got;
    },
    secret(ns, name) {
      const got = lookup.secret(ns, name);
      note({ kind: "secret", ns, name, got });
      return got;
    },
  };
}

/** The fragment of `ing`: kept in `memo` while what it read is unchanged, else read now. */
export function fragmentOf(
  ctx: ReadContext,
  ing: V1Ingress,
  env: string,
  namespace: string | null,
  memo: ModelMemo | undefined,
): IngressFragment {
  if (!memo) return readIngress(ctx, ing, namespace);
  const generation = ctx.lookup.generation?.() ?? null;
  let kept = memo.kept.get(ing);
  if (!kept) {
    // A new object of the same Ingress that reads the same (its status was written, a label
    // changed) has the same fragment: 10,000 status writes must not read 10,000 Ingresses again.
    const last = memo.latest.get(idOf(ing));
    if (last && sameReading(last.ing, ing)) memo.kept.set(ing, kept = last);
  }
  if (
    kept && kept.env === env &&
    ((generation !== null && kept.generation === generation) || sameReads(ctx.lookup, kept.reads))
  ) {
    kept.generation = generation;
    // Every build asks for every Ingress: the entry is changed in place, and only when it differs,
    // so that an unchanged Ingress allocates nothing (a new young object in an old Map per Ingress
    // and build was most of a one-change build's garbage collection at 10,000).
    if (memo.latest.get(kept.fragment.id) !== kept) memo.latest.set(kept.fragment.id, kept);
    if (kept.ing !== ing) kept.ing = ing;
    return kept.fragment;
  }
  const reads: Read[] = [];
  const fragment = readIngress({ ...ctx, lookup: recording(ctx.lookup, reads) }, ing, namespace);
  // Copied: an array grown by push keeps room for 16 more, and 10,000 of these are kept.
  kept = { fragment, env, reads: flatReads(reads), generation, ing };
  memo.kept.set(ing, kept);
  memo.latest.set(fragment.id, kept);
  return fragment;
}

/** A creation time as the API server writes it, or a Date (client-node's objects): milliseconds either way. */
function instant(t: unknown): number | string {
  return t instanceof Date ? t.getTime() : typeof t === "string" ? Date.parse(t) : String(t);
}

/**
 * Whether `b` reads as `a` does: the same Ingress (uid and creation time: a re-created one
 * sorts elsewhere) with the same annotations and spec, which is all readIngress looks at.
 */
function sameReading(a: V1Ingress, b: V1Ingress): boolean {
  if (a === b) return true;
  const [ma, mb] = [a.metadata ?? {}, b.metadata ?? {}];
  return ma.uid === mb.uid && ma.namespace === mb.namespace && ma.name === mb.name &&
    instant(ma.creationTimestamp) === instant(mb.creationTimestamp) &&
    sameJson(ma.annotations ?? {}, mb.annotations ?? {}) && sameJson(a.spec ?? null, b.spec ?? null);
}

/**
 * Whether `a` and `b` have the same JSON text, without making it: the same keys in the same order
 * and the same values (false for what JSON would drop or change, such as an `undefined` field, which
 * only costs a fragment read again). After the status writes of a first publish every Ingress object
 * is new, and the first change then compared 100,000 of them: two texts each made garbage of all.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(a) !== Object.prototype) return false;
  if (Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i];
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** The `where` of the first paths of the first rules, made once: every kept route step holds one. */
const WHERE_KEPT = 16;
const wheres: string[][] = [];

/** `spec.rules[r].http.paths[p]`, as a step keeps it (a flat string, shared for small r and p). */
function pathWhere(r: number, p: number): string {
  // Joined: a template literal is kept as a chain of its pieces.
  const make = () => ["spec.rules[", r, "].http.paths[", p, "]"].join("");
  if (r >= WHERE_KEPT || p >= WHERE_KEPT) return make();
  return (wheres[r] ??= [])[p] ??= make();
}

/** `namespace/name` of an Ingress, as problems and routes name it. */
export function idOf(i: { metadata?: { namespace?: string; name?: string } }): string {
  return `${i.metadata?.namespace ?? ""}/${i.metadata?.name ?? ""}`;
}

/** Prefix paths compare element-wise: a trailing slash means nothing (except for the root). */
function normalizePrefix(path: string): string {
  const p = path.replace(/\/+$/, "");
  return p === "" ? "/" : p;
}

/** Resolves a backend reference on its own: what it creates and reports is kept apart until the model uses it. */
function resolveApart(
  ctx: ReadContext,
  id: string,
  ns: string,
  backend: V1IngressBackend | undefined,
  where: string,
  annotations: Record<string, string>,
  path: { path: string; match: Match } | null,
  ingress = "",
): Resolved {
  const problems: Problem[] = [];
  const sub: ReadContext = { ...ctx, problems, backends: new Map(), services: new Set(), secrets: new Set() };
  const name = resolveBackend(sub, ns, backend, where, annotations, path, (reason, message) => {
    problems.push({ object: id, kind: "Ingress", reason, message });
  }, ingress);
  // Most references find everything: no problem and no Secret (one shared empty list keeps 10,000 fragments small).
  return {
    name,
    problems: problems.length > 0 ? problems : NONE,
    backends: [...sub.backends.values()],
    services: [...sub.services],
    secrets: sub.secrets.size > 0 ? [...sub.secrets] : NONE,
  };
}

/** Reads one Ingress (see the module header); `namespace`: only Ingresses of this namespace are accepted. */
export function readIngress(ctx: ReadContext, ing: V1Ingress, namespace: string | null): IngressFragment {
  const ns = ing.metadata?.namespace;
  const name = ing.metadata?.name;
  const id = idOf(ing);
  const steps: Step[] = [];
  const problem: Report = (reason, message) =>
    steps.push({ step: "problem", problem: { object: id, kind: "Ingress", reason, message } });
  const fragment: IngressFragment = {
    id,
    ns: ns ?? "",
    accepted: false,
    sslRedirect: false,
    redirectCode: "308",
    canary: null,
    clientCert: null,
    secrets: [],
    claims: NONE,
    steps,
  };
  if (!isDns1123Label(ns) || !isDns1123Subdomain(name)) {
    problem("InvalidName", `ingress namespace/name ${show(id)} is not a valid DNS-1123 name; ingress ignored`);
    return fragment;
  }
  if (namespace && ns !== namespace) {
    problem(
      "NamespaceRefused",
      `ingress is outside the operator namespace ${namespace} (--restrict-to-operator-namespace); ignored`,
    );
    return fragment;
  }
  fragment.accepted = true;
  // TLS Secrets and the client certificate CA are read through `ctx` (its lookup may be recording).
  const secrets = new Set<string>();
  const rctx: ReadContext = { ...ctx, secrets };
  const annotations = ing.metadata?.annotations ?? {};
  // Most Ingresses set none of the table's keys: the layers' values, read once per model, apply.
  const settings = hasTableAnnotations(annotations)
    ? ingressSettings(ctx.resolve, annotations, problem)
    : ctx.ingressDefaults;
  fragment.sslRedirect = settings.sslRedirect;
  fragment.redirectCode = settings.redirectCode;
  const canary = fragment.canary = settings.canary;
  const www = settings.www;
  const regexPaths = settings.regexPaths;
  if (regexPaths === "all") fragment.regexAll = true;
  const clientCert = fragment.clientCert = clientCertCheck(rctx, ns, settings.clientCert, problem);
  const passthrough = settings.passthrough;
  // as ingress-nginx: HTTPS is terminated in front of the proxy, so the hosts need no TLS of their own
  const forceRedirect = !canary && settings.forceRedirect;

  // An array, not a Set: an Ingress names a few hosts, and 10,000 Sets a build were garbage.
  const claims: string[] = [];
  const tlsEntries = ing.spec?.tls ?? [];
  // The rule hosts a TLS entry without hosts stands for (read before the rules, which come after TLS).
  const ruleHosts = tlsEntries.some((t) => (t.hosts ?? []).length === 0) ? validRuleHosts(ing) : NONE;
  for (const [t, tls] of tlsEntries.entries()) {
    const hosts: string[] = [];
    for (const h of tls.hosts ?? []) {
      if (isHost(h)) hosts.push(h);
      else problem("InvalidHost", `spec.tls[${t}].hosts: ${show(h)} is not a valid host; ignored`);
    }
    // Without hosts, the entry is for the Ingress's own rule hosts: a certificate is never served
    // without SNI names, where it would answer for every host of the proxy.
    if ((tls.hosts ?? []).length === 0) hosts.push(...ruleHosts);
    const cert = tlsCert(rctx, ns, tls.secretName, `spec.tls[${t}]`, problem);
    if (cert && hosts.length === 0) {
      if ((tls.hosts ?? []).length > 0) continue; // every host was invalid (reported above)
      problem(
        "TLSWithoutHosts",
        `spec.tls[${t}]: no hosts, and the Ingress has no rule with a host; Secret ${ns}/${tls.secretName} is not served`,
      );
    } else if (cert) steps.push({ step: "tls", t, hosts, cert });
    for (const h of hosts) if (!claims.includes(h)) claims.push(h);
  }
  if (ing.spec?.defaultBackend && !claims.includes(CATCH_ALL)) claims.push(CATCH_ALL);
  if (clientCert) steps.push({ step: "clientCertWithoutTls" });

  if (ing.spec?.defaultBackend) {
    steps.push({
      step: "defaultBackend",
      resolved: resolveApart(ctx, id, ns, ing.spec.defaultBackend, "spec.defaultBackend", annotations, null),
    });
  }

  for (const [r, rule] of (ing.spec?.rules ?? []).entries()) {
    const host = rule.host ?? "";
    if (host !== "" && !isHost(host)) {
      problem("InvalidHost", `spec.rules[${r}].host: ${show(host)} is not a valid host; rule ignored`);
      continue;
    }
    const claim = host === "" ? (rule.http?.paths ?? []).length > 0 ? CATCH_ALL : null : host;
    if (claim !== null && !claims.includes(claim)) claims.push(claim);
    if (www && !canary && host !== "" && !host.startsWith("*.")) steps.push({ step: "www", host });
    if (passthrough && !canary && host !== "") steps.push({ step: "passthrough", host });
    if (forceRedirect && host !== "") steps.push({ step: "forceRedirect", host });
    for (const [p, hp] of (rule.http?.paths ?? []).entries()) {
      const where = pathWhere(r, p);
      const pathType = hp.pathType as PathType;
      if (pathType !== "Exact" && pathType !== "Prefix" && pathType !== "ImplementationSpecific") {
        problem("InvalidPathType", `${where}.pathType: ${show(hp.pathType)} is not supported; path ignored`);
        continue;
      }
      const raw = hp.path ?? (pathType === "ImplementationSpecific" ? "/" : undefined);
      const regex = regexPaths === "all" || (regexPaths === "true" && pathType === "ImplementationSpecific");
      if (regex) {
        const parsed = pathRegex.parse(raw ?? "");
        if (!parsed.ok) {
          problem("InvalidPath", `${where}.path: ${show(raw)} ${parsed.reason} (a path-regex path); path ignored`);
          continue;
        }
      } else if (!isPath(raw)) {
        problem(
          "InvalidPath",
          `${where}.path: ${show(raw)} is not an absolute path of letters, digits and -._~!*+,;=:@/%XX; path ignored`,
        );
        continue;
      }
      const match: Match = regex ? "regex" : pathType === "Exact" ? "exact" : "prefix";
      const path = match === "prefix" ? normalizePrefix(raw!) : raw!;
      const key = `${host} ${path} ${pathType}`;
      const resolved = resolveApart(ctx, id, ns, hp.backend, `${where}.backend`, annotations, { path, match }, name);
      steps.push(
        canary
          ? { step: "canary", key, where, resolved }
          // `route` is set by the first model made of it: a field of its own from the start, as one
          // added later moves the object's fields out to a separate array (32 bytes a route more).
          : { step: "route", key, host, path, pathType, match, where, resolved, route: undefined },
      );
    }
  }
  fragment.secrets = secrets.size > 0 ? [...secrets] : NONE;
  // Copied to its size: an array grown by push keeps room for 16 more (150 bytes a fragment).
  if (!canary && claims.length > 0) fragment.claims = claims.slice();
  // Copied for the same reason as the reads: the fragment lives as long as its Ingress.
  fragment.steps = steps.slice();
  return fragment;
}

/**
 * The client certificate check an Ingress asks for (`client-cert-ca-secret`, `client-cert-verify`),
 * or null: none, or its CA Secret is unusable (reported; then no certificate is asked for, and the
 * routes' `required` check refuses every request: fail closed).
 */
function clientCertCheck(
  ctx: ReadContext,
  ns: string,
  asked: { name: string; verify: "required" | "optional" } | null,
  problem: Report,
): ClientCertCheck | null {
  if (asked === null) return null;
  const { name, verify } = asked;
  ctx.secrets.add(`${ns}/${name}`);
  const secret = ctx.lookup.secret(ns, name);
  if (!secret || !tlsSummaryOf(secret).ca) {
    problem(
      "InvalidSecret",
      `annotation ingress-controller.io/client-cert-ca-secret: Secret ${ns}/${name} ` +
        `${secret ? `is unusable: ${tlsSummaryOf(secret).caReason}` : "not found"}; ` +
        "no client certificate is asked for" +
        (verify === "required" ? " and every request gets 403" : ""),
    );
    return null;
  }
  return { namespace: ns, name, verify };
}

function tlsCert(
  ctx: ReadContext,
  ns: string,
  secretName: string | undefined,
  where: string,
  problem: Report,
): Omit<TlsCert, "hosts"> | null {
  if (secretName === undefined || secretName === "") {
    problem("MissingSecret", `${where}.secretName is empty; TLS for these hosts is ignored`);
    return null;
  }
  if (!isDns1123Subdomain(secretName)) {
    problem("InvalidSecretName", `${where}.secretName: ${show(secretName)} is not a valid name; TLS ignored`);
    return null;
  }
  ctx.secrets.add(`${ns}/${secretName}`);
  const secret = ctx.lookup.secret(ns, secretName);
  if (!secret) {
    problem("SecretNotFound", `${where}: Secret ${ns}/${secretName} not found; TLS for these hosts is ignored`);
    return null;
  }
  if (!tlsSummaryOf(secret).valid) {
    problem(
      "InvalidSecret",
      `${where}: Secret ${ns}/${secretName} is unusable: ${tlsSummaryOf(secret).reason}; ` +
        `TLS for these hosts is ignored`,
    );
    return null;
  }
  return { file: `${ns}_${secretName}.pem`, namespace: ns, name: secretName };
}

/** The valid hosts of an Ingress's rules, once each, in order. */
function validRuleHosts(ing: V1Ingress): string[] {
  const hosts: string[] = [];
  for (const rule of ing.spec?.rules ?? []) {
    const host = rule.host ?? "";
    if (host !== "" && isHost(host) && !hosts.includes(host)) hosts.push(host);
  }
  return hosts;
}
