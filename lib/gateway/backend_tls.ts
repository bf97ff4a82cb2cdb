/**
 * @module gateway/backend_tls
 * BackendTLSPolicy (gateway.networking.k8s.io/v1): how the proxy speaks TLS to a Service port that
 * a policy targets, and the policy's own verdict (its `Accepted` and `ResolvedRefs` conditions).
 * A valid policy makes the proxy connect with TLS, send `validation.hostname` as SNI and check the
 * backend's certificate against the CA of the one ConfigMap it names (`ca.crt`, PEM) or the system
 * CA bundle (`wellKnownCACertificates: System`), and its name against `hostname` (or the one
 * `Hostname` subjectAltName). HAProxy 2.6 checks one name per server (`verifyhost`): a policy with
 * several subjectAltNames, or a URI one, is refused (Accepted=False, Invalid) rather than served
 * with a weaker check. Of the policies on the same Service (and sectionName), the oldest wins, then
 * the first by `namespace/name`; the others are Conflicted. A policy whose CA cannot be used still
 * holds its Service port: the proxy never reaches that port unverified (its requests get 500).
 */
import type { KubeObject } from "../cluster/resources.ts";
import { configMapCaFile, configMapCaProblem } from "../render/configmap_ca.ts";
import { isDns1123Label, isDns1123Subdomain, isPortName } from "../render/patterns.ts";
import { show } from "../render/show.ts";
import type { Condition } from "./api.ts";
import { condition, generationOf, Type } from "./conditions.ts";
import { isPreciseHostname } from "./validate.ts";

export interface BackendTLSPolicy extends KubeObject {
  spec?: {
    targetRefs?: { group?: string; kind?: string; name?: string; sectionName?: string }[];
    validation?: {
      caCertificateRefs?: { group?: string; kind?: string; name?: string }[];
      wellKnownCACertificates?: string;
      hostname?: string;
      subjectAltNames?: { type?: string; hostname?: string; uri?: string }[];
    };
    options?: Record<string, string>;
  };
}

/** Reasons of a BackendTLSPolicy's conditions (v1 PolicyConditionReason and the BackendTLSPolicy ones). */
export const PolicyReason = {
  Accepted: "Accepted",
  Conflicted: "Conflicted",
  Invalid: "Invalid",
  TargetNotFound: "TargetNotFound",
  NoValidCACertificate: "NoValidCACertificate",
  ResolvedRefs: "ResolvedRefs",
  InvalidCACertificateRef: "InvalidCACertificateRef",
  InvalidKind: "InvalidKind",
} as const;

/** How the proxy checks a backend: the CA file it reads and the names it sends and checks. */
export interface BackendTls {
  /** `namespace/name` of the policy. */
  policy: string;
  /** The ConfigMap whose `ca.crt` the proxy writes as `file`, or the system CA bundle. */
  ca: { namespace: string; name: string; file: string } | "system";
  /** Sent as SNI. */
  sni: string;
  /** The name the backend's certificate must hold (`verifyhost`). */
  verifyHost: string;
}

/** What a Service port gets: TLS, or nothing at all (a policy holds it but cannot be used). */
export type PortTls = { ok: true; tls: BackendTls } | { ok: false; policy: string; message: string };

/** The verdict on one policy, the same for every Gateway it reaches. */
export interface PolicyVerdict {
  key: string;
  accepted: Condition;
  resolvedRefs: Condition;
  /** What the ports it targets get (null: it does not hold them: conflicted, or not a valid policy). */
  port: PortTls | null;
}

/** A CA ConfigMap as the controller knows it: undefined when it does not exist. */
export type CaConfigMapLookup = (namespace: string, name: string) => { data?: Record<string, unknown> } | undefined;

function keyOf(p: BackendTLSPolicy): string {
  return `${p.metadata.namespace}/${p.metadata.name}`;
}

