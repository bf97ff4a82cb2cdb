import assert from "node:assert/strict";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";
import { defaultSettings, settingsFromConfig } from "../../lib/serving/settings.ts";

Deno.test("settingsFromConfig: A defaults match the documented defaults", () => {
  const s = settingsFromConfig(parseRunFlags("A", []));
  assert.deepEqual({ ...s }, { ...defaultSettings });
});

Deno.test("settingsFromConfig: B ops address, C address and tls-ca-file, durations in ms", () => {
  using tmp = tempDir();
  const file = (n: string) => {
    const p = join(tmp.dir, n);
    writeFileSync(p, "");
    return p;
  };
  const [crt, key, ca] = [file("a.crt"), file("a.key"), file("ca.crt")];
  const b = settingsFromConfig(
    parseRunFlags("B", [
      "--ops-address=127.0.0.1:9000",
      "--tls-min-version=VersionTLS13",
      "--authentication-token-webhook-cache-ttl=2m",
      `--tls-sni-cert-key=${crt},${key}:*.example.com,example.com`,
    ]),
  );
  assert.equal(b.opsAddress, "127.0.0.1:9000");
  assert.equal(b.tlsMinVersion, "VersionTLS13");
  assert.equal(b.authenticationTokenWebhookCacheTtl, 120_000);
  assert.deepEqual(b.tlsSniCertKey, [{ certFile: crt, keyFile: key, names: ["*.example.com", "example.com"] }]);
  assert.deepEqual(b.authorizationAlwaysAllowPaths, []);
  const c = settingsFromConfig(parseRunFlags("C", ["--address=:8080", `--tls-ca-file=${ca}`]));
  assert.equal(c.opsAddress, ":8080");
  assert.equal(c.tlsCaFile, ca);
  assert.equal(c.http2MaxStreamsPerConnection, 0);
  assert.equal(c.tlsMinVersion, null);
  const a = settingsFromConfig(parseRunFlags("A", ["--authorization-always-allow-paths=/healthz,/readyz"]));
  assert.equal(a.opsAddress, null);
  assert.deepEqual(a.authorizationAlwaysAllowPaths, ["/healthz", "/readyz"]);
});
