import assert from "node:assert/strict";
import { UsageError } from "../../lib/common/errors.ts";
import {
  backendFields,
  frontendFields,
  knownServerFields,
  parseServerMetricFields,
  serverFields,
  statusUp,
} from "../../lib/exporter/fields.ts";
import { parseScrapeUri } from "../../lib/exporter/stats_source.ts";
import { runTable } from "../../lib/flags/table.ts";

Deno.test("fields: haproxy_exporter's names for the well-known columns", () => {
  assert.equal(serverFields[4].name, "current_sessions");
  assert.equal(serverFields[7].name, "sessions_total");
  assert.equal(serverFields[8].name, "bytes_in_total");
  assert.equal(serverFields[17].name, "up");
  assert.equal(serverFields[38].value, "msToSeconds");
  assert.deepEqual([39, 40, 41, 42, 43, 44].map((n) => serverFields[n].code), [
    "1xx",
    "2xx",
    "3xx",
    "4xx",
    "5xx",
    "other",
  ]);
  assert.equal(frontendFields[48].name, "http_requests_total");
  assert.equal(frontendFields[79].name, "connections_total");
  assert.equal(backendFields[19].name, "current_server");
  for (const table of [frontendFields, backendFields, serverFields]) {
    for (const spec of Object.values(table)) {
      assert.equal(spec.type === "counter", spec.name.endsWith("_total"), spec.name);
    }
  }
});

Deno.test("fields: the run option's default lists known server fields only", () => {
  const def = runTable["proxy.server-metric-fields"].default.A;
  const parsed = parseServerMetricFields(def);
  assert.equal(parsed.join(","), def);
  assert.ok(parsed.every((n) => knownServerFields.includes(n)));
  assert.deepEqual(parseServerMetricFields(" 9, 8 ,8"), [8, 9]);
  assert.deepEqual(parseServerMetricFields(""), []);
  for (const bad of ["1", "4,", "4;5", "2.0", "0x4", "100"]) {
    assert.throws(
      () => parseServerMetricFields(bad),
      (e: unknown) => e instanceof UsageError && e.message.includes("--proxy.server-metric-fields"),
      bad,
    );
  }
});

Deno.test("fields: status column", () => {
  for (const up of ["UP", "UP 1/3", "OPEN", "no check", "DRAIN"]) assert.equal(statusUp(up), 1, up);
  for (const down of ["DOWN", "DOWN 1/2", "NOLB", "MAINT", "MAINT (via be/s1)", "MAINT (resolution)", "UPX", ""]) {
    assert.equal(statusUp(down), 0, down);
  }
});

Deno.test("scrape URI: http(s) stats pages and unix sockets", () => {
  assert.deepEqual(parseScrapeUri("http://127.0.0.1:56789/;csv"), { kind: "http", url: "http://127.0.0.1:56789/;csv" });
  assert.deepEqual(parseScrapeUri("https://[::1]:8443/stats;csv"), {
    kind: "http",
    url: "https://[::1]:8443/stats;csv",
  });
  assert.deepEqual(parseScrapeUri("unix:/run/haproxy/admin.sock"), { kind: "unix", path: "/run/haproxy/admin.sock" });
  assert.deepEqual(parseScrapeUri("unix:///run/haproxy.sock"), { kind: "unix", path: "/run/haproxy.sock" });
  for (const bad of ["", "127.0.0.1:56789", "ftp://h/", "unix:stats.sock", "unix:/a.sock?x=1", "http://"]) {
    assert.throws(() => parseScrapeUri(bad), UsageError, bad);
  }
});
