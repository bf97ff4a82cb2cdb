/**
 * @module gateway/client_validation
 * Frontend client-certificate validation of a Gateway (`spec.tls.frontend`): which CA the HTTPS
 * listeners of each port check their clients' certificates against, in which mode, and what is
 * wrong with it. `perPort` overrides `default` for the HTTPS listeners of its port; HTTP and TLS
 * (passthrough) listeners are never affected. A CA is the `ca.crt` (PEM) of a ConfigMap, in the
 * Gateway's namespace or, through a ReferenceGrant, another one.
 *
 * The proxy checks one CA file per port (HAProxy's `ca-file` on the port's bind): a validation
 * naming more than one ConfigMap is refused rather than half used (put every CA in one `ca.crt`).
 * A port whose validation cannot be used serves nothing: its HTTPS listeners get
 * `ResolvedRefs=False` (InvalidCACertificateRef, InvalidCACertificateKind or RefNotPermitted) and,
 * when no reference is usable, `Accepted=False` (NoValidCACertificate), so they are not programmed
 * and the port is closed rather than served without the check (fail closed, for this Gateway only).
 */
import { isDns1123Label, isDns1123Subdomain } from "../render/patterns.ts";
import { show } from "../render/show.ts";
import { type Condition, type Gateway, GROUP, type ReferenceGrant, type TLSConfig } from "./api.ts";
import type { CaConfigMapLookup } from "./backend_tls.ts";
import { configMapCaFile, configMapCaProblem } from "../render/configmap_ca.ts";
import { condition, Reason } from "./conditions.ts";
import type { ClientValidation } from "./model_types.ts";
import { referenceAllowed } from "./references.ts";

/** What the HTTPS listeners of one port get: the check, or why there is none they can serve with. */
export interface PortValidation {
  /** null: no validation asked, or it cannot be used (then `resolved` says why). */
  validation: ClientValidation | null;
  /** ResolvedRefs reasons and messages of the listeners (empty: all references resolved). */
  resolved: [string, string][];
  /** Accepted=False of the listeners (NoValidCACertificate, UnsupportedValue), or null. */
  refused: [string, string] | null;
}

/** A Gateway's client validation, read once for all its listeners. */
export interface FrontendValidation {
  /** The verdict for the HTTPS listeners of `port` (null: nothing asked for that port). */
  forPort(port: number): PortValidation | null;
  /** Some validation of the Gateway allows insecure fallback (InsecureFrontendValidationMode). */
  insecure: boolean;
  /** The ConfigMaps read (`namespace/name`): a change of one builds the Gateway again. */
  configMaps: Set<string>;
}

export const NO_FRONTEND_VALIDATION: FrontendValidation = {
  forPort: () => null,
  insecure: false,
  configMaps: new Set(),
};

/** Condition type and reason of the Gateway API for a Gateway that lets clients through unverified. */
export const INSECURE_CONDITION = "InsecureFrontendValidationMode";
export const INSECURE_REASON = "ConfigurationChanged";

const MODES = ["AllowValidOnly", "AllowInsecureFallback"] as const;

/** Reads `gateway.spec.tls.frontend`; `configMaps` undefined: no ConfigMap is known (every reference unresolved). */
export function readFrontendValidation(
  gateway: Gateway,
  grants: readonly ReferenceGrant[],
  configMaps: CaConfigMapLookup | undefined,
): FrontendValidation {
  const frontend = gateway.spec?.tls?.frontend;
  if (!frontend) return NO_FRONTEND_VALIDATION;
  const gwNs = gateway.metadata?.namespace ?? "";
  const read = new Set<string>();
  const lookup: CaConfigMapLookup = configMaps ?? (() => undefined);
  const judge = (tls: TLSConfig | undefined, where: string) =>
    tls?.validation ? judgeValidation(tls.validation, where, gwNs, grants, lookup, read) : null;
  const byPort = new Map<number, PortValidation | null>();
  (frontend.perPort ?? []).forEach((p, i) => {
    if (typeof p?.port === "number" && !byPort.has(p.port)) {
      byPort.set(p.port, judge(p.tls, `spec.tls.frontend.perPort[${i}].tls.validation`));
    }
  });
  const fallback = judge(frontend.default, "spec.tls.frontend.default.validation");
  const modes = [frontend.default, ...(frontend.perPort ?? []).map((p) => p?.tls)].map((t) => t?.validation?.mode);
  return {
    forPort: (port) => byPort.has(port) ? byPort.get(port)! : fallback,
    insecure: modes.includes("AllowInsecureFallback"),
    configMaps: read,
  };
}

