import assert from "node:assert/strict";
import { HaproxyCollector } from "../../lib/exporter/collect.ts";
import { parseScrapeUri } from "../../lib/exporter/stats_source.ts";
import { startStatsProxy } from "./helpers.ts";

Deno.test("exporter: scrapes keep working across hitless reloads of haproxy", async () => {
  await using proxy = await startStatsProxy();
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(proxy.statsUrl),
    serverMetricFields: [4],
    timeoutMs: 5000,
  });
  try {
    for (let i = 0; i < 3; i++) {
      const before = await proxy.haproxy.workerPids();
      assert.equal((await collector.scrape()).up, true);
      // The master re-executes itself on reload and may drop the CLI connection.
      await proxy.haproxy.masterCommand("reload").catch(() => "");
      for (let t = 0; t < 100; t++) {
        const now = await proxy.haproxy.workerPids();
        if (now.length > 0 && !now.some((p) => before.includes(p))) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const after = await collector.scrape();
      assert.equal(after.up, true, `scrape after reload ${i + 1}: ${after.error}`);
    }
  } finally {
    collector.close();
  }
});
