/**
 * @module nginx/httproute_yaml
 * The migration preview as text (`nginx-check --output httproute`): a YAML stream a user can
 * `kubectl apply`, with the HTTPRoutes of each Ingress (nginx/to_httproute.ts) and, as comments,
 * each Ingress's annotation verdicts and notes, the routes withheld (with why), and the Gateway
 * listeners and ReferenceGrants the routes need. Comments are attached to the next document, so the
 * stream holds no empty document.
 */
import { Document, stringify as yamlText } from "yaml";
import type { MigrationPlan } from "./to_httproute.ts";

const stringify = (v: unknown) => yamlText(v, { aliasDuplicateObjects: false, lineWidth: 0 });

/** `text` as comment lines (the `yaml` library adds the `#`). */
const indent = (text: string, by = "  ") => text.trimEnd().split("\n").map((l) => by + l);

export function httpRouteYaml(plan: MigrationPlan): string {
  const gw = `${plan.gateway.namespace}/${plan.gateway.name}`;
  let pending: string[] = [
    `HTTPRoutes for ${plan.ingresses.length} Ingress(es), attached to Gateway ${gw} (nginx-check --output httproute).`,
    "Apply with kubectl apply -f; the Ingresses keep serving until you remove them.",
    `The Gateway needs these listeners in spec.listeners (each route's parentRef port picks them):`,
    ...indent(stringify(plan.listeners), "    "),
  ];
  if (plan.grants.length > 0) {
    pending.push(
      "and, for the certificates of other namespaces, these ReferenceGrants:",
      ...plan.grants.flatMap((g) => ["    ---", ...indent(stringify(g), "    ")]),
    );
  }
  pending.push(
    "Each hostname of the HTTP listener can be claimed by any namespace's route; the HTTPS listeners admit",
    "only their Ingress's namespace.",
  );
  const docs: string[] = [];
  for (const m of plan.ingresses) {
    pending.push("", `Ingress ${m.namespace}/${m.name}:`);
    pending.push(...m.verdicts.map((v) => `  ${v}`));
    if (m.verdicts.length === 0) pending.push("  no annotations to carry over");
    pending.push(...m.notes.map((n) => `  note: ${n}`));
    if (m.withheld !== null) {
      pending.push(`  NOT EMITTED: ${m.withheld}. The routes it would get:`);
      for (const r of m.routes) pending.push("    ---", ...indent(stringify(r), "    "));
      continue;
    }
    if (m.routes.length === 0) continue;
    for (const r of m.routes) {
      const doc = new Document(r, { aliasDuplicateObjects: false });
      doc.commentBefore = pending.map((l) => (l === "" ? "" : ` ${l}`)).join("\n");
      pending = [];
      docs.push(doc.toString({ lineWidth: 0 }));
    }
  }
  const trailing = pending.map((l) => (l === "" ? "#" : `# ${l}`)).join("\n");
  return docs.join("---\n") + (trailing ? trailing + "\n" : "");
}
