import assert from "node:assert/strict";
import { HaproxyCollector } from "../../lib/exporter/collect.ts";
import { parseScrapeUri } from "../../lib/exporter/stats_source.ts";
import { parseShowProc, type ProcInfo } from "../../lib/proxy/haproxy.ts";
import { startStatsProxy } from "./helpers.ts";

Deno.test("exporter: scrapes keep working across hitless reloads of haproxy", async () => {
  await using proxy = await startStatsProxy();
  const showProc = async () => parseShowProc(await proxy.haproxy.masterCommand("show proc"));
  const collector = new HaproxyCollector({
    uri: parseScrapeUri(proxy.statsUrl),
    serverMetricFields: [4],
    timeoutMs: 5000,
  });
  try {
    for (let i = 0; i < 3; i++) {
      const before = await showProc();
      assert.equal((await collector.scrape()).up, true);
      // HAProxy 2.6 answers `reload` with nothing (the master re-executes itself); a connection it
      // drops while doing so is the only error accepted.
      const answer = await proxy.haproxy.masterCommand("reload").catch((err) => {
        if (err instanceof Deno.errors.ConnectionReset || err instanceof Deno.errors.BrokenPipe) return "";
        throw err;
      });
      assert.equal(answer.trim(), "", `reload ${i + 1} answered ${JSON.stringify(answer)}`);
      // The master has no event to wait on: read `show proc` until its reload counter moves on
      // (bounded; the master answers again once it has re-executed).
      let after: ProcInfo = before;
      for (let n = 0; n < 200 && after.master.reloads === before.master.reloads; n++) {
        await new Promise((r) => setTimeout(r, 25));
        after = await showProc().catch(() => before);
      }
      assert.equal(after.master.reloads, before.master.reloads + 1, `reload ${i + 1} happened`);
      assert.equal(after.master.failed, 0, `reload ${i + 1} did not fail`);
      assert.ok(after.workers.length > 0, "a new worker runs");
      const oldPids = before.workers.map((w) => w.pid);
      assert.ok(after.workers.every((w) => !oldPids.includes(w.pid)), `reload ${i + 1} replaced the workers`);
      const scraped = await collector.scrape();
      assert.equal(scraped.up, true, `scrape after reload ${i + 1}: ${scraped.error}`);
    }
  } finally {
    collector.close();
  }
});
