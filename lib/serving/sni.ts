/**
 * @module serving/sni
 * The SNI selection table of `--tls-sni-cert-key`, as Kubernetes builds it: names read from a
 * certificate (CN and DNS SANs) are registered first, explicit patterns after them so they win;
 * within each kind earlier flags win over later ones. Lookup tries the exact name, then the name
 * with its first label replaced by `*` (so `*.example.com` matches exactly one label).
 */

export interface SniEntry {
  /** Explicit patterns given after the key file; empty means "use the certificate's names". */
  readonly explicit: readonly string[];
  /** CN and DNS SANs read from the certificate. */
  readonly extracted: readonly string[];
}

/** Name (normalised) → index into the entries. */
export type SniTable = ReadonlyMap<string, number>;

/** Lower case without a trailing dot: how names compare. */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, "");
}

export function buildSniTable(entries: readonly SniEntry[]): SniTable {
  const table = new Map<string, number>();
  // Reverse order so that earlier entries overwrite later ones.
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].explicit.length > 0) continue;
    for (const name of entries[i].extracted) {
      const n = normalizeName(name);
      if (n !== "") table.set(n, i);
    }
  }
  for (let i = entries.length - 1; i >= 0; i--) {
    for (const name of entries[i].explicit) {
      const n = normalizeName(name);
      if (n !== "") table.set(n, i);
    }
  }
  return table;
}

/** Index of the entry serving `serverName`, or null for the default certificate. */
export function selectSni(table: SniTable, serverName: string | null | undefined): number | null {
  if (!serverName) return null;
  const name = normalizeName(serverName);
  const exact = table.get(name);
  if (exact !== undefined) return exact;
  const labels = name.split(".");
  if (labels.length < 2) return null;
  labels[0] = "*";
  return table.get(labels.join(".")) ?? null;
}
