/**
 * @module bench/main
 * `deno task bench [filter…]`: runs every `bench/*_bench.ts` in its own process (so one
 * benchmark's memory and timers do not disturb another), and prints one JSON array of
 * `{name, unit, value}` gathered from the last line each of them prints on stdout.
 */

interface Figure {
  name: string;
  unit: string;
  value: number;
}

const dir = new URL(".", import.meta.url).pathname;
const filters = Deno.args;
const files = [...Deno.readDirSync(dir)]
  .map((e) => e.name)
  .filter((n) => n.endsWith("_bench.ts"))
  .filter((n) => filters.length === 0 || filters.some((f) => n.includes(f)))
  .sort();

const figures: Figure[] = [];
let failed = 0;
for (const file of files) {
  console.error(`bench: running ${file}`);
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${dir}${file}`],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const last = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  if (!out.success) {
    failed++;
    console.error(`bench: ${file} failed with exit code ${out.code} after ${seconds}s`);
    continue;
  }
  try {
    const parsed = JSON.parse(last) as Figure[];
    figures.push(...parsed);
    console.error(`bench: ${file} gave ${parsed.length} figures in ${seconds}s`);
  } catch {
    failed++;
    console.error(`bench: ${file} did not end with a JSON array of figures`);
  }
}
// One line: the interface is "the JSON array is the last line of stdout".
console.log(JSON.stringify(figures));
if (failed > 0) Deno.exit(1);
