/**
 * `deno task bench rollout`: a rolling update of the controller's proxy Deployment under steady
 * load in the real single-node cluster (lib/dev/localnode/rollout.ts: 4 clients inside the cluster's
 * network, 2 on keep-alive connections, 2 on a new connection per request, through the proxy
 * Service's cluster IP; a reused connection closed before any response byte is retried once, as
 * real clients do for idempotent requests, and counted apart).
 * - `rollout.failed_requests`: requests without a complete 200 answer during the rollout (goal 0);
 * - `rollout.requests_sent`, `rollout.retried_requests`;
 * - `rollout.duration`: from the restart to the last old pod gone (includes the 10 s drain).
 * Needs root (containerd, runc, kubelet).
 */
import { buildImages } from "../lib/dev/images/build.ts";
import { startCluster } from "../lib/dev/localnode/mod.ts";
import { proxiedEcho, rolloutRestart, startLoad } from "../lib/dev/localnode/rollout.ts";
import { log } from "../lib/log/logger.ts";
import { figureList } from "./figures.ts";

const { figures, fig } = figureList();

log.configure({ level: "warn" });
const dir = await Deno.makeTempDir({ prefix: "ic-rollout-bench-" });
try {
  const images = await buildImages(dir, () => {});
  await using cluster = await startCluster({ images: images.map((i) => i.archive), say: () => {} });
  await using proxied = await proxiedEcho(cluster, "rollout-bench");
  const load = await startLoad(cluster, `http://${proxied.clusterIP}/bench`, { host: "web.example" });
  const t = performance.now();
  let duration = 0;
  try {
    await rolloutRestart(cluster, "rollout-bench", proxied.name);
    duration = (performance.now() - t) / 1000;
  } finally {
    const result = await load.stop();
    console.error(`bench: load ${JSON.stringify(result)}`);
    fig("rollout.failed_requests", "requests", result.failed);
    fig("rollout.requests_sent", "requests", result.sent);
    fig("rollout.retried_requests", "requests", result.retried);
  }
  fig("rollout.duration", "s", duration);
} finally {
  await Deno.remove(dir, { recursive: true });
}
console.log(JSON.stringify(figures));
