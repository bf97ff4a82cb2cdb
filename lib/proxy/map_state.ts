/**
 * @module proxy/map_state
 * The checked lines of one routing map file as the proxy holds them, and the lines that change
 * between two of them, at the cost of the change rather than of the map. A map that travelled in
 * parts (docs/config-transport.md) is held part by part: a one-route change in 10,000 checks the
 * lines of its one or two new parts only, and finds the changed lines there (a part with the same
 * digest has the same lines). A map given whole is checked against the lines already checked and
 * compared line set to line set.
 */
import { MAP_LINE, type MapFile } from "../render/maps.ts";
import type { ReadPart } from "../transport/parts.ts";

/** A run of lines: a part of the map (by its digest) or the whole map (digest null). */
interface Piece {
  readonly sha256: string | null;
  readonly lines: readonly string[];
}

/** Lines only in the next map, and lines only in the previous one (each line once). */
export interface MapDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

export class CheckedMap {
  static readonly EMPTY = new CheckedMap([]);
  readonly #pieces: readonly Piece[];
  /** How often each line occurs: built by `prepare` or the first diff from this map, then handed to the next. */
  #counts: Map<string, number> | null = null;

  private constructor(pieces: readonly Piece[]) {
    this.#pieces = pieces;
  }

  /**
   * Checks map `file` (`text`, joined from `parts` when it travelled in parts) line by line against
   * MAP_LINE; lines held by `known` (the running map) passed before and are not checked again.
   * Throws naming the first bad line.
   */
  static of(file: MapFile, text: string, parts: readonly ReadPart[] | undefined, known: CheckedMap | null): CheckedMap {
    if (text === "") return CheckedMap.EMPTY;
    if (parts && wholeLines(text, parts)) {
      const held = new Map<string, Piece>();
      for (const p of known ? known.#pieces : []) if (p.sha256 !== null) held.set(p.sha256, p);
      let line = 1;
      return new CheckedMap(parts.map((part) => {
        const piece = held.get(part.sha256) ?? { sha256: part.sha256, lines: checkedLines(file, part.content, line) };
        line += piece.lines.length;
        return piece;
      }));
    }
    const checked = known && known.#pieces.length > 0 ? new Set(known.lines()) : undefined;
    return new CheckedMap([{ sha256: null, lines: checkedLines(file, text, 1, checked) }]);
  }

  /**
   * Counts the lines now, if no diff has yet: called while the proxy is idle after a start or a
   * reload, so that the first change after it does not count 100,000 lines on its way.
   */
  prepare(): void {
    if (this !== CheckedMap.EMPTY && this.#counts === null && !this.#pieces.some((p) => p.sha256 === null)) {
      this.#counts = countLines(this.#pieces);
    }
  }

  /** Every line, in file order. */
  lines(): string[] {
    return this.#pieces.length === 1 ? [...this.#pieces[0].lines] : this.#pieces.flatMap((p) => p.lines);
  }

  /**
   * What changes from this map to `next`; `commit()` once `next` runs, so that its diff to the
   * map after it starts from the line counts kept here instead of counting its lines again.
   */
  diff(next: CheckedMap): MapDiff & { commit(): void } {
    const whole = (m: CheckedMap) => m.#pieces.some((p) => p.sha256 === null);
    if (whole(this) || whole(next)) {
      const [before, after] = [new Set(this.lines()), new Set(next.lines())];
      return {
        added: [...after].filter((l) => !before.has(l)),
        removed: [...before].filter((l) => !after.has(l)),
        commit: () => {},
      };
    }
    // parts in one map only (a part in both has the same lines in both)
    const net = new Map<string, { piece: Piece; n: number }>();
    for (const [map, sign] of [[this, -1], [next, 1]] as const) {
      for (const piece of map.#pieces) {
        const entry = net.get(piece.sha256!) ?? { piece, n: 0 };
        entry.n += sign;
        net.set(piece.sha256!, entry);
      }
    }
    // The lines of the parts gone and come, in file order; the lines both start and end with cancel
    // out, so that a one-line change of a 64 KiB part counts a line or two, not both parts' lines.
    const gone: string[] = [];
    const came: string[] = [];
    for (const { piece, n } of net.values()) {
      for (let k = 0; k < Math.abs(n); k++) for (const l of piece.lines) (n < 0 ? gone : came).push(l);
    }
    let head = 0;
    while (head < gone.length && head < came.length && gone[head] === came[head]) head++;
    let tail = 0;
    while (
      tail < gone.length - head && tail < came.length - head &&
      gone[gone.length - 1 - tail] === came[came.length - 1 - tail]
    ) tail++;
    const delta = new Map<string, number>();
    for (let i = head; i < gone.length - tail; i++) delta.set(gone[i], (delta.get(gone[i]) ?? 0) - 1);
    for (let i = head; i < came.length - tail; i++) delta.set(came[i], (delta.get(came[i]) ?? 0) + 1);
    const counts = this.#counts ?? countLines(this.#pieces);
    // EMPTY stands for every empty map: counts started from it belong to the one map they describe
    if (this !== CheckedMap.EMPTY) this.#counts = counts;
    const added: string[] = [];
    const removed: string[] = [];
    for (const [l, d] of delta) {
      const before = counts.get(l) ?? 0;
      if (before === 0 && d > 0) added.push(l);
      else if (before > 0 && before + d === 0) removed.push(l);
    }
    return {
      added,
      removed,
      commit: () => {
        for (const [l, d] of delta) {
          const n = (counts.get(l) ?? 0) + d;
          if (n === 0) counts.delete(l);
          else counts.set(l, n);
        }
        next.#counts = counts;
        this.#counts = null;
      },
    };
  }
}

/** True when `parts` join to `text` and each ends at a line end (as the split writes map files). */
function wholeLines(text: string, parts: readonly ReadPart[]): boolean {
  let size = 0;
  for (const p of parts) {
    if (!p.content.endsWith("\n")) return false;
    size += p.content.length;
  }
  return size === text.length;
}

function countLines(pieces: readonly Piece[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of pieces) for (const l of p.lines) counts.set(l, (counts.get(l) ?? 0) + 1);
  return counts;
}

/** The lines of `text` (ending with a line break), each `<key> <backend>`; `first` numbers the first for errors. */
function checkedLines(file: MapFile, text: string, first: number, checked?: ReadonlySet<string>): string[] {
  if (!text.endsWith("\n")) throw new Error(`${file}: does not end with a line break`);
  const lines = text.slice(0, -1).split("\n");
  for (const [i, l] of lines.entries()) {
    if (!checked?.has(l) && !MAP_LINE.test(l)) {
      throw new Error(`${file}: line ${first + i} is not "<key> <backend>": ${JSON.stringify(l)}`);
    }
  }
  return lines;
}
