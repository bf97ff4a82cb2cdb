/**
 * @module nginx/httproute_cors
 * The migration preview's CORS: `cors-enable` and the `cors-*` keys of an Ingress (ingress-nginx's
 * `enable-cors` and `cors-*`, with ingress-nginx's defaults) as the HTTPCORSFilter of its rules,
 * every field written out (the Gateway API's defaults are not ingress-nginx's: no credentials,
 * maxAge 5). Where the filter cannot say what the Ingress says, the key's verdict or a note says what
 * differs:
 * - origins: `~regex` origins and any the Gateway API's pattern refuses are left out; a
 *   `scheme://*.domain` origin matches one or more labels at the Gateway, one at the Ingress (and in
 *   ingress-nginx); the Gateway compares origins case-insensitively (as ingress-nginx), the Ingress
 *   exactly;
 * - `*` with credentials (ingress-nginx's defaults): ingress-nginx answers `Access-Control-Allow-Origin:
 *   *` with `Allow-Credentials: true`, which browsers refuse for credentialed requests; a Gateway must
 *   send the request's Origin back instead, which would let every site make credentialed requests:
 *   allowCredentials is not written then (browsers behave as with ingress-nginx; this controller's
 *   Ingress echoes the Origin with credentials, a note says so);
 * - methods outside the Gateway API's enum are left out; `*` among the exposed headers is left out
 *   with credentials (browsers read it as a header named `*`; the API forbids it); maxAge 0 becomes 1
 *   (the API's minimum);
 * - the Gateway answers a preflight from an origin it does not allow itself (204, no CORS headers),
 *   the Ingress passes it to the backend; the Gateway adds `Vary: Origin` to the backend's `Vary`
 *   (the Ingress replaces it) and sends `Access-Control-Expose-Headers` on the preflight answer too.
 */
import type { Origin } from "../annotations/values.ts";
import type { HTTPCORSFilter, HTTPRouteFilter } from "../gateway/api.ts";
import { HTTP_METHODS, isCorsOrigin } from "../gateway/validate.ts";
import { setting } from "./httproute_settings.ts";
import type { Settings } from "./httproute_types.ts";

/** The keys of ours the filter carries. */
export const CORS_KEYS = [
  "cors-enable",
  "cors-allow-origin",
  "cors-allow-methods",
  "cors-allow-headers",
  "cors-expose-headers",
  "cors-allow-credentials",
  "cors-max-age",
] as const;

/** The API's bounds (HTTPCORSFilter: MaxItems 64 origins and header names). */
const MAX_LIST = 64;

export interface CorsMapping {
  /** The rules' CORS filter; null: none (CORS is off, or the keys have no form here: `unmapped`). */
  readonly filter: HTTPRouteFilter | null;
  /** The verdict of each key, where its value decides it. */
  readonly forms: Map<string, string>;
  /** Why the keys have no form here, or null. */
  readonly unmapped: string | null;
  readonly notes: string[];
}

