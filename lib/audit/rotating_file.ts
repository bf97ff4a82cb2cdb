/**
 * @module audit/rotating_file
 * An append-only line file with lumberjack-style rotation: when the next write would pass the size
 * limit the file is renamed to `<name>-<UTC 2006-01-02T15-04-05.000><ext>` and a new one started;
 * backups beyond the count limit (oldest first) or older than the age limit (by the time in their
 * name) are deleted. Files are created with mode 0600.
 *
 * Whole lines only: callers hand in complete lines; queued lines are written together with one
 * write call per group (looping only on a short write), rotation happens only between groups, and a
 * line never spans two files. A crash (or a full disk) can still cut the last write short, so
 * opening the file first cuts any unterminated tail back to the last newline: a reader after a
 * restart never sees a partial line.
 */
import { basename, dirname, extname, join } from "node:path";
import { log } from "../log/logger.ts";

export interface Rotation {
  /** Rotate before a write would make the file larger than this; 0 = never. */
  readonly maxSizeBytes: number;
  /** Keep at most this many backups (newest kept); 0 = no count limit. */
  readonly maxBackups: number;
  /** Delete backups whose name time is older than this many days; 0 = no age limit. */
  readonly maxAgeDays: number;
}

/** A destination for whole lines. */
export interface LineSink {
  /** Complete lines, each ending in "\n", written in one go where the size limit allows. Resolves once written. */
  write(lines: string | readonly string[]): Promise<void>;
  close(): Promise<void>;
}

const encoder = new TextEncoder();
const dayMs = 24 * 60 * 60 * 1000;

interface Pending {
  /** Whole lines: rotation may fall between them. */
  lines: readonly string[];
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Writes all of `bytes`, looping on short writes. */
async function writeAll(w: { write(p: Uint8Array): Promise<number> }, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await w.write(off === 0 ? bytes : bytes.subarray(off));
}

/** Group commit: lines queued while a write is in flight go out together in the next single write. */
abstract class GroupWriter implements LineSink {
  #queue: Pending[] = [];
  #draining: Promise<void> | null = null;
  #closed = false;

