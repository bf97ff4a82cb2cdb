/**
 * @module render/features/headers
 * `request-headers-set|add|delete` and `response-headers-set|add|delete`: header edits of the
 * request before it goes to the backend and of the answer. Names and values have passed their
 * anchored parsers (a value holds no quote, `%` or `$`); values are written as log-format literals.
 */
import type { HeaderLine } from "../../annotations/values.ts";
import { literal } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface HeaderEdits {
  set: HeaderLine[];
  add: HeaderLine[];
  del: string[];
}

/** The request's edits, then the response's. */
export function readHeaderEdits(r: SettingsReader): { request: HeaderEdits; response: HeaderEdits } {
  return {
    request: {
      set: r.set("request-headers-set") ?? [],
      add: r.set("request-headers-add") ?? [],
      del: r.set("request-headers-delete") ?? [],
    },
    response: {
      set: r.set("response-headers-set") ?? [],
      add: r.set("response-headers-add") ?? [],
      del: r.set("response-headers-delete") ?? [],
    },
  };
}

function headerValue(h: HeaderLine): string {
  return `${h.name} ${literal(h.value)}`;
}

/** The edits of one direction, deletions first. */
export function headerLines(direction: "request" | "response", e: HeaderEdits): string[] {
  const l: string[] = [];
  for (const h of e.del) l.push(`http-${direction} del-header ${h}`);
  for (const h of e.set) l.push(`http-${direction} set-header ${headerValue(h)}`);
  for (const h of e.add) l.push(`http-${direction} add-header ${headerValue(h)}`);
  return l;
}
