/**
 * @module log/buffered_file
 * The log file of `--log_dir`, written like klog writes it: lines are buffered and flushed at most
 * `--log-flush-frequency` after the first unflushed one, when the buffer holds 256 KiB, at once for
 * an error or fatal line, and on close, process exit (`unload`) and an uncaught error. Writes are
 * synchronous, so a flush from an exit handler completes.
 */

/** klog's bufio size: a full buffer is flushed without waiting for the timer. */
const MAX_BUFFERED = 256 * 1024;

const enc = new TextEncoder();

export class BufferedFile {
  #lines: string[] = [];
  #size = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #onExit = () => this.flush();

  /** `flushMs` 0 writes every line at once. */
  constructor(private readonly file: Deno.FsFile, private readonly flushMs: number) {
    for (const type of ["unload", "error", "unhandledrejection"]) globalThis.addEventListener(type, this.#onExit);
  }

  /** Buffers one line (a newline is added); `urgent` flushes it with everything before it. */
  write(line: string, urgent = false): void {
    if (this.#closed) return;
    this.#lines.push(line + "\n");
    this.#size += line.length + 1;
    if (urgent || this.flushMs <= 0 || this.#size >= MAX_BUFFERED) return this.flush();
    if (this.#timer === undefined) {
      const timer = setTimeout(() => {
        this.#timer = undefined;
        this.flush();
      }, this.flushMs);
      // The timer alone must not keep the process alive; exit flushes through `unload`.
      Deno.unrefTimer(timer as unknown as number);
      this.#timer = timer;
    }
  }

  /** Writes what is buffered. */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lines.length === 0 || this.#closed) return;
    const bytes = enc.encode(this.#lines.join(""));
    this.#lines = [];
    this.#size = 0;
    for (let done = 0; done < bytes.length;) done += this.file.writeSync(bytes.subarray(done));
  }

  /** Flushes and closes the file; later writes are dropped. */
  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    for (const type of ["unload", "error", "unhandledrejection"]) globalThis.removeEventListener(type, this.#onExit);
    this.file.close();
  }
}
