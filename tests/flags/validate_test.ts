import assert from "node:assert/strict";
import { SetupError, UsageError } from "../../lib/common/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { CIPHER_SUITES_A, CIPHER_SUITES_B } from "../../lib/flags/table.ts";

Deno.test("batch options are checked only when their mode is batch", () => {
  // Unused: zero is fine in blocking mode (A's log defaults are zero).
  assert.equal(parseRunFlags("A", ["--audit-log-batch-max-size=0"]).get("audit-log-batch-max-size"), 0);
  assert.throws(
    () => parseRunFlags("A", ["--audit-log-mode=batch", "--audit-log-batch-max-size=0"]),
    new UsageError("invalid value 0 for --audit-log-batch-max-size: must be positive with --audit-log-mode=batch"),
  );
  assert.throws(
    () => parseRunFlags("B", ["--audit-webhook-batch-buffer-size=0"]),
    /--audit-webhook-batch-buffer-size: must be positive with --audit-webhook-mode=batch/,
  );
  assert.equal(
    parseRunFlags("B", ["--audit-webhook-mode=blocking", "--audit-webhook-batch-buffer-size=0"]).get(
      "audit-webhook-batch-buffer-size",
    ),
    0,
  );
  // Throttle values matter only with throttling on: A's log batch has it off with qps 0.
  parseRunFlags("A", ["--audit-log-mode=batch"]);
  assert.throws(
    () => parseRunFlags("A", ["--audit-log-mode=batch", "--audit-log-batch-throttle-enable"]),
    /--audit-log-batch-throttle-burst: must be positive with --audit-log-mode=batch and --audit-log-batch-throttle-enable/,
  );
  // Negative sizes are rejected whatever the mode.
  assert.throws(() => parseRunFlags("A", ["--audit-log-batch-buffer-size=-5"]), /must not be negative/);
});

Deno.test("truncation: sizes positive when enabled, event size within batch size", () => {
  assert.throws(
    () => parseRunFlags("A", ["--audit-webhook-truncate-enabled", "--audit-webhook-truncate-max-event-size=0"]),
    /must be positive with --audit-webhook-truncate-enabled/,
  );
  assert.throws(
    () =>
      parseRunFlags("A", [
        "--audit-log-truncate-enabled",
        "--audit-log-truncate-max-event-size=2000",
        "--audit-log-truncate-max-batch-size=1000",
      ]),
    /--audit-log-truncate-max-event-size: must not exceed --audit-log-truncate-max-batch-size \(1000\)/,
  );
});

Deno.test("enumerations: audit modes, formats, versions, log level", () => {
  assert.throws(() => parseRunFlags("A", ["--audit-log-mode=async"]), /must be one of batch, blocking/);
  assert.throws(
    () => parseRunFlags("C", ["--audit-log-format=yaml"]),
    /--audit-log-format: must be one of legacy, json/,
  );
  assert.equal(parseRunFlags("A", ["--audit-log-version=audit.k8s.io/v1"]).get("audit-log-version"), "audit.k8s.io/v1");
  assert.throws(() => parseRunFlags("A", ["--audit-webhook-version=v1"]), /--audit-webhook-version/);
  assert.equal(parseRunFlags("A", ["--log.level=ERROR"]).get("log.level"), "error");
  assert.throws(() => parseRunFlags("A", ["--log.level=verbose"]), /--log.level: must be one of debug/);
});

Deno.test("TLS versions and cipher suites differ between A and B", () => {
  assert.equal(parseRunFlags("A", ["--tls-min-version=VersionTLS12"]).get("tls-min-version"), "VersionTLS12");
  assert.throws(() => parseRunFlags("A", ["--tls-min-version=VersionTLS13"]), /--tls-min-version/);
  assert.equal(parseRunFlags("B", ["--tls-min-version=VersionTLS13"]).get("tls-min-version"), "VersionTLS13");
  assert.throws(() => parseRunFlags("B", ["--tls-min-version=TLS1.2"]), /"TLS1.2" for --tls-min-version/);
  assert.deepEqual(
    parseRunFlags("A", [`--tls-cipher-suites=${CIPHER_SUITES_A.join(",")}`]).get("tls-cipher-suites"),
    CIPHER_SUITES_A,
  );
  assert.deepEqual(
    parseRunFlags("B", [`--tls-cipher-suites=${CIPHER_SUITES_B.join(",")}`]).get("tls-cipher-suites"),
    CIPHER_SUITES_B,
  );
  // TLS 1.3 suite names are Go constants (B) but not in A's list.
  assert.throws(() => parseRunFlags("A", ["--tls-cipher-suites=TLS_AES_128_GCM_SHA256"]), /TLS_AES_128_GCM_SHA256/);
  assert.throws(() => parseRunFlags("B", ["--tls-cipher-suites=TLS_FAKE"]), /"TLS_FAKE" for --tls-cipher-suites/);
});

Deno.test("files that must exist; the TLS cert and key go together", () => {
  for (
    const name of ["kubeconfig", "client-ca-file", "audit-policy-file", "audit-webhook-config-file", "cloud-config"]
  ) {
    assert.throws(
      () => parseRunFlags("A", [`--${name}=/nonexistent/x`]),
      (err: Error) => err instanceof SetupError && err.message.startsWith(`--${name} "/nonexistent/x": no such file`),
      name,
    );
  }
  assert.throws(() => parseRunFlags("C", ["--tls-ca-file=/nonexistent"]), SetupError);
  assert.throws(() => parseRunFlags("A", ["--tls-cert-file=/etc/hostname"]), /given without --tls-private-key-file/);
  const c = parseRunFlags("A", ["--tls-cert-file=/etc/hostname", "--tls-private-key-file=/etc/hostname"]);
  assert.equal(c.get("tls-private-key-file"), "/etc/hostname");
  // Empty means none for the optional files.
  assert.equal(parseRunFlags("A", ["--cloud-config="]).get("cloud-config"), "");
});

Deno.test("ranges: secure port 0..65535, negative counts/ages/durations rejected", () => {
  assert.equal(parseRunFlags("A", ["--secure-port=0"]).get("secure-port"), 0);
  assert.equal(parseRunFlags("A", ["--secure-port=65535"]).get("secure-port"), 65535);
  assert.throws(() => parseRunFlags("A", ["--secure-port=65536"]), /must be between 0 and 65535/);
  assert.throws(() => parseRunFlags("A", ["--secure-port=-1"]), /--secure-port: must not be negative/);
  for (const name of ["audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize", "burst"]) {
    assert.throws(() => parseRunFlags("C", [`--${name}=-1`]), /must not be negative/, name);
  }
  assert.throws(() => parseRunFlags("A", ["--resync-period=-1m"]), /"-1m0s" for --resync-period: must not be negative/);
  assert.throws(() => parseRunFlags("A", ["--qps=NaN"]), /must be a finite number/);
  assert.throws(() => parseRunFlags("A", ["--qps=-1"]), /must not be negative/);
});
