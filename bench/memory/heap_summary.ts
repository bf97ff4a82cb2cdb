/**
 * @module bench/memory/heap_summary
 * `deno run -A bench/memory/heap_summary.ts <file.heapsnapshot>`: what a V8 heap snapshot (from
 * `BENCH_HEAP_SNAPSHOT`, bench/scale_bench.ts) holds, without DevTools: self size by node type, by
 * constructor, plain objects by their first property names (their shape), and the strings held
 * most often (duplicates a cache could share).
 */
const file = Deno.args[0];
if (!file) throw new Error("usage: heap_summary.ts <file.heapsnapshot>");
const snap = JSON.parse(await Deno.readTextFile(file));
const meta = snap.snapshot.meta;
const nf: string[] = meta.node_fields;
const ef: string[] = meta.edge_fields;
const nodeTypes: string[] = meta.node_types[0];
const edgeTypes: string[] = meta.edge_types[0];
const nodes: number[] = snap.nodes;
const edges: number[] = snap.edges;
const strings: string[] = snap.strings;
const N = nf.length, E = ef.length;
const [iType, iName, iSize, iEdges] = ["type", "name", "self_size", "edge_count"].map((f) => nf.indexOf(f));
const [eType, eName, eTo] = ["type", "name_or_index", "to_node"].map((f) => ef.indexOf(f));
const count = nodes.length / N;
const firstEdge = new Uint32Array(count + 1);
for (let i = 0, e = 0; i < count; i++) {
  firstEdge[i] = e;
  e += nodes[i * N + iEdges] * E;
}
firstEdge[count] = edges.length;

const mb = (b: number) => (b / 1e6).toFixed(2).padStart(8);
function top(title: string, m: Map<string, [number, number]>, n = 30): void {
  console.log(`\n== ${title}`);
  for (const [k, [c, s]] of [...m].sort((a, b) => b[1][1] - a[1][1]).slice(0, n)) {
    console.log(`${mb(s)} MB ${String(c).padStart(8)} × ${k.slice(0, 140)}`);
  }
}
const add = (m: Map<string, [number, number]>, k: string, s: number) => {
  const v = m.get(k) ?? [0, 0];
  v[0]++;
  v[1] += s;
  m.set(k, v);
};

const byType = new Map<string, [number, number]>();
const byName = new Map<string, [number, number]>();
const byShape = new Map<string, [number, number]>();
const byString = new Map<string, [number, number]>();
let total = 0;
for (let i = 0; i < count; i++) {
  const type = nodeTypes[nodes[i * N + iType]];
  const name = strings[nodes[i * N + iName]];
  let size = nodes[i * N + iSize];
  total += size;
  add(byType, type, size);
  if (type === "string" || type === "concatenated string" || type === "sliced string") {
    add(byString, JSON.stringify(name.slice(0, 80)), size);
    continue;
  }
  add(byName, `${type} ${name}`, size);
  if (type !== "object") continue;
  // A plain object's shape: its property names, plus the out-of-object property/element arrays it owns.
  const props: string[] = [];
  for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += E) {
    const et = edgeTypes[edges[e + eType]];
    const to = edges[e + eTo] / N;
    if (et === "property") props.push(strings[edges[e + eName]]);
    if (et === "internal") {
      const n = strings[nodes[to * N + iName]];
      if (n === "(object properties)" || n === "(object elements)") size += nodes[to * N + iSize];
    }
  }
  add(byShape, `${name} {${props.slice(0, 6).join(",")}${props.length > 6 ? ",…" : ""}}`, size);
}
console.log(`total self size ${mb(total)} MB in ${count} nodes`);
top("by node type", byType, 20);
top("by type and name", byName, 40);
top("objects by shape (with their property/element arrays)", byShape, 40);
top("strings (same value held more than once costs each time)", byString, 40);