/** Oldest first, then by `namespace/name` (the spec's precedence of policies on the same target). */
export function precedenceOrder(a: BackendTLSPolicy, b: BackendTLSPolicy): number {
  const ta = a.metadata.creationTimestamp ?? "";
  const tb = b.metadata.creationTimestamp ?? "";
  if (ta !== tb) return Date.parse(ta) - Date.parse(tb) || (ta < tb ? -1 : 1);
  const ka = keyOf(a), kb = keyOf(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

type Own = { ok: true; tls: Omit<BackendTls, "policy"> } | {
  ok: false;
  accepted: [string, string] | null;
  resolved: [string, string] | null;
};

/** The policy's verdict on its own: what it asks for, or what is wrong (without conflicts). */
function ownVerdict(p: BackendTLSPolicy, cms: CaConfigMapLookup, systemCa: boolean): Own {
  const ns = p.metadata.namespace ?? "";
  const v = p.spec?.validation ?? {};
  const invalid = (message: string): Own => ({ ok: false, accepted: [PolicyReason.Invalid, message], resolved: null });
  if (!isPreciseHostname(v.hostname)) return invalid(`validation.hostname ${show(v.hostname)} is not a hostname`);
  const sans = v.subjectAltNames ?? [];
  let verifyHost = v.hostname;
  if (sans.length > 0) {
    const san = sans[0];
    if (sans.length > 1 || san.type !== "Hostname" || !isPreciseHostname(san.hostname)) {
      return invalid(
        "validation.subjectAltNames: the proxy (HAProxy 2.6) checks exactly one DNS name per backend; " +
          "a single Hostname entry without wildcard is supported, URIs and lists are not",
      );
    }
    verifyHost = san.hostname;
  }
  const refs = v.caCertificateRefs ?? [];
  const wellKnown = v.wellKnownCACertificates;
  if (refs.length > 0 && wellKnown) {
    return invalid("validation: caCertificateRefs and wellKnownCACertificates are exclusive");
  }
  if (refs.length === 0) {
    if (wellKnown !== "System") {
      return invalid(`validation.wellKnownCACertificates ${show(wellKnown ?? "")} is not supported; use System`);
    }
    if (!systemCa) return invalid("validation.wellKnownCACertificates System: the proxy image has no system CA bundle");
    return { ok: true, tls: { ca: "system", sni: v.hostname, verifyHost } };
  }
  // One file per server: more than one CA ConfigMap is refused rather than half used.
  if (refs.length > 1) return invalid("validation.caCertificateRefs: the proxy uses exactly one CA ConfigMap");
  const ref = refs[0];
  const where = "validation.caCertificateRefs[0]";
  if ((ref.group ?? "") !== "" || ref.kind !== "ConfigMap") {
    const message = `${where} refers to ${show(`${ref.group || "core"}/${ref.kind}`)}; only ConfigMaps are supported`;
    return {
      ok: false,
      accepted: [PolicyReason.NoValidCACertificate, message],
      resolved: [PolicyReason.InvalidKind, message],
    };
  }
  const bad = (why: string): Own => {
    const message = `${where}: ConfigMap ${show(`${ns}/${ref.name}`)} ${why}`;
    return {
      ok: false,
      accepted: [PolicyReason.NoValidCACertificate, message],
      resolved: [PolicyReason.InvalidCACertificateRef, message],
    };
  };
  if (!isDns1123Subdomain(ref.name)) return bad("is not a ConfigMap name");
  const cm = cms(ns, ref.name);
  if (!cm) return bad("not found");
  const problem = configMapCaProblem(cm);
  if (problem !== null) return bad(problem);
  return {
    ok: true,
    tls: { ca: { namespace: ns, name: ref.name, file: configMapCaFile(ns, ref.name) }, sni: v.hostname, verifyHost },
  };
}

/** The Service ports targets: `namespace/service/sectionName` ("" section: every port). */
function targets(p: BackendTLSPolicy): { key: string } | { problem: string } {
  const refs = p.spec?.targetRefs ?? [];
  // The spec advises one targetRef until conflicts between several are specified.
  if (refs.length !== 1) return { problem: `spec.targetRefs: exactly one Service is supported (${refs.length} given)` };
  const t = refs[0];
  if ((t.group ?? "") !== "" || t.kind !== "Service" || !isDns1123Label(t.name)) {
    return {
      problem: `spec.targetRefs[0] refers to ${show(`${t.group || "core"}/${t.kind}/${t.name}`)}, not a Service`,
    };
  }
  if (t.sectionName !== undefined && !isPortName(t.sectionName)) {
    return { problem: `spec.targetRefs[0].sectionName ${show(t.sectionName)} is not a Service port name` };
  }
  return { key: `${p.metadata.namespace}/${t.name}/${t.sectionName ?? ""}` };
}

/**
 * The verdicts on every policy and what each Service port gets. `systemCa`: the proxy image has a
 * system CA bundle (`ca-file @system-ca`).
 */
export class BackendTlsPolicies {
  readonly verdicts = new Map<string, PolicyVerdict>();
  /** The winning policy's port verdict by target (`namespace/service/sectionName`). */
  readonly #byTarget = new Map<string, PortTls>();
  /** Every policy naming a target (`namespace/name`), the winner first: their status goes to the Gateways using it. */
  readonly #naming = new Map<string, string[]>();

  constructor(policies: readonly BackendTLSPolicy[], cms: CaConfigMapLookup, systemCa: boolean) {
    const sorted = [...policies].sort(precedenceOrder);
    for (const p of sorted) {
      const key = keyOf(p);
      const gen = generationOf(p);
      const ok = (t: string, r: string, m: string) => condition(t, true, r, m, gen);
      const no = (t: string, r: string, m: string) => condition(t, false, r, m, gen);
      const target = targets(p);
      const own = ownVerdict(p, cms, systemCa);
      const resolvedRefs = !own.ok && own.resolved
        ? no(Type.ResolvedRefs, own.resolved[0], own.resolved[1])
        : ok(Type.ResolvedRefs, PolicyReason.ResolvedRefs, "the CA certificate references are resolved");
      if ("problem" in target) {
        this.verdicts.set(key, {
          key,
          accepted: no(Type.Accepted, PolicyReason.Invalid, target.problem),
          resolvedRefs,
          port: null,
        });
        continue;
      }
      this.#naming.set(target.key, [...this.#naming.get(target.key) ?? [], key]);
      const winner = this.#byTarget.get(target.key);
      if (winner) {
        const by = winner.ok ? winner.tls.policy : winner.policy;
        this.verdicts.set(key, {
          key,
          accepted: no(
            Type.Accepted,
            PolicyReason.Conflicted,
            `BackendTLSPolicy ${by} is older and targets the same port`,
          ),
          resolvedRefs,
          port: null,
        });
        continue;
      }
      const port: PortTls = own.ok
        ? { ok: true, tls: { policy: key, ...own.tls } }
        : { ok: false, policy: key, message: own.accepted?.[1] ?? "invalid" };
      this.#byTarget.set(target.key, port);
      const accepted = own.ok
        ? ok(Type.Accepted, PolicyReason.Accepted, "the proxy verifies the backend's certificate")
        : no(Type.Accepted, own.accepted![0], own.accepted![1]);
      this.verdicts.set(key, { key, accepted, resolvedRefs, port });
    }
  }

  /** What the Service port `port` (named `portName`, if named) of `namespace/service` gets; null: no policy. */
  forPort(namespace: string, service: string, port: { name?: string }): PortTls | null {
    const named = port.name ? this.#byTarget.get(`${namespace}/${service}/${port.name}`) : undefined;
    return named ?? this.#byTarget.get(`${namespace}/${service}/`) ?? null;
  }

  /**
   * The policies (`namespace/name`) that name the Service port, conflicted ones included: a Gateway
   * whose routes reach the port is an ancestor of each (their status says which one applies).
   */
  namingPort(namespace: string, service: string, port: { name?: string }): readonly string[] {
    return [
      ...(port.name ? this.#naming.get(`${namespace}/${service}/${port.name}`) ?? [] : []),
      ...this.#naming.get(`${namespace}/${service}/`) ?? [],
    ];
  }
}

/** The `server` parameters of a backend `tls` checks (every value validated by the policy's verdict). */
export function tlsServerParams(tls: BackendTls, h2: boolean): string {
  if (!isPreciseHostname(tls.sni) || !isPreciseHostname(tls.verifyHost)) {
    throw new Error(`bug: backend TLS names ${show(tls.sni)} ${show(tls.verifyHost)}`);
  }
  const ca = tls.ca === "system" ? "@system-ca" : configMapCaFile(tls.ca.namespace, tls.ca.name);
  return `ssl verify required ca-file ${ca} sni str(${tls.sni}) verifyhost ${tls.verifyHost} alpn ${
    h2 ? "h2" : "http/1.1"
  }`;
}
