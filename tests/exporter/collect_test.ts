import assert from "node:assert/strict";
import { join } from "node:path";
import { HaproxyCollector } from "../../lib/exporter/collect.ts";
import { serverFields } from "../../lib/exporter/fields.ts";
import { fetchStats, parseScrapeUri } from "../../lib/exporter/stats_source.ts";
import { freePort } from "../../lib/dev/localenv/mod.ts";
import {
  csvRows,
  familyNames,
  readExposition,
  sendTraffic,
  settlesWithin,
  startSilentServer,
  startStatsProxy,
} from "./helpers.ts";

const DEFAULT_FIELDS = [2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 18, 21, 24, 33, 35, 38, 39, 40, 41, 42, 43, 44];

async function scrapeText(collector: HaproxyCollector) {
  const result = await collector.scrape();
  return { ...result, samples: readExposition(await result.registry.metrics()) };
}

Deno.test("exporter: values from a real haproxy's stats page match its CSV after traffic", async () => {
  await using proxy = await startStatsProxy();
  const N = 10;
  assert.deepEqual(await sendTraffic(proxy, N), Array(N).fill(200));
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(proxy.statsUrl),
    serverMetricFields: DEFAULT_FIELDS,
    timeoutMs: 5000,
  });
  try {
    const { up, error, samples } = await scrapeText(collector);
    assert.equal(error, null);
    assert.equal(up, true);
    assert.equal(samples.get("haproxy_up"), 1);
    // Read the CSV ourselves (no traffic in between touches web/app).
    const rows = csvRows(await fetchStats(parseScrapeUri(proxy.statsUrl), { timeoutMs: 5000 }));
    const fe = rows.get("web/FRONTEND")!;
    const be = rows.get("app/BACKEND")!;
    assert.equal(samples.get('haproxy_frontend_http_requests_total{frontend="web"}'), N);
    assert.equal(samples.get('haproxy_frontend_http_requests_total{frontend="web"}'), Number(fe[48]));
    assert.equal(samples.get('haproxy_frontend_sessions_total{frontend="web"}'), Number(fe[7]));
    assert.equal(samples.get('haproxy_frontend_bytes_in_total{frontend="web"}'), Number(fe[8]));
    assert.equal(samples.get('haproxy_frontend_http_responses_total{frontend="web",code="2xx"}'), N);
    assert.equal(samples.get('haproxy_backend_sessions_total{backend="app"}'), N);
    assert.equal(samples.get('haproxy_backend_sessions_total{backend="app"}'), Number(be[7]));
    assert.equal(samples.get('haproxy_backend_bytes_out_total{backend="app"}'), Number(be[9]));
    assert.equal(samples.get('haproxy_backend_up{backend="app"}'), 1);
    assert.equal(samples.get('haproxy_backend_current_server{backend="app"}'), 2);
    let serverSessions = 0;
    for (const server of ["a", "b"]) {
      const row = rows.get(`app/${server}`)!;
      const labels = `backend="app",server="${server}"`;
      for (const n of DEFAULT_FIELDS) {
        const spec = serverFields[n];
        const key = `haproxy_server_${spec.name}{${labels}${spec.code ? `,code="${spec.code}"` : ""}}`;
        if (row[n] === "") {
          assert.equal(samples.has(key), false, `${key}: empty in the CSV, not exported`);
          continue;
        }
        const expected = n === 17 ? (row[n] === "no check" || row[n].startsWith("UP") ? 1 : 0) : Number(row[n]);
        assert.equal(samples.get(key), n === 38 ? expected / 1000 : expected, `${key} (column ${n} = ${row[n]})`);
      }
      // Spelled out: the names and columns of haproxy_exporter (stot, bin, bout, scur, status).
      assert.equal(samples.get(`haproxy_server_sessions_total{${labels}}`), Number(row[7]));
      assert.equal(samples.get(`haproxy_server_bytes_in_total{${labels}}`), Number(row[8]));
      assert.equal(samples.get(`haproxy_server_bytes_out_total{${labels}}`), Number(row[9]));
      assert.equal(samples.get(`haproxy_server_current_sessions{${labels}}`), Number(row[4]));
      assert.equal(samples.get(`haproxy_server_http_responses_total{${labels},code="2xx"}`), N / 2);
      assert.ok(Number(row[8]) > 0);
      serverSessions += samples.get(`haproxy_server_sessions_total{${labels}}`)!;
      assert.equal(samples.get(`haproxy_server_up{${labels}}`), 1);
    }
    assert.equal(serverSessions, N);
    // Round robin over two servers, each request on its own connection.
    assert.equal(samples.get('haproxy_server_sessions_total{backend="app",server="a"}'), N / 2);
    assert.equal(proxy.backends[0].requests + proxy.backends[1].requests, N);
    assert.equal(samples.get("haproxy_exporter_scrapes_total"), 1);
    assert.equal(samples.get("haproxy_exporter_csv_parse_failures_total"), 0);
    assert.ok(samples.get("haproxy_exporter_scrape_duration_seconds")! > 0);
    // A second scrape counts and sees the same (unchanged) totals.
    const again = await scrapeText(collector);
    assert.equal(again.samples.get("haproxy_exporter_scrapes_total"), 2);
    assert.equal(again.samples.get('haproxy_backend_sessions_total{backend="app"}'), N);
  } finally {
    collector.close();
  }
});

