/**
 * @module nginx/httproute_types
 * The shapes of the migration preview (nginx/to_httproute.ts): the Ingress, Service and Gateway as
 * it reads them, what one Ingress becomes, and what the preview reads of one Ingress once.
 */
import type {
  HTTPPathModifier,
  HTTPRoute,
  HTTPRouteFilter,
  HTTPRouteMatch,
  Listener,
  ReferenceGrant,
} from "../gateway/api.ts";
import type { IngressLike } from "./translate.ts";

export interface IngressBackend {
  readonly service?: { readonly name?: string; readonly port?: { readonly number?: number; readonly name?: string } };
  readonly resource?: unknown;
}

/** The parts of an Ingress the preview reads. */
export interface IngressObject extends IngressLike {
  readonly spec?: {
    readonly defaultBackend?: IngressBackend;
    readonly tls?: readonly { readonly hosts?: readonly string[]; readonly secretName?: string }[];
    readonly rules?: readonly {
      readonly host?: string;
      readonly http?: {
        readonly paths?: readonly {
          readonly path?: string;
          readonly pathType?: string;
          readonly backend?: IngressBackend;
        }[];
      };
    }[];
  };
}

/** A Service as far as named ports go. */
export interface ServiceLike {
  readonly metadata?: { readonly namespace?: string; readonly name?: string };
  readonly spec?: { readonly ports?: readonly { readonly name?: string; readonly port?: number }[] };
}

/** The Gateway the routes attach to. */
export interface GatewayRef {
  readonly namespace: string;
  readonly name: string;
}

/** The listener ports the routes attach to and the suggested listeners use. */
export const HTTP_PORT = 80;

export const HTTPS_PORT = 443;

/** What one Ingress becomes. */
export interface IngressMigration {
  readonly namespace: string;
  readonly name: string;
  /** One line per annotation: what becomes of it. */
  readonly verdicts: string[];
  /** What else the user must know (TLS, matching differences, the canary's main Ingress). */
  readonly notes: string[];
  readonly routes: HTTPRoute[];
  /** Why `routes` must not be applied (shown as comments only), or null. */
  readonly withheld: string | null;
}

export interface MigrationPlan {
  readonly gateway: GatewayRef;
  readonly ingresses: IngressMigration[];
  /** Listeners the Gateway needs: one HTTP listener, one HTTPS listener per TLS host. */
  readonly listeners: Listener[];
  /** Grants that let the Gateway read certificates of other namespaces. */
  readonly grants: ReferenceGrant[];
}

export type Settings = Readonly<Record<string, string>>;

/** The match of an Ingress path, and the path rewrite it needs. */
export interface PathRule {
  match: HTTPRouteMatch;
  rewritePath: HTTPPathModifier | null;
}

/** What the preview reads of one Ingress once. */
export interface Reading {
  ing: IngressObject;
  ns: string;
  name: string;
  settings: Settings;
  /** Keys of `settings` that are only the compatibility mode's defaults. */
  defaults: string[];
  canary: boolean;
  verdicts: string[];
  notes: string[];
  /** Keys of ours that have no Gateway API form here (for the verdicts). */
  unmapped: Set<string>;
  /** Forms that depend on the value, by key of ours (over FORMS). */
  forms: Map<string, string>;
  /** Why a key of `unmapped` has no form here, where its value decides it. */
  why: Map<string, string>;
  /** The CORS filter of the Ingress's rules to a backend, or null. */
  cors: HTTPRouteFilter | null;
  withheld: string[];
  /** The Ingress's paths the Gateway matches as regexes, by host; `prefix`: the `P(/|$)(.*)` idiom's PathPrefix. */
  regexPaths: { host: string; raw: string; prefix: string | null }[];
}
