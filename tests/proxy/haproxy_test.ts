import assert from "node:assert/strict";
import { haproxyEnv, statsAddress } from "../../lib/proxy/haproxy.ts";

Deno.test("haproxy env: the stats listener is always on a loopback address, the traffic listeners on --bind-address", () => {
  // In a pod (--bind-address 0.0.0.0, or the pod IP) the exporter sidecar reads 127.0.0.1.
  for (const bind of ["0.0.0.0", "::", "10.244.1.7", "10.255.255.3", "fd00::7", "128.0.0.1"]) {
    assert.equal(statsAddress(bind), "127.0.0.1", bind);
  }
  // A loopback --bind-address (tests give each proxy one of its own) is kept.
  for (const bind of ["127.0.0.1", "127.104.9.33", "::1"]) assert.equal(statsAddress(bind), bind, bind);
  const env = haproxyEnv({
    bindAddress: "0.0.0.0",
    httpPort: 8080,
    httpsPort: 8443,
    statsPort: 56789,
    runtimeSocket: "/w/runtime.sock",
    certDir: "/w/certs",
  });
  assert.equal(env.IC_BIND_ADDR, "0.0.0.0");
  assert.equal(env.IC_STATS_ADDR, "127.0.0.1");
  assert.equal(env.IC_STATS_PORT, "56789");
});