function judgeValidation(
  v: NonNullable<TLSConfig["validation"]>,
  where: string,
  gwNs: string,
  grants: readonly ReferenceGrant[],
  lookup: CaConfigMapLookup,
  read: Set<string>,
): PortValidation {
  const mode = v.mode ?? "AllowValidOnly";
  if (!(MODES as readonly string[]).includes(mode)) {
    const message = `${where}.mode ${show(mode)} is not supported; use AllowValidOnly or AllowInsecureFallback`;
    return { validation: null, resolved: [], refused: [Reason.UnsupportedValue, message] };
  }
  const refs = Array.isArray(v.caCertificateRefs) ? v.caCertificateRefs : [];
  if (refs.length === 0) {
    const message = `${where}.caCertificateRefs is empty; name the ConfigMap of the clients' CA`;
    return { validation: null, resolved: [[Reason.InvalidCACertificateRef, message]], refused: noValid(message) };
  }
  const resolved: [string, string][] = [];
  let usable: ClientValidation["ca"] | null = null;
  refs.forEach((ref, j) => {
    const at = `${where}.caCertificateRefs[${j}]`;
    const group = ref?.group ?? "";
    const kind = ref?.kind ?? "";
    if (group !== "" || kind !== "ConfigMap") {
      resolved.push([
        Reason.InvalidCACertificateKind,
        `${at} refers to ${show(`${group || "core"}/${kind}`)}; only core ConfigMaps (key ca.crt) are supported`,
      ]);
      return;
    }
    const ns = ref.namespace ?? gwNs;
    const name = ref.name ?? "";
    if (!isDns1123Label(ns) || !isDns1123Subdomain(name)) {
      resolved.push([Reason.InvalidCACertificateRef, `${at}: ${show(`${ns}/${name}`)} is not a ConfigMap name`]);
      return;
    }
    const from = { group: GROUP, kind: "Gateway", namespace: gwNs };
    if (!referenceAllowed(grants, from, { group: "", kind: "ConfigMap", namespace: ns, name })) {
      resolved.push([
        Reason.RefNotPermitted,
        `${at}: ConfigMap ${ns}/${name} is in another namespace and no ReferenceGrant there allows Gateways of ` +
        `${gwNs} to use it`,
      ]);
      return;
    }
    read.add(`${ns}/${name}`);
    const cm = lookup(ns, name);
    const problem = cm ? configMapCaProblem(cm) : "not found";
    if (problem !== null) {
      resolved.push([Reason.InvalidCACertificateRef, `${at}: ConfigMap ${ns}/${name} ${problem}`]);
      return;
    }
    if (usable !== null) {
      resolved.push([
        Reason.InvalidCACertificateRef,
        `${at}: the proxy checks one CA ConfigMap per port; put every CA in the ca.crt of ` +
        `${usable.namespace}/${usable.name}`,
      ]);
      return;
    }
    usable = { namespace: ns, name, file: configMapCaFile(ns, name) };
  });
  const ca = usable as ClientValidation["ca"] | null;
  return {
    validation: ca && resolved.length === 0 ? { mode: mode as ClientValidation["mode"], ca } : null,
    resolved,
    refused: ca ? null : noValid(resolved.map(([, m]) => m).join("; ")),
  };
}

function noValid(message: string): [string, string] {
  return [Reason.NoValidCACertificate, `no usable CA certificate for client validation: ${message}`];
}

/** The Gateway's InsecureFrontendValidationMode condition (only while some validation allows insecure fallback). */
export function insecureConditions(v: FrontendValidation, generation: number): Condition[] {
  return v.insecure
    ? [condition(
      INSECURE_CONDITION,
      true,
      INSECURE_REASON,
      "spec.tls.frontend lets clients without a valid certificate through (AllowInsecureFallback): the backends must " +
        "authorize them",
      generation,
    )]
    : [];
}
