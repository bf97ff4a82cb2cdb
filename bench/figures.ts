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
