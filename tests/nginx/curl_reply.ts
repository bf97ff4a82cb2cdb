/**
 * @module tests/nginx/curl_reply
 * One request with curl through a proxy under test, read as a test reads it: the status and headers
 * of the last answer (after a 100 Continue), and which test server answered and what it received
 * (the JSON body of lib/dev/localenv/backend.ts) or that the proxy answered itself.
 */

export interface Reply {
  status: number;
  /** Response headers, lower-case names; repeated ones joined by `, `. */
  headers: Record<string, string>;
  /** The test server that answered (null: the proxy answered), the target and headers it received. */
  backend: string | null;
  target: string | null;
  received: Record<string, string>;
  /** curl's error when no HTTP answer came (a refused TLS handshake), else null. */
  failed: string | null;
}

/** curl with `args` (address, TLS, headers, then the URL); the body goes through `bodyFile`. */
export async function curlReply(args: string[], bodyFile: string): Promise<Reply> {
  await Deno.writeTextFile(bodyFile, "");
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--path-as-is", "--max-time", "20", "-D", "-", "-o", bodyFile, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const failed = new TextDecoder().decode(out.stderr).trim();
    return { status: 0, headers: {}, backend: null, target: null, received: {}, failed };
  }
  const blocks = new TextDecoder().decode(out.stdout).split("\r\n\r\n").filter((b) => b.startsWith("HTTP/"));
  const [statusLine, ...lines] = blocks[blocks.length - 1].split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    const k = l.slice(0, i).toLowerCase(), v = l.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  let answer: { name?: string; target?: string; headers?: Record<string, string> } = {};
  try {
    answer = JSON.parse(await Deno.readTextFile(bodyFile));
  } catch { /* the proxy answered */ }
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    backend: answer.name ?? null,
    target: answer.target ?? null,
    received: answer.headers ?? {},
    failed: null,
  };
}
