/**
 * @module audit/policy
 * The audit policy (`--audit-policy-file`): an `audit.k8s.io/v1` or `v1beta1` Policy in YAML or JSON,
 * validated at start-up, and the rule evaluation that decides the level and omitted stages of each
 * request the way kube-apiserver does: the first matching rule wins, no match means level None.
 */
import { parse as parseYaml } from "yaml";
import type { RequestAttributes } from "../auth/types.ts";
import { SetupError } from "../common/errors.ts";
import { isDns1123Subdomain } from "../render/patterns.ts";

export type PolicyLevel = "None" | "Metadata" | "Request" | "RequestResponse";
export type Stage = "RequestReceived" | "ResponseStarted" | "ResponseComplete" | "Panic";

export const levels: readonly PolicyLevel[] = ["None", "Metadata", "Request", "RequestResponse"];
export const stages: readonly Stage[] = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"];
const apiVersions = ["audit.k8s.io/v1", "audit.k8s.io/v1beta1"];

export interface GroupResources {
  readonly group: string;
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

export interface PolicyRule {
  readonly level: PolicyLevel;
  readonly users: readonly string[];
  readonly userGroups: readonly string[];
  readonly verbs: readonly string[];
  readonly resources: readonly GroupResources[];
  readonly namespaces: readonly string[];
  readonly nonResourceURLs: readonly string[];
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields?: boolean;
}

export interface Policy {
  readonly apiVersion: string;
  readonly rules: readonly PolicyRule[];
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean;
}

/** What the policy decided for one request. */
export interface PolicyDecision {
  readonly level: PolicyLevel;
  readonly omitStages: ReadonlySet<Stage>;
  readonly omitManagedFields: boolean;
}

const ruleFields = new Set([
  "level",
  "users",
  "userGroups",
  "verbs",
  "resources",
  "namespaces",
  "nonResourceURLs",
  "omitStages",
  "omitManagedFields",
]);
const groupResourceFields = new Set(["group", "resources", "resourceNames"]);
const policyFields = new Set(["apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"]);

/** Reads and validates a policy file; every problem is a one-line SetupError naming the file and the rule. */
export async function loadPolicyFile(path: string): Promise<Policy> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new SetupError(
      `--audit-policy-file ${path}: cannot read the audit policy (${(err as Error).message}); give a readable file`,
    );
  }
  return parsePolicy(text, path);
}

/** Parses policy text (YAML or JSON); `source` names it in error messages. */
export function parsePolicy(text: string, source: string): Policy {
  const fail = (what: string) =>
    new SetupError(`--audit-policy-file ${source}: ${what}; fix the audit.k8s.io Policy and restart`);
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw fail(`not valid YAML or JSON (${(err as Error).message.split("\n")[0]})`);
  }
  if (!isRecord(doc)) throw fail("the file does not hold a Policy object");
  if (doc.kind !== "Policy") throw fail(`kind is ${JSON.stringify(doc.kind)}, expected "Policy"`);
  if (typeof doc.apiVersion !== "string" || !apiVersions.includes(doc.apiVersion)) {
    throw fail(`apiVersion is ${JSON.stringify(doc.apiVersion)}, expected one of ${apiVersions.join(", ")}`);
  }
  for (const key of Object.keys(doc)) if (!policyFields.has(key)) throw fail(`unknown field "${key}"`);
  const omitStages = stageList(doc.omitStages, (m) => fail(`omitStages: ${m}`));
  const omitManagedFields = optionalBool(doc.omitManagedFields, (m) => fail(`omitManagedFields: ${m}`));
  if (!Array.isArray(doc.rules) || doc.rules.length === 0) {
    throw fail("the policy has no rules (an empty policy would audit nothing)");
  }
  const rules = doc.rules.map((raw, i) => parseRule(raw, (m) => fail(`rules[${i}]: ${m}`)));
  return { apiVersion: doc.apiVersion, rules, omitStages, omitManagedFields: omitManagedFields ?? false };
}

type Fail = (message: string) => Error;

function parseRule(raw: unknown, fail: Fail): PolicyRule {
  if (!isRecord(raw)) throw fail("a rule must be an object");
  for (const key of Object.keys(raw)) if (!ruleFields.has(key)) throw fail(`unknown field "${key}"`);
  if (raw.level === undefined || raw.level === null || raw.level === "") throw fail("level is required");
  if (!levels.includes(raw.level as PolicyLevel)) {
    throw fail(`level ${JSON.stringify(raw.level)} is not one of ${levels.join(", ")}`);
  }
  const strings = (name: string) => stringList(raw[name], (m) => fail(`${name}: ${m}`));
  const resources = Array.isArray(raw.resources)
    ? raw.resources.map((gr, i) => parseGroupResources(gr, (m) => fail(`resources[${i}]: ${m}`)))
    : raw.resources === undefined || raw.resources === null
    ? []
    : (() => {
      throw fail("resources must be a list");
    })();
  const nonResourceURLs = strings("nonResourceURLs");
  // "" names cluster-scoped resources.
  const namespaces = stringList(raw.namespaces, (m) => fail(`namespaces: ${m}`), true);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    throw fail("a rule cannot apply to both regular resources (resources, namespaces) and nonResourceURLs");
  }
  nonResourceURLs.forEach((url, i) => {
    if (url === "*") return;
    if (!url.startsWith("/")) throw fail(`nonResourceURLs[${i}] ${JSON.stringify(url)} must begin with "/"`);
    const star = url.indexOf("*");
    if (star >= 0 && star !== url.length - 1) {
      throw fail(`nonResourceURLs[${i}] ${JSON.stringify(url)}: the wildcard "*" may only be the last character`);
    }
  });
  return {
    level: raw.level as PolicyLevel,
    users: strings("users"),
    userGroups: strings("userGroups"),
    verbs: strings("verbs"),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stageList(raw.omitStages, (m) => fail(`omitStages: ${m}`)),
    omitManagedFields: optionalBool(raw.omitManagedFields, (m) => fail(`omitManagedFields: ${m}`)),
  };
}

