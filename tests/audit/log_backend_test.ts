import assert from "node:assert/strict";
import { createAuditor } from "../../lib/audit/auditor.ts";
import { SetupError } from "../../lib/common/errors.ts";
import { logSettings, readEvents, request, settings, writePolicy } from "./helpers.ts";

Deno.test("log backend: --audit-log-maxsize is in megabytes; every event lands in exactly one file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const policy = await writePolicy(dir, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n");
    const auditor = await createAuditor(settings(policy, {
      log: logSettings(`${dir}/audit.log`, { maxSizeMB: 1, maxBackups: 10, mode: "batch" }),
    }));
    const payload = { data: "p".repeat(100_000) };
    for (let i = 0; i < 30; i++) {
      const h = auditor.begin(request({ auditID: `big-${i}` }))!;
      h.requestBody(payload);
      await h.complete(200);
    }
    await auditor.shutdown();
    const ids: string[] = [];
    const names: string[] = [];
    for await (const e of Deno.readDir(dir)) if (e.name.startsWith("audit")) names.push(e.name);
    assert.ok(names.length >= 3, `${names.length} files`);
    for (const n of names) {
      assert.ok((await Deno.stat(`${dir}/${n}`)).size <= 1024 * 1024, n);
      for (const e of await readEvents(`${dir}/${n}`)) if (e.stage === "ResponseComplete") ids.push(e.auditID);
    }
    assert.deepEqual(ids.sort(), Array.from({ length: 30 }, (_, i) => `big-${i}`).sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("log backend: --audit-log-path - writes events to standard output", async () => {
  for (const format of ["json", "legacy"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./fixtures/stdout_auditor.ts", import.meta.url).pathname, format],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const lines = new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
    assert.equal(lines.length, 6, format);
    if (format === "json") {
      assert.deepEqual(lines.map((l) => JSON.parse(l).auditID), ["out-0", "out-0", "out-1", "out-1", "out-2", "out-2"]);
    } else {
      for (const l of lines) assert.match(l, / AUDIT: id="out-\d" stage="(RequestReceived|ResponseComplete)" /);
    }
    assert.match(new TextDecoder().decode(out.stderr), /audit enabled/);
  }
});

Deno.test("log backend: an unwritable path is a SetupError naming the option", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const policy = await writePolicy(dir, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n");
    await assert.rejects(
      createAuditor(settings(policy, { log: logSettings(`${dir}/missing/dir/audit.log`) })),
      (err: Error) =>
        err instanceof SetupError && err.message.startsWith(`--audit-log-path ${dir}/missing/dir/audit.log: `),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