Deno.test("exporter: only the listed server fields are exported (Runtime API socket, show stat)", async () => {
  await using proxy = await startStatsProxy();
  await sendTraffic(proxy, 4);
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(`unix:${proxy.statsSocket}`),
    serverMetricFields: [4, 7, 17],
    timeoutMs: 5000,
  });
  try {
    const { up, samples } = await scrapeText(collector);
    assert.equal(up, true);
    const serverFamilies = [...familyNames(samples)].filter((n) => n.startsWith("haproxy_server_")).sort();
    assert.deepEqual(serverFamilies, [
      "haproxy_server_current_sessions",
      "haproxy_server_sessions_total",
      "haproxy_server_up",
    ]);
    assert.equal(samples.get('haproxy_server_sessions_total{backend="app",server="a"}'), 2);
    assert.equal(samples.get('haproxy_server_sessions_total{backend="app",server="b"}'), 2);
    // Frontend and backend metrics are not filtered.
    assert.equal(samples.get('haproxy_backend_sessions_total{backend="app"}'), 4);
    assert.ok(samples.has('haproxy_frontend_http_requests_total{frontend="web"}'));
  } finally {
    collector.close();
  }
  const none = new HaproxyCollector({
    uri: parseScrapeUri(proxy.statsUrl),
    serverMetricFields: [],
    timeoutMs: 5000,
  });
  try {
    const { up, samples } = await scrapeText(none);
    assert.equal(up, true);
    assert.deepEqual([...familyNames(samples)].filter((n) => n.startsWith("haproxy_server_")), []);
  } finally {
    none.close();
  }
});

Deno.test("exporter: an unreachable stats endpoint gives haproxy_up 0", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-exporter-test-" });
  try {
    for (const uri of [`http://127.0.0.1:${freePort()}/;csv`, `unix:${join(dir, "missing.sock")}`]) {
      const collector = new HaproxyCollector({ uri: parseScrapeUri(uri), serverMetricFields: [4], timeoutMs: 2000 });
      try {
        const { up, error, samples } = await scrapeText(collector);
        assert.equal(up, false, uri);
        assert.ok(error?.startsWith(uri), `${uri}: ${error}`);
        assert.equal(samples.get("haproxy_up"), 0);
        assert.equal(samples.get("haproxy_exporter_scrapes_total"), 1);
        assert.deepEqual([...familyNames(samples)].filter((n) => /_(frontend|backend|server)_/.test(n)), []);
      } finally {
        collector.close();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exporter: a stats endpoint that never answers gives haproxy_up 0 once the timeout passes", async () => {
  const silent = startSilentServer();
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(`http://127.0.0.1:${silent.port}/;csv`),
    serverMetricFields: [4],
    timeoutMs: 300,
  });
  try {
    const { up, error, samples } = await settlesWithin(scrapeText(collector), 30_000, "the scrape");
    assert.equal(up, false);
    assert.match(error!, /no complete answer within 300ms/);
    assert.equal(samples.get("haproxy_up"), 0);
  } finally {
    collector.close();
    await silent.close();
  }
});

