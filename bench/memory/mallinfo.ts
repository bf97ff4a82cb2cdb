/**
 * @module bench/memory/mallinfo
 * glibc's own account of this process's C heap (`mallinfo2`, through Deno's FFI): what is in use
 * and what is free but kept. Benchmarks only.
 */

const fields = [
  "arena",
  "ordblks",
  "smblks",
  "hblks",
  "hblkhd",
  "usmblks",
  "fsmblks",
  "uordblks",
  "fordblks",
  "keepcost",
] as const;

export type MallInfo = Record<(typeof fields)[number], number>;

/** `mallinfo2()` of this process: sizes in bytes, the `*blks` fields counts of blocks. */
export function mallinfo2(): MallInfo {
  const lib = Deno.dlopen("libc.so.6", {
    mallinfo2: { parameters: [], result: { struct: fields.map(() => "usize" as const) } },
  });
  try {
    const raw = new BigUint64Array((lib.symbols.mallinfo2() as Uint8Array<ArrayBuffer>).buffer);
    return Object.fromEntries(fields.map((f, i) => [f, Number(raw[i])])) as MallInfo;
  } finally {
    lib.close();
  }
}

/** Bytes of the C heap in use: small blocks and mmapped ones. */
export const cHeapInUse = (m: MallInfo = mallinfo2()): number => m.uordblks + m.hblkhd;
