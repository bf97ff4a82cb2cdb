/**
 * @module render/dropped_backends
 * When a configuration is another one minus whole backends that nothing names (contracts.md §4,
 * "Dropped backends"). Both sides use it: the proxy applies such a configuration through the
 * Runtime API (the running HAProxy keeps the unused backends until its next reload), and the
 * controller does not check it with `haproxy -c` again when the larger one passed.
 *
 * A configuration is cut into sections: a line at column 0 that is not a comment (`global`,
 * `frontend x`, `backend x`, …) and the lines after it up to the next such line. `next` is `last`
 * minus backends when its sections are those of `last` in the same order, the missing ones all
 * `backend` sections that HAProxy reads as such (lib/render/slots.ts's `plainSections`: no section
 * or conditional block hidden in them); and nothing names them when no name of a missing backend occurs as a token
 * (between characters a proxy name cannot hold) in `next`'s configuration or map files. So no
 * `use_backend`, `default_backend`, `track`, map value or any other line of `next` can reach them,
 * and the sections `next` keeps are as they were when `last` was accepted, up to the addresses of
 * their server slots. Only the sections that differ need a closer look (their slots), which keeps a
 * change of a 10,000-backend configuration at the cost of what changed.
 */
import { plainSections, SECTION_START, skeleton } from "./slots.ts";

/** A configuration's sections (module header): `keys[i]` is section i's text. */
export interface SectionList {
  readonly keys: readonly string[];
  /** The backend section i defines, or null. */
  backend(i: number): string | null;
}

const BACKEND_HEADER = /^backend[ \t]+([^\s#]+)/;
/** What a proxy name may hold (HAProxy: letters, digits, `-`, `_`, `.`, `:`). */
const NAME_CHAR = /[A-Za-z0-9_.:-]/;

/** The sections of `config` as texts (the first one may be a preamble of comments). */
export function sectionTexts(config: string): string[] {
  return config.split(SECTION_START);
}

/** The backend a section defines, or null. */
export function backendOf(section: string): string | null {
  return BACKEND_HEADER.exec(section)?.[1] ?? null;
}

/**
 * The sections of `config`, each identified by its text. What a backend section defines is read
 * only for those that are left out: at 100,000 backends, reading every header cost more than the
 * cut.
 */
export function sectionList(config: string): SectionList {
  const keys = sectionTexts(config);
  return { keys, backend: (i) => backendOf(keys[i]) };
}

/** Blank lines and trailing spaces mean nothing to HAProxy (and the last backend before another part of a template may have more). */
const sameText = (a: string, b: string) => a.trimEnd() === b.trimEnd();

/** How the sections of `next` line up with those of `last` (indexes): what it leaves out, and what changed. */
export interface Alignment {
  /** Sections of `last` that `next` leaves out: all `backend` sections. */
  readonly dropped: readonly number[];
  /** Pairs `[i in last, j in next]` whose keys differ but are `same`. */
  readonly changed: readonly (readonly [number, number])[];
}

/**
 * How `next`'s sections line up with `last`'s when they are those of `last` in the same order
 * (each `same` as its counterpart) without some `backend` sections (each plain); null when `next` differs
 * otherwise (a section added, changed, moved, or a section other than a backend left out).
 */
export function alignSections(
  last: SectionList,
  next: SectionList,
  same: (a: string, b: string) => boolean = sameText,
): Alignment | null {
  const [m, n] = [last.keys.length, next.keys.length];
  const dropped: number[] = [];
  const changed: [number, number][] = [];
  let j = 0;
  for (let i = 0; i < m; i++) {
    if (m - i < n - j) return null;
    if (j < n && last.keys[i] === next.keys[j]) {
      j++;
    } else if (j < n && same(last.keys[i], next.keys[j])) {
      changed.push([i, j++]);
    } else if (last.backend(i) !== null && plainSections(last.keys[i])) {
      dropped.push(i);
    } else {
      return null;
    }
  }
  return j === n ? { dropped, changed } : null;
}

/** The backends `next` leaves out of `last` ({@link alignSections}); null when it differs otherwise. */
export function droppedSections(
  last: SectionList,
  next: SectionList,
  same?: (a: string, b: string) => boolean,
): string[] | null {
  return alignSections(last, next, same)?.dropped.map((i) => last.backend(i)!) ?? null;
}

/**
 * Two sections that differ at most in the addresses of their server slots (lib/render/slots.ts's
 * skeleton): the same structure, what neither `haproxy -c` nor a reload needs to see.
 */
export function sameSkeleton(a: string, b: string): boolean {
  return sameText(a, b) || skeleton(a).trimEnd() === skeleton(b).trimEnd();
}

/** True when `name` occurs in `text` as a token: not next to a character a proxy name can hold. */
export function namesToken(text: string, name: string): boolean {
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const before = at === 0 ? "" : text[at - 1];
    const after = text[at + name.length] ?? "";
    if (!NAME_CHAR.test(before) && !NAME_CHAR.test(after)) return true;
  }
  return false;
}

/**
 * The backends `next` drops from `last` when it is `last` minus whole backends that none of
 * `texts` (`next`'s configuration and map files) names; null otherwise (then `next` is a
 * structural change: a reload in the proxy, a new check in the controller).
 */
export function unreferencedDrops(
  last: SectionList,
  next: SectionList,
  texts: readonly string[],
  same?: (a: string, b: string) => boolean,
): string[] | null {
  const dropped = droppedSections(last, next, same);
  return dropped && !namedIn(dropped, texts) ? dropped : null;
}

/** True when one of `names` occurs as a token in one of `texts`. */
export function namedIn(names: readonly string[], texts: readonly string[]): boolean {
  return names.some((name) => texts.some((t) => namesToken(t, name)));
}