Deno.test("exporter: a Runtime API socket that never answers gives haproxy_up 0 once the timeout passes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-exporter-test-" });
  const path = join(dir, "silent.sock");
  const listener = Deno.listen({ transport: "unix", path });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const c of listener) conns.push(c);
    } catch {
      // closed
    }
  })();
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(`unix:${path}`),
    serverMetricFields: [],
    timeoutMs: 300,
  });
  try {
    const { up, error } = await settlesWithin(collector.scrape(), 30_000, "the scrape");
    assert.equal(up, false);
    assert.match(error!, /no complete answer within 300ms/);
  } finally {
    collector.close();
    listener.close();
    await accepting;
    for (const c of conns) c.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exporter: unreadable CSV rows and values are counted, the rest is exported", async () => {
  const header = "# pxname,svname,qcur,qmax,scur,smax,slim,stot\n";
  const good = (px: string, sv: string, type: number, stot: string) => {
    const row = Array(40).fill("");
    row[0] = px;
    row[1] = sv;
    row[4] = "3";
    row[7] = stot;
    row[17] = "UP";
    row[32] = String(type);
    return row.join(",");
  };
  const body = header + [
    good('odd"name', "BACKEND", 1, "12").replace('odd"name', '"odd""name"'),
    good("be", "s1", 2, "7"),
    good("be", "s2", 2, "x7"), // unreadable value
    'bad,"unterminated', // unreadable row
    "short,row,1",
    good("fe", "FRONTEND", 0, "5"),
  ].join("\n") + "\n";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => new Response(body));
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(`http://127.0.0.1:${server.addr.port}/;csv`),
    serverMetricFields: [4, 7],
    timeoutMs: 2000,
  });
  try {
    const first = await scrapeText(collector);
    assert.equal(first.up, true);
    assert.equal(first.parseFailures, 3);
    const s = first.samples;
    assert.equal(s.get("haproxy_exporter_csv_parse_failures_total"), 3);
    assert.equal(s.get('haproxy_backend_sessions_total{backend="odd\\"name"}'), 12);
    assert.equal(s.get('haproxy_backend_up{backend="odd\\"name"}'), 1);
    assert.equal(s.get('haproxy_server_sessions_total{backend="be",server="s1"}'), 7);
    assert.equal(s.has('haproxy_server_sessions_total{backend="be",server="s2"}'), false);
    assert.equal(s.get('haproxy_server_current_sessions{backend="be",server="s2"}'), 3);
    assert.equal(s.get('haproxy_frontend_sessions_total{frontend="fe"}'), 5);
    const second = await scrapeText(collector);
    assert.equal(second.samples.get("haproxy_exporter_csv_parse_failures_total"), 6, "counts across scrapes");
  } finally {
    collector.close();
    await server.shutdown();
  }
});

Deno.test("exporter: a stats page answering an error status gives haproxy_up 0", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("no", { status: 503 }),
  );
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(`http://127.0.0.1:${server.addr.port}/;csv`),
    serverMetricFields: [],
    timeoutMs: 2000,
  });
  try {
    const { up, error } = await collector.scrape();
    assert.equal(up, false);
    assert.match(error!, /HTTP status 503/);
  } finally {
    collector.close();
    await server.shutdown();
  }
});