function parseGroupResources(raw: unknown, fail: Fail): GroupResources {
  if (!isRecord(raw)) throw fail("must be an object with group, resources and resourceNames");
  for (const key of Object.keys(raw)) if (!groupResourceFields.has(key)) throw fail(`unknown field "${key}"`);
  const group = raw.group ?? "";
  if (typeof group !== "string") throw fail("group must be a string");
  // Kubernetes requires an API group name to be a DNS-1123 subdomain.
  if (group !== "" && !isDns1123Subdomain(group)) throw fail(`group ${JSON.stringify(group)} is not a valid API group`);
  const resources = stringList(raw.resources, (m) => fail(`resources: ${m}`));
  resources.forEach((r, i) => {
    // resource, resource/subresource, resource/*, */subresource or *
    if (!/^(\*|[^/*]+)(\/(\*|[^/*]+))?$/.test(r) || r === "*/*") {
      throw fail(`resources[${i}] ${JSON.stringify(r)} must be "*", "name", "name/sub", "name/*" or "*/sub"`);
    }
  });
  const resourceNames = stringList(raw.resourceNames, (m) => fail(`resourceNames: ${m}`));
  if (resourceNames.length > 0 && resources.length === 0) {
    throw fail("resourceNames needs at least one entry in resources");
  }
  return { group, resources, resourceNames };
}

function stringList(value: unknown, fail: Fail, allowEmpty = false): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fail("must be a list of strings");
  return value.map((v, i) => {
    if (typeof v !== "string" || (v === "" && !allowEmpty)) throw fail(`entry ${i} must be a non-empty string`);
    return v;
  });
}

function stageList(value: unknown, fail: Fail): Stage[] {
  return stringList(value, fail).map((s) => {
    if (!stages.includes(s as Stage)) throw fail(`${JSON.stringify(s)} is not one of ${stages.join(", ")}`);
    return s as Stage;
  });
}

function optionalBool(value: unknown, fail: Fail): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw fail("must be true or false");
  return value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What the policy evaluates: the user, the verb, the URL path and, for resource requests, the resource. */
export type PolicyAttributes = Pick<RequestAttributes, "user" | "verb" | "path" | "resource">;

const noneDecision: PolicyDecision = Object.freeze({
  level: "None",
  omitStages: new Set<Stage>(),
  omitManagedFields: false,
});

/** Decides the level of one request: the first matching rule wins; no rule matching means None. */
export function evaluatePolicy(policy: Policy, attrs: PolicyAttributes): PolicyDecision {
  for (const rule of policy.rules) {
    if (ruleMatches(rule, attrs)) {
      return {
        level: rule.level,
        omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
      };
    }
  }
  return noneDecision;
}

export function ruleMatches(rule: PolicyRule, attrs: PolicyAttributes): boolean {
  if (rule.users.length > 0 && !rule.users.includes(attrs.user.name)) return false;
  if (rule.userGroups.length > 0 && !attrs.user.groups.some((g) => rule.userGroups.includes(g))) return false;
  if (rule.verbs.length > 0 && !rule.verbs.includes(attrs.verb)) return false;
  if (rule.namespaces.length > 0 || rule.resources.length > 0) return resourceMatches(rule, attrs);
  if (rule.nonResourceURLs.length > 0) return nonResourceMatches(rule, attrs);
  return true;
}

function nonResourceMatches(rule: PolicyRule, attrs: PolicyAttributes): boolean {
  if (attrs.resource) return false;
  return rule.nonResourceURLs.some((spec) =>
    spec === "*" || spec === attrs.path || (spec.endsWith("*") && attrs.path.startsWith(spec.slice(0, -1)))
  );
}

function resourceMatches(rule: PolicyRule, attrs: PolicyAttributes): boolean {
  const res = attrs.resource;
  if (!res) return false;
  // Cluster-scoped resources have the empty namespace, which a rule can list as "".
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(res.namespace ?? "")) return false;
  if (rule.resources.length === 0) return true;
  const sub = res.subresource ?? "";
  const combined = sub ? `${res.resource}/${sub}` : res.resource;
  const name = res.name ?? "";
  for (const gr of rule.resources) {
    if (gr.group !== res.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) continue;
    for (const pattern of gr.resources) {
      if (pattern === "*" || pattern === combined) return true;
      if (sub && pattern.startsWith("*/") && pattern.slice(2) === sub) return true;
      if (pattern.endsWith("/*") && pattern.slice(0, -2) === res.resource) return true;
    }
  }
  return false;
}
