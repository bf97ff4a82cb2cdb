/**
 * @module transport/part_cache
 * The proxy's side of docs/config-transport.md: joins a head ConfigMap's files with its parts,
 * reading only the parts whose digest it does not hold yet and the head does not carry. Reads go through `fetchPart` (the
 * proxy passes a GET of the ConfigMap by name, which a Role limited by `resourceNames` allows), at most
 * {@link CONCURRENCY} at a time, each asking for a version not older than the head's: the parts a head names
 * are written before it, so the API server's watch cache holds them once it has the head, and answers
 * without a read from etcd. Each read says whether it is the first for that part's digest: a start reads every
 * part once (about 233 at 100,000 Ingresses), which the proxy lets through without its client's rate limit, while a part
 * read again for the same digest (it was missing, or held other content, and the proxy retries) waits for it.
 */
import { forEachLimit } from "../runtime/concurrency.ts";
import { DEFLATE_SUFFIX, inflatedOrNull } from "./part_encoding.ts";
import {
  assembleConfig,
  type AssembledConfig,
  carriedKey,
  type PartRef,
  partRefs,
  type ReadPart,
  readPart,
} from "./parts.ts";

/**
 * Reads one part ConfigMap's content; null when it does not exist. `first`: no read of this part for
 * this digest was made before (a retry is not first). `notOlderThan`: the head's resourceVersion, when
 * known: any version of the part from then on will do (a newer one with other content is a miss).
 */
export type FetchPart = (name: string, first: boolean, notOlderThan: string | undefined) => Promise<string | null>;

export type Assembled = AssembledConfig | { missing: PartRef[] };

/** Parallel reads at most (16 read the parts of a first start at 10,000 ingresses no faster here). */
const CONCURRENCY = 8;

export class PartCache {
  readonly #proxy: string;
  readonly #fetch: FetchPart;
  /** name → content and digest, only parts the last head named. */
  #parts = new Map<string, ReadPart>();
  /** name → the digest it was last read for, only parts the last head named. */
  #tried = new Map<string, string>();
  #fetched = 0;

  constructor(proxy: string, fetchPart: FetchPart) {
    this.#proxy = proxy;
    this.#fetch = fetchPart;
  }

  /** Parts read through the API so far (tests and metrics: unchanged parts are never read again). */
  get fetched(): number {
    return this.#fetched;
  }

  /**
   * The head's files with their parts joined, or the parts that are missing or hold other content.
   * `headVersion`: the head ConfigMap's resourceVersion; `headBinary`: its `binaryData` (carried
   * parts that travel deflated).
   */
  async assemble(
    head: Readonly<Record<string, string>>,
    headVersion?: string,
    headBinary: Readonly<Record<string, string>> = {},
  ): Promise<Assembled> {
    const refs = [...partRefs(this.#proxy, head).values()].flat();
    const wanted = new Map(refs.map((r) => [r.name, r.sha256]));
    for (const name of [...this.#parts.keys()]) if (!wanted.has(name)) this.#parts.delete(name);
    for (const name of [...this.#tried.keys()]) if (!wanted.has(name)) this.#tried.delete(name);
    const stale: [string, string][] = [];
    for (const [name, sha] of wanted) {
      if (this.#parts.get(name)?.sha256 === sha) continue;
      // Carried by the head (a change's new part): nothing to read.
      // One that does not inflate is read as a part instead.
      const carried = head[carriedKey(sha)] ?? inflatedOrNull(headBinary[carriedKey(sha) + DEFLATE_SUFFIX]);
      if (carried !== null) this.#parts.set(name, readPart(carried));
      else stale.push([name, sha]);
    }
    await forEachLimit(stale, CONCURRENCY, async ([name, sha]) => {
      const first = this.#tried.get(name) !== sha;
      this.#tried.set(name, sha);
      const content = await this.#fetch(name, first, headVersion);
      this.#fetched++;
      if (content === null) this.#parts.delete(name);
      else this.#parts.set(name, readPart(content));
    });
    return assembleConfig(this.#proxy, head, this.#parts);
  }
}
