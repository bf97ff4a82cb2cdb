import assert from "node:assert/strict";
import { runExporter, startExporter } from "../../lib/exporter/command.ts";
import { UsageError } from "../../lib/common/errors.ts";
import { type ExporterSettings, parseExporterFlags } from "../../lib/flags/exporter_settings.ts";
import { readExposition, sendTraffic, settlesWithin, startSilentServer, startStatsProxy } from "./helpers.ts";

function settingsFor(argv: string[]): ExporterSettings {
  const s = parseExporterFlags(argv);
  assert.notEqual(s, "help");
  return s as ExporterSettings;
}

Deno.test("exporter command: serves a real haproxy's metrics at the telemetry path", async () => {
  await using proxy = await startStatsProxy();
  await sendTraffic(proxy, 6);
  const settings = settingsFor([
    `--proxy.scrape-uri=${proxy.statsUrl}`,
    "--proxy.server-metric-fields=7,17",
    "--listen-address=127.0.0.1:0",
    "--telemetry-path=/stats/metrics",
  ]);
  await using exporter = startExporter(settings);
  assert.equal(exporter.url, `http://127.0.0.1:${exporter.port}/stats/metrics`);
  const res = await fetch(exporter.url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  assert.match(text, /^# TYPE haproxy_server_sessions_total counter$/m);
  assert.match(text, /^# TYPE haproxy_up gauge$/m);
  const samples = readExposition(text);
  assert.equal(samples.get("haproxy_up"), 1);
  assert.ok(samples.get("process_resident_memory_bytes")! > 0, "the exporter's own process metrics");
  assert.equal(samples.get('haproxy_backend_sessions_total{backend="app"}'), 6);
  assert.equal(samples.get('haproxy_server_sessions_total{backend="app",server="b"}'), 3);
  assert.equal(samples.has('haproxy_server_bytes_in_total{backend="app",server="b"}'), false);
  const landing = await fetch(`http://127.0.0.1:${exporter.port}/`);
  assert.match(await landing.text(), /href="\/stats\/metrics"/);
  const missing = await fetch(`http://127.0.0.1:${exporter.port}/metrics`);
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
});

Deno.test("exporter command: a silent stats endpoint still answers the scrape, with haproxy_up 0", async () => {
  const silent = startSilentServer();
  try {
    const exporter = startExporter({
      scrapeUri: `http://127.0.0.1:${silent.port}/;csv`,
      serverMetricFields: [4],
      timeoutMs: 250,
      listenAddress: "127.0.0.1:0",
      telemetryPath: "/metrics",
    });
    try {
      const text = await settlesWithin(fetch(exporter.url).then((r) => r.text()), 30_000, "the scrape");
      assert.equal(readExposition(text).get("haproxy_up"), 0);
    } finally {
      await exporter.close();
    }
  } finally {
    await silent.close();
  }
});

Deno.test("exporter command: runExporter serves until the signal aborts; bad listen address is a usage error", async () => {
  const stop = new AbortController();
  const settings = settingsFor(["--listen-address=127.0.0.1:0", "--proxy.scrape-uri=unix:/nonexistent/stats.sock"]);
  const running = runExporter(settings, stop.signal);
  stop.abort("test done");
  await running;
  assert.throws(
    () => startExporter({ ...settings, listenAddress: "localhost" }),
    (err: unknown) =>
      err instanceof UsageError && /invalid value "localhost" for --listen-address: give host:port/.test(err.message),
  );
});

Deno.test("exporter flags: defaults mirror the run options; values are checked", () => {
  assert.deepEqual(parseExporterFlags([]), {
    scrapeUri: "http://127.0.0.1:56789/;csv",
    serverMetricFields: [2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 18, 21, 24, 33, 35, 38, 39, 40, 41, 42, 43, 44],
    timeoutMs: 5000,
    listenAddress: ":56790",
    telemetryPath: "/metrics",
  });
  const s = settingsFor([
    "--proxy.scrape-uri",
    "unix:/run/haproxy/stats.sock",
    "--proxy.server-metric-fields=17,4,4",
    "--proxy.timeout=1m30s",
  ]);
  assert.equal(s.scrapeUri, "unix:/run/haproxy/stats.sock");
  assert.deepEqual(s.serverMetricFields, [4, 17]);
  assert.equal(s.timeoutMs, 90_000);
  assert.deepEqual(settingsFor(["--proxy.server-metric-fields="]).serverMetricFields, []);
  assert.equal(settingsFor(["--listen-address=[::1]:9101"]).listenAddress, "[::1]:9101");
  assert.equal(parseExporterFlags(["-h"]), "help");
  const bad: [string[], RegExp][] = [
    [["--proxy.server-metric-fields=4,99"], /--proxy\.server-metric-fields: 99 is not a server metric field/],
    [["--proxy.server-metric-fields=4,-1"], /--proxy\.server-metric-fields: "-1" is not a field number/],
    [["--proxy.server-metric-fields=0,1"], /--proxy\.server-metric-fields: 0 is not a server metric field/],
    [["--proxy.timeout=5"], /--proxy\.timeout/],
    [["--proxy.timeout=-1s"], /--proxy\.timeout: must not be negative/],
    [["--proxy.scrape-uri=ftp://x/"], /--proxy\.scrape-uri: give an http\(s\) URL/],
    [["--proxy.scrape-uri=unix:relative.sock"], /--proxy\.scrape-uri/],
    [["--listen-address=56790"], /invalid value "56790" for --listen-address: give host:port/],
    [["--listen-address=:70000"], /--listen-address/],
    [["--listen-address=::1:80"], /--listen-address/],
    [["--telemetry-path=metrics"], /--telemetry-path: give a URL path starting with \//],
    [["--web.listen-address=:1"], /unknown option --web\.listen-address/],
    [["extra"], /exporter takes no arguments/],
  ];
  for (const [argv, message] of bad) {
    assert.throws(() => parseExporterFlags(argv), (e: unknown) => e instanceof UsageError && message.test(e.message));
  }
});
