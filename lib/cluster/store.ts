/**
 * @module cluster/store
 * The local cache of one informer: objects by `namespace/name`, plus named indexers
 * (e.g. EndpointSlices by their service, owned objects by owner uid).
 */
import { keyOf, type KubeObject } from "./resources.ts";
import { addMember, membersOf, type OneOrMany, removeMember } from "../common/one_or_many.ts";

export type IndexFunc<T> = (obj: T) => readonly string[];

/** How many of the last written keys a store remembers (Store.changedSince). */
const WRITE_LOG = 1_024;

export class Store<T extends KubeObject = KubeObject> {
  #items = new Map<string, T>();
  #indexers = new Map<string, IndexFunc<T>>();
  /** Index value → the key of its one object, or a Set of keys when there are several (most have one). */
  #indices = new Map<string, Map<string, OneOrMany>>();
  /**
   * byIndex answers, kept until an object of that index value changes: the model asks for the
   * EndpointSlices of every Service of a proxy on each change, and the answer is compared by identity.
   */
  #answers = new Map<string, Map<string, readonly T[]>>();
  /** The keys of the last writes (set or delete), oldest first; `#logBase` writes came before them. */
  #log: string[] = [];
  #logBase = 0;

  /** How many writes (set or delete) the store has had: a mark for `changedSince`. */
  get writes(): number {
    return this.#logBase + this.#log.length;
  }

  /**
   * The keys written since `mark` (a `writes` value), in order and possibly repeated, or null when
   * more were written since than the store remembers: a reader keeping objects per key (a group's
   * member objects) then looks up the changed ones only instead of all 100,000.
   */
  changedSince(mark: number): readonly string[] | null {
    if (mark < this.#logBase || mark > this.writes) return null;
    return this.#log.slice(mark - this.#logBase);
  }

  #wrote(key: string): void {
    this.#log.push(key);
    if (this.#log.length >= 2 * WRITE_LOG) {
      this.#logBase += this.#log.length - WRITE_LOG;
      this.#log = this.#log.slice(-WRITE_LOG);
    }
  }

  /** Adds an indexer; existing objects are indexed at once. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.#indexers.set(name, fn);
    const index = new Map<string, OneOrMany>();
    this.#indices.set(name, index);
    for (const [key, obj] of this.#items) for (const v of fn(obj)) addMember(index, v, key);
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  /** Objects whose indexer `name` produced `value` (the same array until one of them changes; do not modify it). */
  byIndex(name: string, value: string): readonly T[] {
    const keys = this.#indices.get(name)?.get(value);
    if (!keys) return [];
    let answers = this.#answers.get(name);
    if (!answers) this.#answers.set(name, answers = new Map());
    let answer = answers.get(value);
    if (!answer) {
      const found: T[] = [];
      for (const k of membersOf(keys)) {
        const o = this.#items.get(k);
        if (o) found.push(o);
      }
      // An array grown by push keeps room for 16 more; this one is kept until its objects change.
      answers.set(value, answer = found.slice());
    }
    return answer;
  }

  /** Stores `obj`, returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = keyOf(obj);
    const old = this.#items.get(key);
    if (old) this.#unindex(key, old);
    this.#items.set(key, obj);
    this.#wrote(key);
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      for (const v of fn(obj)) {
        addMember(index, v, key);
        this.#answers.get(name)?.delete(v);
      }
    }
    return old;
  }

  /** Removes the object with `key`, returns it. */
  delete(key: string): T | undefined {
    const old = this.#items.get(key);
    if (!old) return undefined;
    this.#unindex(key, old);
    this.#items.delete(key);
    this.#wrote(key);
    return old;
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      for (const v of fn(obj)) {
        removeMember(index, v, key);
        this.#answers.get(name)?.delete(v);
      }
    }
  }
}
