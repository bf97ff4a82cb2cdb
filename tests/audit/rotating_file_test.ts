import assert from "node:assert/strict";
import { backupTime, parseBackupTime, RotatingFile } from "../../lib/audit/rotating_file.ts";

const day = 86_400_000;
const line = (i: number) => `event-${String(i).padStart(4, "0")}-${"x".repeat(18)}\n`; // 30 bytes

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("rotating file: rotates by size between whole lines, backups named with a UTC time, mode 0600", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let clock = Date.UTC(2026, 10, 22, 1, 0, 0);
    const f = await RotatingFile.open(
      `${dir}/audit.log`,
      { maxSizeBytes: 100, maxBackups: 0, maxAgeDays: 0 },
      () => clock += 1000,
    );
    for (let i = 0; i < 10; i++) await f.write(line(i));
    await f.close();
    const names = await listDir(dir);
    // 3 lines (90 bytes) per file: 4 files for 10 lines
    assert.deepEqual(names, [
      "audit-2026-11-22T01-00-01.000.log",
      "audit-2026-11-22T01-00-02.000.log",
      "audit-2026-11-22T01-00-03.000.log",
      "audit.log",
    ]);
    let all = "";
    for (const n of names.filter((n) => n !== "audit.log")) {
      const text = await Deno.readTextFile(`${dir}/${n}`);
      assert.ok(text.length <= 100 && text.endsWith("\n"), n);
      all += text;
      assert.equal((await Deno.stat(`${dir}/${n}`)).mode! & 0o777, 0o600, n);
    }
    all += await Deno.readTextFile(`${dir}/audit.log`);
    assert.equal(all, Array.from({ length: 10 }, (_, i) => line(i)).join(""));
    assert.equal((await Deno.stat(`${dir}/audit.log`)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rotating file: maxbackup keeps the newest backups", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let clock = Date.UTC(2026, 10, 22, 1, 0, 0);
    const f = await RotatingFile.open(
      `${dir}/audit.log`,
      { maxSizeBytes: 60, maxBackups: 2, maxAgeDays: 0 },
      () => clock += 1000,
    );
    // 2 lines per file; 12 lines = 6 files = 5 backups made, 2 kept
    for (let i = 0; i < 12; i++) await f.write(line(i));
    const backups = await f.backups();
    await f.close();
    assert.deepEqual(await listDir(dir), [...backups.map((b) => b.path.slice(dir.length + 1)).reverse(), "audit.log"]);
    assert.equal(backups.length, 2);
    assert.equal(await Deno.readTextFile(backups[0].path), line(8) + line(9), "newest backup first");
    assert.equal(await Deno.readTextFile(backups[1].path), line(6) + line(7));
    assert.equal(await Deno.readTextFile(`${dir}/audit.log`), line(10) + line(11));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rotating file: maxage deletes backups older than the limit by the time in their name", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const now = Date.UTC(2026, 10, 22, 1, 0, 0);
    const old = `audit-${backupTime(now - 10 * day)}.log`;
    const recent = `audit-${backupTime(now - 1 * day)}.log`;
    const unrelated = "audit-notatime.log";
    for (const n of [old, recent, unrelated]) await Deno.writeTextFile(`${dir}/${n}`, "x\n");
    // The file's own mtime is new: age comes from the name, not the mtime.
    let clock = now;
    const f = await RotatingFile.open(
      `${dir}/audit.log`,
      { maxSizeBytes: 60, maxBackups: 0, maxAgeDays: 3 },
      () => clock,
    );
    assert.deepEqual(await listDir(dir), [recent, unrelated, "audit.log"].sort(), "milled when opened");
    clock = now + 2.5 * day; // `recent` becomes 3.5 days old
    for (let i = 0; i < 3; i++) await f.write(line(i)); // one rotation
    await f.close();
    assert.deepEqual(await listDir(dir), [`audit-${backupTime(clock)}.log`, unrelated, "audit.log"].sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rotating file: concurrent writes are grouped but never split or interleaved within a line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let clock = Date.UTC(2026, 10, 22, 1, 0, 0);
    const f = await RotatingFile.open(
      `${dir}/a.log`,
      { maxSizeBytes: 1000, maxBackups: 0, maxAgeDays: 0 },
      () => clock += 1,
    );
    await Promise.all(Array.from({ length: 200 }, (_, i) => f.write(line(i))));
    await f.close();
    const seen: string[] = [];
    for (const n of await listDir(dir)) {
      const text = await Deno.readTextFile(`${dir}/${n}`);
      assert.ok(text.length <= 1000, `${n} within the size limit`);
      seen.push(...text.split("\n").filter(Boolean));
    }
    assert.equal(seen.length, 200);
    for (const l of seen) assert.match(l, /^event-\d{4}-x{18}$/);
    assert.equal(new Set(seen).size, 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rotating file: a partial last line from a crash is cut off on open; a line over the limit gets a file of its own", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/audit.log`, line(0) + line(1) + "event-0002-xx");
    let clock = Date.UTC(2026, 10, 22, 1, 0, 0);
    const f = await RotatingFile.open(
      `${dir}/audit.log`,
      { maxSizeBytes: 70, maxBackups: 0, maxAgeDays: 0 },
      () => clock += 1000,
    );
    await f.write(`${"y".repeat(99)}\n`);
    await f.write(line(3));
    await f.close();
    const names = await listDir(dir);
    assert.equal(names.length, 3);
    assert.equal(await Deno.readTextFile(`${dir}/${names[0]}`), line(0) + line(1));
    assert.equal(await Deno.readTextFile(`${dir}/${names[1]}`), `${"y".repeat(99)}\n`);
    assert.equal(await Deno.readTextFile(`${dir}/audit.log`), line(3));
    // A file with no newline at all is emptied.
    await Deno.writeTextFile(`${dir}/other.log`, "half a line");
    const g = await RotatingFile.open(`${dir}/other.log`, { maxSizeBytes: 0, maxBackups: 0, maxAgeDays: 0 });
    await g.write(line(4));
    await g.close();
    assert.equal(await Deno.readTextFile(`${dir}/other.log`), line(4));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rotating file: backup time format round-trips", () => {
  const t = Date.UTC(2006, 0, 2, 15, 4, 5, 7);
  assert.equal(backupTime(t), "2006-01-02T15-04-05.007");
  assert.equal(parseBackupTime("2006-01-02T15-04-05.007"), t);
  assert.equal(parseBackupTime("2006-01-02T15:04:05.007"), null);
});

Deno.test("rotating file: after a process is killed mid-write, reopening leaves only whole lines", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/audit.log`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./fixtures/crash_writer.ts", import.meta.url).pathname, path],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    await reader.read(); // "writing"
    reader.releaseLock();
    // Let it write some more, bounded: until the file passes 8 MiB or 2000 polls.
    for (let i = 0; i < 2000 && (await Deno.stat(path)).size < 8 << 20; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel();
    const f = await RotatingFile.open(path, { maxSizeBytes: 0, maxBackups: 0, maxAgeDays: 0 });
    await f.close();
    const text = await Deno.readTextFile(path);
    assert.ok(text.length === 0 || text.endsWith("\n"), "ends with a whole line");
    const lines = text.split("\n").filter(Boolean);
    assert.ok(lines.length >= 3, `${lines.length} lines survived`);
    const whole = /^\d+ a{1048576} end$/;
    for (const l of lines) assert.ok(whole.test(l), `a partial line of ${l.length} characters`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
