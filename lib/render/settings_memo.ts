/**
 * @module render/settings_memo
 * Resolving a route's backend settings walks every key of the annotation table through four layers
 * (lib/annotations/resolve.ts), which made it most of the time of a 10,000-ingress model. The result
 * depends only on the resolve context (global and class layers, risk cut-off), the table's
 * annotations of the Ingress and of the Service, and the route's path, so it is kept per those and
 * shared by every route with the same inputs (most routes set nothing). Problems found while
 * resolving are kept too and reported again, to whichever Ingress asks. Settings that looked at a
 * Secret are never kept (they depend on its state and namespace).
 */
import { ANNOTATIONS, PREFIX } from "../annotations/table.ts";
import { type BackendSettings, resolveBackendSettings, settingsHash } from "./settings.ts";
import type { ResolveContext, SecretScope } from "./settings_reader.ts";

export interface MemoSettings {
  readonly settings: BackendSettings;
  /** JSON of `settings`, to compare with a baseline. */
  readonly json: string;
  /** The variant suffix (settingsHash), computed on first use. */
  hash(): string;
  readonly problems: readonly (readonly [reason: string, message: string])[];
}

const ALIASES = new Set(ANNOTATIONS.flatMap((s) => s.aliases ?? []));
/** Entries kept per context before the memo starts over (bounds memory with many distinct paths). */
const MAX_ENTRIES = 50_000;
/** Contexts kept (one per class settings in use, roughly). */
const MAX_CONTEXTS = 8;
const memo = new Map<string, Map<string, MemoSettings>>();

/** The annotations the table reads, as one string (empty when there are none). */
function tableAnnotations(a: Readonly<Record<string, string>>): string {
  let pairs: [string, string][] | null = null;
  for (const k in a) if (k.startsWith(PREFIX) || ALIASES.has(k)) (pairs ??= []).push([k, a[k]]);
  return pairs ? JSON.stringify(pairs) : "";
}

/** Whether `a` holds an annotation of the table (ours or a legacy alias): without one, every key is at its default. */
export function hasTableAnnotations(a: Readonly<Record<string, string>>): boolean {
  for (const k in a) if (k.startsWith(PREFIX) || ALIASES.has(k)) return true;
  return false;
}

/** resolveBackendSettings, memoized; `contextKey` is JSON of `context` (computed once per model). */
export function memoBackendSettings(
  contextKey: string,
  context: ResolveContext,
  ingress: Readonly<Record<string, string>>,
  service: Readonly<Record<string, string>>,
  path: Parameters<typeof resolveBackendSettings>[2],
  secrets: SecretScope | null = null,
): MemoSettings {
  let byKey = memo.get(contextKey);
  if (!byKey) {
    if (memo.size >= MAX_CONTEXTS) memo.delete(memo.keys().next().value!);
    memo.set(contextKey, byKey = new Map());
  }
  const key = `${tableAnnotations(ingress)}\0${tableAnnotations(service)}\0${path ? `${path.match} ${path.path}` : ""}`;
  const hit = byKey.get(key);
  if (hit) return hit;
  // Settings naming a Secret depend on its state and namespace too: those are not kept.
  let touched = false;
  const scope: SecretScope | null = secrets && {
    get namespace() {
      touched = true;
      return secrets.namespace;
    },
    secret: (name) => {
      touched = true;
      return secrets.secret(name);
    },
  };
  const problems: [string, string][] = [];
  const settings = resolveBackendSettings(ingress, service, path, (r, m) => problems.push([r, m]), context, scope);
  const json = JSON.stringify(settings);
  let hash: string | null = null;
  const entry: MemoSettings = { settings, json, hash: () => hash ??= settingsHash(settings), problems };
  if (touched) return entry;
  if (byKey.size >= MAX_ENTRIES) byKey.clear();
  byKey.set(key, entry);
  return entry;
}