/** The same names once, the first spelling kept (header names are case-insensitive). */
function unique(names: readonly string[], fold: boolean): string[] {
  const seen = new Set<string>();
  return names.filter((n) => {
    const k = fold ? n.toLowerCase() : n;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const list = (xs: readonly string[]) => xs.join(", ");

/** The CORS filter of an Ingress's settings (not a canary's: its keys are not carried). */
export function corsMapping(s: Settings): CorsMapping {
  const forms = new Map<string, string>();
  const notes: string[] = [];
  if (setting<boolean>(s, "cors-enable") !== true) {
    for (const k of CORS_KEYS.slice(1)) forms.set(k, "nothing to carry over (cors-enable is off: no CORS headers)");
    return { filter: null, forms, unmapped: null, notes };
  }
  const origins = setting<Origin[]>(s, "cors-allow-origin") ?? [];
  const methods = setting<string[]>(s, "cors-allow-methods") ?? [];
  const headers = setting<string[]>(s, "cors-allow-headers") ?? [];
  const expose = setting<string[]>(s, "cors-expose-headers") ?? [];
  const credentials = setting<boolean>(s, "cors-allow-credentials") === true;
  const maxAge = setting<number>(s, "cors-max-age") ?? 0;

  // origins
  const any = origins.some((o) => o.kind === "any");
  const kept: string[] = [];
  const left: string[] = [];
  for (const o of origins) {
    if (o.kind === "any") continue;
    if (o.kind === "regex") left.push(`~${o.pattern}`);
    else if (isCorsOrigin(o.origin)) kept.push(o.origin);
    else left.push(o.origin);
  }
  const allowOrigins = any ? ["*"] : unique(kept, true);
  if (allowOrigins.length === 0) {
    return {
      filter: null,
      forms,
      unmapped: `its origins (${list(left)}) have no HTTPCORSFilter form (a regex origin has none)`,
      notes,
    };
  }
  const allowHeaders = unique(headers, true);
  const tooLong = [["allowOrigins", allowOrigins], ["allowHeaders", allowHeaders], ["exposeHeaders", expose]]
    .filter(([, xs]) => xs.length > MAX_LIST).map(([f]) => f);
  if (tooLong.length > 0) {
    return {
      filter: null,
      forms,
      unmapped: `HTTPCORSFilter's ${tooLong.join(", ")} hold at most ${MAX_LIST} entries`,
      notes,
    };
  }
  const wildcards = allowOrigins.filter((o) => o.includes("://*."));
  forms.set(
    "cors-allow-origin",
    any
      ? "CORS allowOrigins [*]: the Gateway sends the request's Origin back with Vary: Origin (without credentials " +
        "the Ingress sends *; browsers treat both alike)"
      : [
        `CORS allowOrigins (${list(allowOrigins)}), compared case-insensitively as in ingress-nginx (the Ingress ` +
        "here: exactly; browsers send them in lower case)",
        ...(wildcards.length > 0
          ? [
            `${list(wildcards)}: the Gateway's * matches one or more labels, the Ingress's (and ingress-nginx's) ` +
            "exactly one: the Gateway also allows deeper subdomains",
          ]
          : []),
        ...(left.length > 0 ? [`left out (no HTTPCORSFilter form, no CORS answers for them): ${list(left)}`] : []),
      ].join("; "),
  );

  // methods: the API's enum only (`*` never comes from an Ingress)
  const allowMethods = unique(methods.filter((m) => (HTTP_METHODS as readonly string[]).includes(m)), false);
  const otherMethods = methods.filter((m) => !(HTTP_METHODS as readonly string[]).includes(m));
  forms.set(
    "cors-allow-methods",
    `CORS allowMethods (${list(allowMethods)}), on the preflight answer as here` +
      (otherMethods.length > 0
        ? `; ${list(otherMethods)}: not among the Gateway API's methods, left out (browsers then refuse them)`
        : ""),
  );
  forms.set("cors-allow-headers", `CORS allowHeaders (${list(allowHeaders)}), on the preflight answer as here`);

  // credentials: never with `*` (see the module's comment)
  const allowCredentials = credentials && !any;
  if (credentials && any) {
    const why =
      "allowCredentials is not written with the origin *: ingress-nginx answers Access-Control-Allow-Origin " +
      "* with Allow-Credentials true, which browsers refuse for credentialed requests, and a Gateway must send the " +
      "request's Origin back instead, which would let every site make credentialed requests; browsers now behave as " +
      "with ingress-nginx (this controller's Ingress sends the Origin back with Allow-Credentials true); to allow " +
      "credentials, list the origins and set allowCredentials: true";
    forms.set("cors-allow-credentials", why);
    notes.push(`CORS: ${why}`);
  } else {
    forms.set(
      "cors-allow-credentials",
      credentials ? "CORS allowCredentials: true" : "CORS without allowCredentials (false, the Gateway API's default)",
    );
  }

  // exposed headers: `*` with credentials is a header named `*` for browsers, and the API forbids it
  let exposeHeaders = unique(expose, true);
  if (allowCredentials && exposeHeaders.includes("*")) {
    exposeHeaders = exposeHeaders.filter((h) => h !== "*");
    forms.set(
      "cors-expose-headers",
      `CORS exposeHeaders (${list(exposeHeaders) || "none"}), * left out: with credentials browsers read it as a ` +
        "header named *, which exposes nothing, and the Gateway API forbids it with allowCredentials",
    );
  } else {
    forms.set(
      "cors-expose-headers",
      `CORS exposeHeaders (${list(exposeHeaders)}), also on the preflight answer (where browsers ignore it)`,
    );
  }

  const age = Math.max(1, maxAge);
  forms.set(
    "cors-max-age",
    maxAge < 1
      ? "CORS maxAge 1, the Gateway API's minimum (the Ingress sends 0: browsers cache no preflight answer)"
      : `CORS maxAge ${maxAge} (written out: the Gateway API's default is 5)`,
  );

  const cors: HTTPCORSFilter = {
    allowOrigins,
    ...(allowCredentials ? { allowCredentials: true } : {}),
    ...(allowMethods.length > 0 ? { allowMethods } : {}),
    ...(allowHeaders.length > 0 ? { allowHeaders } : {}),
    ...(exposeHeaders.length > 0 ? { exposeHeaders } : {}),
    maxAge: age,
  };
  forms.set(
    "cors-enable",
    "the CORS filter on each rule to a backend, every field written out, ingress-nginx's defaults for the keys not " +
      `set (allowOrigins ${list(cors.allowOrigins!)}, maxAge ${age}${
        cors.allowCredentials ? ", allowCredentials" : ""
      }` +
      "; the Gateway API's defaults differ)",
  );
  notes.push(
    "CORS: the Gateway answers a preflight (OPTIONS with Origin and Access-Control-Request-Method) from an origin " +
      "it does not allow itself, 204 without CORS headers, where the Ingress passes it to the backend, as " +
      "ingress-nginx does (the browser " +
      "refuses the request either way); to the answers for an allowed origin it adds Vary: Origin to the backend's " +
      "Vary, where the Ingress replaces the backend's Vary (and sends none for * without credentials)",
  );
  return { filter: { type: "CORS", cors }, forms, unmapped: null, notes };
}
