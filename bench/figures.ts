/**
 * @module bench/figures
 * The `{name, unit, value}` figures a bench prints as its last stdout line (bench/main.ts reads
 * them), collected with a progress line on stderr each.
 */

export interface Figure {
  name: string;
  unit: string;
  value: number;
}

/** A list of figures and the function that adds one (rounded to 3 decimals). */
export function figureList(): { figures: Figure[]; fig: (name: string, unit: string, value: number) => void } {
  const figures: Figure[] = [];
  const fig = (name: string, unit: string, value: number) => {
    figures.push({ name, unit, value: Math.round(value * 1000) / 1000 });
    console.error(`bench: ${name} = ${value} ${unit}`);
  };
  return { figures, fig };
}

/** The nearest-rank `p`th percentile of `xs` (p in 0–100); NaN for an empty list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
