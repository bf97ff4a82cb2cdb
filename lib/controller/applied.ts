/**
 * @module controller/applied
 * The hashes of what the controller wrote to each owned object, so that the watch events its own
 * writes cause are told apart from changes by others (lib/controller/drift.ts compares the fields). A hash is noted before its write (the event may arrive
 * before the answer), and the last few written are kept until their events arrive: two writes in a
 * row are answered before the first one's event comes in, and that event is ours too.
 */

/** Writes per object whose events may still be on their way; older ones are forgotten. */
const PENDING_LIMIT = 8;

export class AppliedHashes {
  /** Per object path: the hash it should carry now. */
  #current = new Map<string, string>();
  /** Per object path: hashes written, oldest first, whose watch events have not been seen yet. */
  #pending = new Map<string, string[]>();

  get(path: string): string | undefined {
    return this.#current.get(path);
  }

  /** The object was found carrying `hash` (nothing written). */
  found(path: string, hash: string): void {
    this.#current.set(path, hash);
  }

  /** `hash` is about to be written; returns how to undo this if the write fails. */
  writing(path: string, hash: string): () => void {
    const before = this.#current.get(path);
    this.#current.set(path, hash);
    const pending = this.#pending.get(path) ?? [];
    pending.push(hash);
    if (pending.length > PENDING_LIMIT) pending.shift();
    this.#pending.set(path, pending);
    return () => {
      const i = pending.lastIndexOf(hash);
      if (i >= 0) pending.splice(i, 1);
      if (pending.length === 0 && this.#pending.get(path) === pending) this.#pending.delete(path);
      if (this.#current.get(path) !== hash) return;
      if (before === undefined) this.#current.delete(path);
      else this.#current.set(path, before);
    };
  }

  /**
   * What a watched object carrying the hash `seen` is: the event of one of this controller's own
   * writes ("echo"; events come in write order, so a late one also settles every write before
   * it), an object that carries the hash it should have now but changed otherwise ("expected":
   * someone else may have changed a field and left the hash), or anything else ("other").
   */
  classify(path: string, seen: string | undefined): "echo" | "expected" | "other" {
    const pending = this.#pending.get(path);
    const i = seen === undefined || !pending ? -1 : pending.indexOf(seen);
    if (i >= 0) {
      pending!.splice(0, i + 1);
      if (pending!.length === 0) this.#pending.delete(path);
      return "echo";
    }
    return seen !== undefined && seen === this.#current.get(path) ? "expected" : "other";
  }

  delete(path: string): void {
    this.#current.delete(path);
    this.#pending.delete(path);
  }

  clear(): void {
    this.#current.clear();
    this.#pending.clear();
  }
}
