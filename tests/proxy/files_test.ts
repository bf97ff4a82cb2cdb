import assert from "node:assert/strict";
import { join } from "node:path";
import { parseSecretRefs, PEM_FILE, readTextOrNull, tlsSecretPem, writeFileAtomic } from "../../lib/proxy/files.ts";
import { testCertificate } from "./fixtures.ts";

Deno.test("writeFileAtomic writes, replaces, keeps the mode and leaves no temporary file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-proxy-files-" });
  try {
    const path = join(dir, "a_b.pem");
    assert.equal(await writeFileAtomic(path, "one\n", { mode: 0o600 }), true);
    assert.equal(await Deno.readTextFile(path), "one\n");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal(await writeFileAtomic(path, "one\n", { mode: 0o600 }), false, "same content: nothing written");
    assert.equal(await writeFileAtomic(path, "two\n", { mode: 0o600 }), true);
    assert.equal(await Deno.readTextFile(path), "two\n");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    // A mode change alone is a change.
    assert.equal(await writeFileAtomic(path, "two\n", { mode: 0o644 }), true);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o644);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, ["a_b.pem"]);
    assert.equal(await readTextOrNull(join(dir, "missing")), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic: a concurrent reader sees the old or the new content, never a mix", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-proxy-files-" });
  try {
    const path = join(dir, "haproxy.cfg");
    const a = "a".repeat(256 * 1024);
    const b = "b".repeat(256 * 1024);
    await writeFileAtomic(path, a);
    let stop = false;
    let reads = 0;
    const reader = (async () => {
      while (!stop) {
        const text = await Deno.readTextFile(path);
        assert.ok(text === a || text === b, `torn read of ${text.length} bytes`);
        reads++;
      }
    })();
    for (let i = 0; i < 40; i++) await writeFileAtomic(path, i % 2 ? a : b);
    stop = true;
    await reader;
    assert.ok(reads > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic fails cleanly when the directory does not exist", async () => {
  await assert.rejects(writeFileAtomic("/nonexistent-ic-dir/x", "x"), Deno.errors.NotFound);
});

Deno.test("parseSecretRefs accepts the contract's shape and refuses unsafe entries", () => {
  const ok = parseSecretRefs(JSON.stringify([
    { file: "ns_z.example.pem", namespace: "ns", name: "z.example" },
    { file: "ns_a.pem", namespace: "ns", name: "a" },
  ]));
  assert.deepEqual(ok.map((r) => r.file), ["ns_a.pem", "ns_z.example.pem"]);
  assert.deepEqual(parseSecretRefs(""), []);
  assert.deepEqual(parseSecretRefs("[]"), []);
  const bad: unknown[] = [
    {},
    [{ file: "../x_y.pem", namespace: "x", name: "y" }],
    [{ file: "x_y.pem", namespace: "x", name: "Y" }],
    [{ file: "x_z.pem", namespace: "x", name: "y" }],
    [{ file: "x_y.pem\n", namespace: "x", name: "y" }],
    [{ file: "x_y.pem", namespace: "x.y", name: "y" }],
    [{ file: "x_y/..pem", namespace: "x", name: "y/." }],
    [{ file: "x_y.pem", namespace: "x", name: "y" }, { file: "x_y.pem", namespace: "x", name: "y" }],
    [null],
    ["x_y.pem"],
  ];
  for (const b of bad) {
    assert.throws(() => parseSecretRefs(JSON.stringify(b)), /^Error: secrets\.json/, JSON.stringify(b));
  }
  assert.throws(() => parseSecretRefs("{not json"), /not JSON/);
});

Deno.test("PEM_FILE is the contract's anchored pattern", () => {
  for (const good of ["a_b.pem", "ns-1_my.cert-2.pem", "0_0.pem"]) assert.ok(PEM_FILE.test(good), good);
  for (const bad of ["_b.pem", "a_.pem", "a_b.pem\n", "a/b_c.pem", "A_b.pem", "a_b.pem.x", "a-_b.pem", ".._b.pem"]) {
    assert.ok(!PEM_FILE.test(bad), bad);
  }
});

Deno.test("tlsSecretPem: cert chain then key, only from kubernetes.io/tls Secrets with PEM data", async () => {
  const { certPem, keyPem } = await testCertificate("site.test");
  const ref = { file: "ns_site.pem", namespace: "ns", name: "site" };
  const data = { "tls.crt": btoa(certPem), "tls.key": btoa(keyPem) };
  const pem = tlsSecretPem(ref, { type: "kubernetes.io/tls", data });
  assert.equal(pem, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`);
  assert.ok(pem.indexOf("BEGIN CERTIFICATE") < pem.indexOf("PRIVATE KEY"));
  assert.throws(() => tlsSecretPem(ref, { type: "Opaque", data }), /not kubernetes.io\/tls/);
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { "tls.crt": data["tls.crt"] } }),
    /tls.key/,
  );
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.crt": btoa("hello") } }),
    /no PEM certificate/,
  );
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.key": btoa(certPem) } }),
    /no PEM private key/,
  );
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.crt": "%%%" } }),
    /not base64/,
  );
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.crt": btoa(certPem + "\x00") } }),
    /non-PEM/,
  );
});
