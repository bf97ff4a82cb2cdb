import assert from "node:assert/strict";
import { createAuditor } from "../../lib/audit/auditor.ts";
import { settingsFromConfig } from "../../lib/audit/settings_from_config.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";

async function files(): Promise<{ dir: string; policy: string; webhook: string }> {
  const dir = await Deno.makeTempDir();
  const policy = `${dir}/policy.yaml`;
  const webhook = `${dir}/webhook.kubeconfig`;
  await Deno.writeTextFile(policy, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n");
  await Deno.writeTextFile(webhook, "apiVersion: v1\nkind: Config\n");
  return { dir, policy, webhook };
}

Deno.test("settings from config: release A, its unset log batching made workable", async () => {
  const f = await files();
  try {
    const s = settingsFromConfig(parseRunFlags("A", [
      `--audit-policy-file=${f.policy}`,
      `--audit-log-path=${f.dir}/audit.log`,
      "--audit-log-mode=batch",
      "--audit-log-maxsize=5",
      "--audit-log-maxbackup=3",
      "--audit-log-maxage=7",
      "--audit-log-version=audit.k8s.io/v1",
      "--audit-log-truncate-enabled",
      `--audit-webhook-config-file=${f.webhook}`,
      "--audit-webhook-initial-backoff=2s",
      "--audit-webhook-batch-max-size=50",
    ]));
    assert.equal(s.policyFile, f.policy);
    assert.deepEqual(s.log, {
      path: `${f.dir}/audit.log`,
      format: "json",
      maxSizeMB: 5,
      maxBackups: 3,
      maxAgeDays: 7,
      mode: "batch",
      version: "audit.k8s.io/v1",
      batch: {
        bufferSize: 10000,
        maxBatchSize: 1,
        maxBatchWaitMs: 0,
        throttleEnable: false,
        throttleQPS: 0,
        throttleBurst: 1,
      },
      truncate: { enabled: true, maxEventSize: 102400, maxBatchSize: 10485760 },
    });
    assert.equal(s.webhook?.configFile, f.webhook);
    assert.equal(s.webhook?.mode, "batch");
    assert.equal(s.webhook?.version, "audit.k8s.io/v1beta1");
    assert.equal(s.webhook?.initialBackoffMs, 2000);
    assert.deepEqual(s.webhook?.batch, {
      bufferSize: 10000,
      maxBatchSize: 50,
      maxBatchWaitMs: 30000,
      throttleEnable: true,
      throttleQPS: 10,
      throttleBurst: 15,
    });
    assert.equal(s.webhook?.truncate.enabled, false);
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});

Deno.test("settings from config: release B batch defaults; C blocking log and built-in webhook batching", async () => {
  const f = await files();
  try {
    const b = settingsFromConfig(parseRunFlags("B", [
      `--audit-log-path=${f.dir}/audit.log`,
      "--audit-log-mode=batch",
      "--audit-log-format=legacy",
    ]));
    assert.equal(b.policyFile, null);
    assert.equal(b.log?.format, "legacy");
    assert.equal(b.log?.version, "audit.k8s.io/v1beta1");
    assert.deepEqual(b.log?.batch, {
      bufferSize: 10000,
      maxBatchSize: 400,
      maxBatchWaitMs: 30000,
      throttleEnable: false,
      throttleQPS: 10,
      throttleBurst: 15,
    });
    assert.equal(b.log?.truncate.enabled, false);
    assert.equal(b.webhook, null);

    const c = settingsFromConfig(parseRunFlags("C", [
      `--audit-policy-file=${f.policy}`,
      "--audit-log-path=-",
      `--audit-webhook-config-file=${f.webhook}`,
      "--audit-webhook-mode=blocking",
    ]));
    assert.equal(c.log?.path, "-");
    assert.equal(c.log?.mode, "blocking");
    assert.equal(c.webhook?.mode, "blocking");
    assert.equal(c.webhook?.initialBackoffMs, 10000);
    assert.deepEqual(c.webhook?.batch, {
      bufferSize: 10000,
      maxBatchSize: 400,
      maxBatchWaitMs: 30000,
      throttleEnable: true,
      throttleQPS: 10,
      throttleBurst: 15,
    });
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});

Deno.test("settings from config: createAuditor takes a Config; no policy means disabled", async () => {
  const f = await files();
  try {
    const auditor = await createAuditor(parseRunFlags("B", [`--audit-log-path=${f.dir}/audit.log`]));
    assert.equal(auditor.enabled, false);
    await auditor.shutdown();
    const on = await createAuditor(
      parseRunFlags("C", [`--audit-policy-file=${f.policy}`, `--audit-log-path=${f.dir}/a.log`]),
    );
    assert.equal(on.enabled, true);
    await on.shutdown();
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});
