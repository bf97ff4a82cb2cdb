/**
 * @module bench/http_probe
 * One plain HTTP request through a proxy under test, as the convergence benches make it: the status
 * and the name the echo backend answered with (null: not a backend's answer), never an exception
 * (a refused or timed-out request is status 0); and the wait until an answer is the expected one.
 */
import http from "node:http";

export interface ProbeAnswer {
  status: number;
  backend: string | null;
}

export function probe(
  port: number,
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, path, headers: { host, ...headers }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => {
        let backend: string | null = null;
        try {
          backend = JSON.parse(body).name ?? null;
        } catch { /* not a backend's answer */ }
        resolve({ status: res.statusCode ?? 0, backend });
      });
      res.on("error", () => resolve({ status: 0, backend: null }));
    });
    req.setTimeout(5000, () => req.destroy());
    req.on("error", () => resolve({ status: 0, backend: null }));
    req.end();
  });
}

/** Milliseconds from `t0` until `ask()` gives an answer `ok` accepts (polled every 2 ms, at most 30 s). */
export async function msUntil(
  t0: number,
  ask: () => Promise<ProbeAnswer>,
  ok: (a: ProbeAnswer) => boolean,
  what = "the expected answer",
): Promise<number> {
  for (;;) {
    if (ok(await ask())) return performance.now() - t0;
    if (performance.now() - t0 > 30_000) throw new Error(`no convergence to ${what} within 30 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
