/**
 * @module cluster/quantity
 * The Kubernetes quantities the controller accepts (`250m`, `1.5`, `128Mi`): one grammar for the
 * class parameters that pass them on (lib/controller/class_params.ts) and for what is derived from
 * them (a CPU limit's HAProxy threads, lib/render/proxy_options.ts).
 */

/** Decimal digits with an optional fraction and one of the suffixes below (no exponents). */
export const QUANTITY = /^([0-9]{1,9}(?:\.[0-9]{1,6})?)(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/;

const SCALE: Readonly<Record<string, number>> = {
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** The value of a quantity matching QUANTITY (`500m` → 0.5, `1Ki` → 1024), else null. */
export function quantityValue(q: string): number | null {
  const m = QUANTITY.exec(q);
  if (!m) return null;
  return Number(m[1]) * (m[2] === undefined ? 1 : SCALE[m[2]]);
}
