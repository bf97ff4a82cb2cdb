/**
 * @module nginx/httproute_settings
 * The keys of ours an Ingress's annotations come to in compatibility mode (its own, the translated
 * ingress-nginx ones, the mode's defaults), parsed as the model parses them, for the migration preview.
 */
import { readAnnotation } from "../annotations/resolve.ts";
import { PREFIX, specOf } from "../annotations/table.ts";
import { NGINX_PREFIX } from "./table.ts";
import { translateIngress } from "./translate.ts";
import { compatDefaults } from "./convert.ts";
import type { IngressObject, Settings } from "./httproute_types.ts";

/**
 * Our keys as the compatibility mode applies them: the Ingress's own, then the translated ones, then
 * ingress-nginx's defaults where they differ from ours (nginx/convert.ts `COMPAT_DEFAULTS`), whose
 * names (without prefix) are `defaults`.
 */
export function settingsOf(ing: IngressObject): { settings: Settings; defaults: string[] } {
  const annotations = ing.metadata?.annotations ?? {};
  const own = Object.fromEntries(Object.entries(annotations).filter(([k]) => !k.startsWith(NGINX_PREFIX)));
  const translated = translateIngress(ing).annotations;
  const defaults = compatDefaults({ namespace: ing.metadata?.namespace ?? "", annotations }, translated);
  return {
    settings: { ...own, ...translated, ...defaults },
    defaults: Object.keys(defaults).map((k) => k.slice(PREFIX.length)),
  };
}

/** A key's parsed value, else its default's, else null (an invalid value counts as unset, as in the model). */
export function setting<T>(s: Settings, key: string): T | null {
  const read = readAnnotation<T>(s, key);
  if (read?.parsed.ok) return read.parsed.value;
  const spec = specOf(key)!;
  if (spec.default === null) return null;
  const p = spec.value.parse(spec.default);
  return p.ok ? p.value as T : null;
}

/** Keys of ours (without prefix) the Ingress's settings set. */
export function keysSet(s: Settings): string[] {
  return Object.keys(s).filter((k) => k.startsWith(PREFIX)).map((k) => k.slice(PREFIX.length))
    .filter((k) => specOf(k) !== undefined);
}
