/**
 * @module audit/serialize
 * Writes audit events as `audit.k8s.io/v1` or `v1beta1` JSON (one event, or an EventList for the
 * webhook) and as the legacy one-line text layout of kube-apiserver's log backend.
 */
import { type AuditEvent, orderedEvent, rfc3339Nano, secondsTime } from "./event.ts";

export type AuditVersion = "audit.k8s.io/v1" | "audit.k8s.io/v1beta1" | "audit.k8s.io/v1alpha1";
export const auditVersions: readonly AuditVersion[] = [
  "audit.k8s.io/v1",
  "audit.k8s.io/v1beta1",
  "audit.k8s.io/v1alpha1",
];

/**
 * The event as a JSON object of the given version. v1beta1 and v1alpha1 add metadata.creationTimestamp
 * and timestamp; v1alpha1's objectRef has no apiGroup but an apiVersion of `group/version`.
 */
export function versionedEvent(e: AuditEvent, version: AuditVersion): Record<string, unknown> {
  const body = orderedEvent(e);
  if (version === "audit.k8s.io/v1") return { kind: "Event", apiVersion: version, ...body };
  if (version === "audit.k8s.io/v1alpha1" && e.objectRef) {
    const { apiGroup, apiVersion, subresource, ...ref } = e.objectRef;
    const groupVersion = apiGroup ? `${apiGroup}/${apiVersion ?? ""}` : apiVersion;
    body.objectRef = { ...ref, apiVersion: groupVersion || undefined, subresource };
  }
  // Older versions carry stageTimestamp as metadata.creationTimestamp and requestReceivedTimestamp as timestamp.
  const { level, ...rest } = body;
  return {
    kind: "Event",
    apiVersion: version,
    metadata: { creationTimestamp: secondsTime(e.stageTimestamp) },
    level,
    timestamp: secondsTime(e.requestReceivedTimestamp),
    ...rest,
  };
}

/**
 * Characters JSON.stringify leaves raw that some readers take as a line break (U+0085, U+2028,
 * U+2029) or that a terminal interprets (DEL and the other C1 controls). They can only occur
 * inside JSON strings, where their `\u` escape means the same.
 */
const unsafeInJSONLine = /[\u007f-\u009f\u2028\u2029]/g;

/** One event as one line of JSON (no trailing newline) that no line-oriented reader can split. */
export function eventJSON(e: AuditEvent, version: AuditVersion): string {
  return JSON.stringify(versionedEvent(e, version)).replace(
    unsafeInJSONLine,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** An EventList around already serialized events. */
export function eventListJSON(items: readonly string[], version: AuditVersion): string {
  return `{"kind":"EventList","apiVersion":"${version}","metadata":{},"items":[${items.join(",")}]}`;
}

/**
 * The legacy layout (kube-apiserver's EventString):
 * `<received RFC3339Nano> AUDIT: id="…" stage="…" ip="…" method="…" user="…" groups="…" as="…"
 * asgroups="…" user-agent="…" namespace="…" uri="…" response="…"`, strings quoted as Go's %q.
 */
export function eventLegacy(e: AuditEvent): string {
  let username = "<none>";
  let groups = "<none>";
  if (e.user.username) {
    username = e.user.username;
    if (e.user.groups && e.user.groups.length > 0) groups = quotedList(e.user.groups);
  }
  let asUser = "<self>";
  let asGroups = "<lookup>";
  if (e.impersonatedUser) {
    asUser = e.impersonatedUser.username ?? "";
    if (e.impersonatedUser.groups) asGroups = quotedList(e.impersonatedUser.groups);
  }
  const namespace = e.objectRef?.namespace || "<none>";
  const response = e.responseStatus ? String(e.responseStatus.code) : "<deferred>";
  const ip = e.sourceIPs?.[0] ?? "<unknown>";
  return `${rfc3339Nano(e.requestReceivedTimestamp)} AUDIT: id=${goQuote(e.auditID)} stage=${goQuote(e.stage)} ` +
    `ip=${goQuote(ip)} method=${goQuote(e.verb)} user=${goQuote(username)} groups=${goQuote(groups)} ` +
    `as=${goQuote(asUser)} asgroups=${goQuote(asGroups)} user-agent=${goQuote(e.userAgent ?? "")} ` +
    `namespace=${goQuote(namespace)} uri=${goQuote(e.requestURI)} response="${response}"`;
}

function quotedList(list: readonly string[]): string {
  return list.map(goQuote).join(",");
}

const printable = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;
const named: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\\": "\\\\",
  '"': '\\"',
};

/** Go's strconv.Quote (fmt %q): printable runes as they are, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    if (named[ch]) {
      out += named[ch];
      continue;
    }
    if (printable.test(ch)) {
      out += ch;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    // A lone surrogate is not valid UTF-8; Go would see the (printable) replacement character.
    if (cp >= 0xd800 && cp <= 0xdfff) out += "\ufffd";
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += `\\U${cp.toString(16).padStart(8, "0")}`;
  }
  return out + '"';
}
