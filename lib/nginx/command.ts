/**
 * @module nginx/command
 * `ingress-controller nginx-check`: reads Ingresses from a YAML/JSON file (several documents, or
 * `List`s; other kinds are skipped; no namespace means `default`) or, without a file, lists the cluster's, and prints the
 * migration report (nginx/translate.ts): a JSON array of `{namespace, ingress, annotation, verdict,
 * note}` with `--output json`, the HTTPRoutes they become with `--output httproute` (nginx/to_httproute.ts),
 * else a text table. Input that cannot be read is a SetupError (one
 * line, exit 1); whatever the verdicts, a report that was printed exits 0.
 */
import { parseAllDocuments } from "yaml";
import { ClusterClient } from "../cluster/client.ts";
import { oneLine, SetupError } from "../common/errors.ts";
import type { NginxCheckSettings } from "./settings.ts";
import { checkIngress, type IngressLike, type ReportRow } from "./translate.ts";
import { planMigration, type ServiceLike } from "./to_httproute.ts";
import { httpRouteYaml } from "./httproute_yaml.ts";

const INGRESS_API = new Set(["networking.k8s.io/v1", "networking.k8s.io/v1beta1", "extensions/v1beta1"]);

function isIngress(o: unknown): o is IngressLike & { kind: string; apiVersion: string } {
  const x = o as { kind?: unknown; apiVersion?: unknown } | null;
  return typeof x === "object" && x !== null && x.kind === "Ingress" && INGRESS_API.has(String(x.apiVersion));
}

function isService(o: unknown): o is ServiceLike & IngressLike {
  const x = o as { kind?: unknown; apiVersion?: unknown } | null;
  return typeof x === "object" && x !== null && x.kind === "Service" && x.apiVersion === "v1";
}

/** The Ingresses in a file's text: every document, `List` items and JSON arrays included; other kinds skipped. */
export function ingressesFromText(text: string, file: string): IngressLike[] {
  return objectsFromText(text, file, isIngress);
}

/** The objects of one kind in a file's text (no namespace: `default`). */
function objectsFromText<T extends IngressLike>(text: string, file: string, wanted: (o: unknown) => o is T): T[] {
  const out: T[] = [];
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new SetupError(`-f ${file}: not YAML or JSON`);
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) {
      throw new SetupError(
        `-f ${file}: document ${i + 1} is not valid YAML or JSON: ${oneLine(doc.errors[0].message)}`,
      );
    }
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const items = Array.isArray(value)
      ? value
      : typeof value === "object" && (value as { kind?: unknown }).kind === "List"
      ? (value as { items?: unknown }).items
      : [value];
    if (!Array.isArray(items)) throw new SetupError(`-f ${file}: document ${i + 1} is a List without items`);
    for (const item of items) {
      // As kubectl apply without -n: a manifest without a namespace lands in "default".
      if (wanted(item)) out.push({ ...item, metadata: { namespace: "default", ...item.metadata } });
    }
  }
  return out;
}

async function readFile(file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (err) {
    throw new SetupError(`-f ${file}: cannot read the file: ${oneLine(err)}`);
  }
}

/** Every object of a kind in the cluster (or of one namespace), listed in pages: Ingresses, or Services. */
async function listCluster<T>(s: NginxCheckSettings, kind: "ingresses" | "services"): Promise<T[]> {
  const client = await ClusterClient.create({ kubeconfig: s.kubeconfig || null, qps: 0, burst: 0 });
  const api = kind === "ingresses" ? "/apis/networking.k8s.io/v1" : "/api/v1";
  const path = s.namespace ? `${api}/namespaces/${encodeURIComponent(s.namespace)}/${kind}` : `${api}/${kind}`;
  const out: T[] = [];
  try {
    let next: string | undefined;
    do {
      const page = await client.request<{ items?: T[]; metadata?: { continue?: string } }>("GET", path, {
        query: { limit: 500, continue: next },
      });
      out.push(...(page.items ?? []));
      next = page.metadata?.continue || undefined;
    } while (next);
  } catch (err) {
    throw new SetupError(
      `cannot list the cluster's ${kind === "ingresses" ? "Ingresses" : "Services"}: ${oneLine(err)}`,
    );
  } finally {
    client.close();
  }
  return out;
}

/** The report rows of a set of Ingresses, by namespace, name and annotation. */
export function report(ingresses: readonly IngressLike[], namespace = ""): ReportRow[] {
  const rows = ingresses
    .filter((i) => !namespace || i.metadata?.namespace === namespace)
    .flatMap((i) => checkIngress(i));
  const key = (r: ReportRow) => `${r.namespace}\u0000${r.ingress}\u0000${r.annotation}`;
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The text table: aligned columns, then one line per note. */
export function textTable(rows: readonly ReportRow[], ingressCount: number): string {
  const head = ["NAMESPACE", "INGRESS", "ANNOTATION", "VERDICT", "NOTE"];
  const cells = rows.map((r) => [r.namespace, r.ingress, r.annotation, r.verdict, r.note.replace(/\s+/g, " ")]);
  const widths = head.slice(0, 4).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.slice(0, 4).map((x, i) => x.padEnd(widths[i])).join("  ") + "  " + c[4];
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  const summary = `${ingressCount} Ingress(es), ${rows.length} nginx annotation(s): ` +
    (["supported", "translated", "unsupported", "refused"].map((v) => `${counts.get(v) ?? 0} ${v}`).join(", "));
  return [line(head), ...cells.map(line), summary].map((l) => l.trimEnd()).join("\n") + "\n";
}

/** Runs the command; `write` prints to stdout. */
export async function runNginxCheck(s: NginxCheckSettings, write: (text: string) => void): Promise<void> {
  const text = s.file ? await readFile(s.file) : null;
  const all = text !== null ? ingressesFromText(text, s.file) : await listCluster<IngressLike>(s, "ingresses");
  const ingresses = all.filter((i) => !s.namespace || i.metadata?.namespace === s.namespace);
  if (s.output === "httproute") {
    // the Services give named ports their numbers; a user who may not list them gets those routes withheld, with why
    const services = text !== null
      ? objectsFromText(text, s.file, isService)
      : await listCluster<ServiceLike>(s, "services").catch(() => []);
    write(httpRouteYaml(planMigration(ingresses, s.gateway!, services)));
    return;
  }
  const rows = report(ingresses);
  write(s.output === "json" ? JSON.stringify(rows) + "\n" : textTable(rows, ingresses.length));
}