  write(lines: string | readonly string[]): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("audit log is closed"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ lines: typeof lines === "string" ? [lines] : lines, resolve, reject });
      this.#draining ??= this.#drain();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue;
      this.#queue = [];
      try {
        await this.writeGroup(group.flatMap((p) => p.lines));
        for (const p of group) p.resolve();
      } catch (err) {
        for (const p of group) p.reject(err as Error);
      }
    }
    this.#draining = null;
  }

  /** Writes the lines in order (an entry may hold several lines when given as one string). */
  protected abstract writeGroup(lines: string[]): Promise<void>;
  protected abstract release(): Promise<void> | void;

  async close(): Promise<void> {
    this.#closed = true;
    await this.#draining;
    await this.release();
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** Standard output (`--audit-log-path -`): no rotation. */
export class StdoutSink extends GroupWriter {
  protected async writeGroup(lines: string[]): Promise<void> {
    await writeAll(Deno.stdout, encoder.encode(lines.join("")));
  }
  protected release(): void {}
}

export class RotatingFile extends GroupWriter {
  #file: Deno.FsFile;
  #size: number;
  readonly #dir: string;
  readonly #prefix: string;
  readonly #ext: string;

  private constructor(
    readonly path: string,
    readonly rotation: Rotation,
    file: Deno.FsFile,
    size: number,
    private readonly now: () => number,
  ) {
    super();
    this.#file = file;
    this.#size = size;
    this.#dir = dirname(path);
    this.#ext = extname(path);
    this.#prefix = basename(path, this.#ext) + "-";
  }

  /** Opens (creating with mode 0600) `path` for appending, after cutting any partial last line. */
  static async open(path: string, rotation: Rotation, now: () => number = Date.now): Promise<RotatingFile> {
    const file = await openAppend(path);
    let size: number;
    try {
      size = await cutPartialLine(path, file);
    } catch (err) {
      file.close();
      throw err;
    }
    const rf = new RotatingFile(path, rotation, file, size, now);
    await rf.#mill();
    return rf;
  }

  protected async writeGroup(lines: string[]): Promise<void> {
    const max = this.rotation.maxSizeBytes;
    // Usually the whole group fits: one encode, one write.
    const all = encoder.encode(lines.join(""));
    if (max <= 0 || this.#size + all.length <= max) return await this.#flush([all], all.length);
    const chunks = lines.map((l) => encoder.encode(l));
    let part: Uint8Array[] = [];
    let partSize = 0;
    for (const chunk of chunks) {
      if (max > 0 && this.#size + partSize + chunk.length > max && this.#size + partSize > 0) {
        await this.#flush(part, partSize);
        part = [];
        partSize = 0;
        await this.#rotate();
      }
      part.push(chunk);
      partSize += chunk.length;
    }
    await this.#flush(part, partSize);
  }

  async #flush(part: Uint8Array[], size: number): Promise<void> {
    if (size === 0) return;
    await writeAll(this.#file, concat(part, size));
    this.#size += size;
  }

  async #rotate(): Promise<void> {
    this.#file.close();
    let t = this.now();
    let backup = join(this.#dir, this.#prefix + backupTime(t) + this.#ext);
    // Two rotations in one millisecond would otherwise overwrite a backup.
    while (await exists(backup)) backup = join(this.#dir, this.#prefix + backupTime(++t) + this.#ext);
    await Deno.rename(this.path, backup);
    this.#file = await openAppend(this.path);
    this.#size = 0;
    log.v(2)?.info("audit log rotated", { path: this.path, backup });
    await this.#mill();
  }

  /** The backups of this file, newest first. */
  async backups(): Promise<{ path: string; time: number }[]> {
    const found: { path: string; time: number }[] = [];
    for await (const e of Deno.readDir(this.#dir)) {
      if (!e.isFile || !e.name.startsWith(this.#prefix) || !e.name.endsWith(this.#ext)) continue;
      const stamp = e.name.slice(this.#prefix.length, e.name.length - this.#ext.length);
      const time = parseBackupTime(stamp);
      if (time !== null) found.push({ path: join(this.#dir, e.name), time });
    }
    return found.sort((a, b) => b.time - a.time);
  }

  /** Deletes backups over the count limit and past the age limit. */
  async #mill(): Promise<void> {
    const { maxBackups, maxAgeDays } = this.rotation;
    if (maxBackups <= 0 && maxAgeDays <= 0) return;
    const all = await this.backups();
    const cutoff = this.now() - maxAgeDays * dayMs;
    for (const [i, b] of all.entries()) {
      if ((maxBackups > 0 && i >= maxBackups) || (maxAgeDays > 0 && b.time < cutoff)) {
        try {
          await Deno.remove(b.path);
        } catch (err) {
          log.warn("cannot remove an old audit log backup", { path: b.path, error: (err as Error).message });
        }
      }
    }
  }

  protected release(): void {
    this.#file.close();
  }
}

async function openAppend(path: string): Promise<Deno.FsFile> {
  return await Deno.open(path, { append: true, create: true, read: true, mode: 0o600 });
}

/** Truncates an unterminated last line left by a crash; returns the resulting size. */
async function cutPartialLine(path: string, file: Deno.FsFile): Promise<number> {
  const size = (await file.stat()).size;
  if (size === 0) return 0;
  const buf = new Uint8Array(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - buf.length);
    const view = buf.subarray(0, end - start);
    await file.seek(start, Deno.SeekMode.Start);
    let got = 0;
    while (got < view.length) {
      const n = await file.read(view.subarray(got));
      if (n === null) break;
      got += n;
    }
    const nl = view.subarray(0, got).lastIndexOf(10);
    if (nl >= 0) {
      const keep = start + nl + 1;
      if (keep < size) {
        await file.truncate(keep);
        log.warn("audit log ended in a partial line (earlier crash); cut it off", { path, bytes: size - keep });
      }
      return keep;
    }
    end = start;
  }
  await file.truncate(0);
  log.warn("audit log held no complete line (earlier crash); emptied it", { path, bytes: size });
  return 0;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** `2006-01-02T15-04-05.000` in UTC. */
export function backupTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace(/:/g, "-");
}

export function parseBackupTime(stamp: string): number | null {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
  if (!m) return null;
  const t = Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`);
  return Number.isNaN(t) ? null : t;
}
