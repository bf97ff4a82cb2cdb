/**
 * @module haproxy/cli_socket
 * The one client of HAProxy's command sockets: the master CLI (`reload`, `show proc`) and the
 * Runtime API on the stats socket (`show stat`, `set server …`). One command per connection:
 * connect, send the line, shut the write side (the master CLI answers only once it sees the end
 * of our input), read until HAProxy closes. Used by the proxy, the exporter and the local stack.
 */
import { pause } from "../runtime/timers.ts";

export interface CliOptions {
  /** Time limit for the whole exchange; default 10 s; 0: none (the signal alone ends it). */
  readonly timeoutMs?: number;
  /** Stops the exchange; the promise then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Keep trying to connect for this long while the socket is missing or refuses (a reloading
   * master re-executes itself and is briefly away); default 0: one attempt.
   */
  readonly connectRetryMs?: number;
  /**
   * A Runtime API payload (`<command> <<` then the payload's lines then an empty line), e.g. the
   * entries of `add map` or the PEM of `set ssl cert`. Its lines must not be empty (an empty line
   * ends a payload) and it must fit HAProxy's buffer (tune.bufsize, 16 kB by default).
   */
  readonly payload?: string;
}

/**
 * The most a command with its payload may take. HAProxy 2.6 gathers a payload in its CLI buffer
 * (tune.bufsize, 16,384 bytes): a larger one is refused, and one of exactly 16,383 bytes makes its
 * CLI loop until the process aborts itself (every connection of the proxy dropped). A command above
 * this limit is not sent: the caller's change goes through a reload, which reads the files instead.
 */
export const CLI_REQUEST_LIMIT = 12 * 1024;

/** Sends one command line and returns HAProxy's whole answer. */
export async function cliCommand(path: string, command: string, o: CliOptions = {}): Promise<string> {
  if (/[\r\n]/.test(command)) throw new Error(`a CLI command must be one line: ${JSON.stringify(command)}`);
  if (o.payload !== undefined && (o.payload === "" || /\r|\n\n|^\n|\n$/.test(o.payload))) {
    throw new Error(`a CLI payload must be non-empty lines: ${JSON.stringify(o.payload.slice(0, 60))}`);
  }
  const request = new TextEncoder().encode(
    o.payload === undefined ? `${command}\n` : `${command} <<\n${o.payload}\n\n`,
  );
  if (request.length > CLI_REQUEST_LIMIT) {
    throw new Error(
      `"${command.slice(0, 80)}" with its payload is ${request.length} bytes, more than HAProxy's command buffer ` +
        `takes safely (${CLI_REQUEST_LIMIT}): not sent`,
    );
  }
  const timeoutMs = o.timeoutMs ?? 10_000;
  o.signal?.throwIfAborted();
  const deadline = new AbortController();
  const timer = timeoutMs > 0
    ? setTimeout(
      () => deadline.abort(new Error(`no answer from ${path} to "${command}" within ${timeoutMs} ms`)),
      timeoutMs,
    )
    : undefined;
  const stop = o.signal ? AbortSignal.any([o.signal, deadline.signal]) : deadline.signal;
  let conn: Deno.UnixConn | null = null;
  const onAbort = () => conn?.close();
  stop.addEventListener("abort", onAbort, { once: true });
  try {
    conn = await connect(path, o.connectRetryMs ?? 0, stop);
    for (let done = 0; done < request.length;) done += await conn.write(request.subarray(done));
    await conn.closeWrite();
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    stop.throwIfAborted();
    const out = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
    let at = 0;
    for (const c of chunks) (out.set(c, at), at += c.length);
    return new TextDecoder().decode(out);
  } catch (err) {
    stop.throwIfAborted();
    throw err;
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", onAbort);
    if (!stop.aborted) conn?.close();
  }
}

async function connect(path: string, retryMs: number, stop: AbortSignal): Promise<Deno.UnixConn> {
  const until = performance.now() + retryMs;
  for (;;) {
    stop.throwIfAborted();
    try {
      const conn = await Deno.connect({ transport: "unix", path });
      if (stop.aborted) conn.close();
      return conn;
    } catch (err) {
      const away = err instanceof Deno.errors.ConnectionRefused || err instanceof Deno.errors.NotFound;
      if (!away || performance.now() >= until) throw err;
      await pause(50, stop);
    }
  }
}
