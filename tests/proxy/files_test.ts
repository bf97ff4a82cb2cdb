import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CA_FILE,
  caSecretPem,
  CONFIGMAP_CA_FILE,
  parseSecretRefs,
  PEM_FILE,
  readTextOrNull,
  secretContents,
  type SecretRef,
  tlsSecretPem,
  writeFileAtomic,
} from "../../lib/proxy/files.ts";
import { parseHtpasswd } from "../../lib/render/secret_content.ts";
import { testCertificate } from "./fixtures.ts";
import { GARBAGE_CERT } from "../pki/materials.ts";

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
    [{ kind: "ca", file: "x_y.pem", namespace: "x", name: "y" }],
    [{ kind: "ca", file: "x_y.ca.pem", namespace: "x", name: "y" }],
    [{ kind: "htpasswd", file: "x_y.pem", namespace: "x", name: "y" }],
    [{ kind: "opaque", file: "x_y.pem", namespace: "x", name: "y" }],
    [{ kind: "htpasswd", namespace: "x", name: "y" }, { kind: "htpasswd", namespace: "x", name: "y" }],
  ];
  for (const b of bad) {
    assert.throws(() => parseSecretRefs(JSON.stringify(b)), /^Error: secrets\.json/, JSON.stringify(b));
  }
  assert.throws(() => parseSecretRefs("{not json"), /not JSON/);
});

Deno.test("parseSecretRefs: kinds tls (default), ca and htpasswd; one Secret may be listed once per kind", () => {
  const refs = parseSecretRefs(JSON.stringify([
    { file: "ns_a.pem", namespace: "ns", name: "a" },
    { kind: "ca", file: "ns_a_ca.pem", namespace: "ns", name: "a" },
    { kind: "htpasswd", namespace: "ns", name: "a" },
    { kind: "tls", file: "ns_a.ca.pem", namespace: "ns", name: "a.ca" },
  ]));
  assert.deepEqual(refs.map((r) => [r.kind, r.file]), [
    ["ca", "ns_a_ca.pem"],
    ["htpasswd", null],
    ["tls", "ns_a.ca.pem"],
    ["tls", "ns_a.pem"],
  ]);
  // a TLS Secret named `a.ca` and the CA Secret `a` never share a file
  assert.ok(CA_FILE.test("ns_a_ca.pem") && !PEM_FILE.test("ns_a_ca.pem") && !CA_FILE.test("ns_a.ca.pem"));
});

const HASHES = {
  bcrypt: "$2y$05$" + "a".repeat(53),
  sha512: "$6$saltsalt$" + "b".repeat(86),
  sha256: "$5$rounds=5000$salt$" + "c".repeat(43),
  md5: "$1$salt$" + "d".repeat(22),
};

Deno.test("parseHtpasswd: crypt(3) hashes kept; $apr1$, other hashes, bad user names and a second line refused by name", () => {
  const text = [
    "# comment",
    `alice:${HASHES.bcrypt}`,
    `bob:${HASHES.sha512}\r`,
    `carol:${HASHES.sha256}`,
    `dave:${HASHES.md5}`,
    "",
    `eve:$apr1$salt$${"e".repeat(22)}`,
    "frank:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
    "grace:plain",
    `alice:${HASHES.md5}`,
    `bad user:${HASHES.md5}`,
    `mallory:${HASHES.md5}' } || TRUE { '`,
    `quote':${HASHES.md5}`,
    "no-colon",
  ].join("\n");
  const { users, refused } = parseHtpasswd(text);
  assert.deepEqual(users.map((u) => u.user), ["alice", "bob", "carol", "dave"]);
  assert.equal(users[1].hash, HASHES.sha512);
  assert.deepEqual(refused, [
    "user eve: $apr1$ (Apache MD5) is not supported by the proxy's crypt(3); regenerate with htpasswd -B (bcrypt)",
    "user frank: the hash is not bcrypt ($2y$), SHA-crypt ($5$, $6$) or MD5-crypt ($1$)",
    "user grace: the hash is not bcrypt ($2y$), SHA-crypt ($5$, $6$) or MD5-crypt ($1$)",
    "user alice: listed twice; the first line counts",
    'line 11: not "user:hash" with a user name of letters, digits and ._@+-',
    "user mallory: the hash is not bcrypt ($2y$), SHA-crypt ($5$, $6$) or MD5-crypt ($1$)",
    'line 13: not "user:hash" with a user name of letters, digits and ._@+-',
    'line 14: not "user:hash" with a user name of letters, digits and ._@+-',
  ]);
  for (const r of refused) assert.ok(!r.includes("$2y$05$") && !r.includes("eeee"), "no hash in a message");
});

Deno.test("secretContents: CA bundles and userlists; a missing htpasswd Secret gives an empty userlist, a missing CA is left out", async () => {
  const { certPem, keyPem } = await testCertificate("site.test");
  const refs = parseSecretRefs(JSON.stringify([
    { kind: "ca", file: "ns_ca_ca.pem", namespace: "ns", name: "ca" },
    { kind: "htpasswd", namespace: "ns", name: "users" },
    { kind: "htpasswd", namespace: "ns", name: "gone" },
  ]));
  const secrets: Record<string, { type: string; data: Record<string, string> }> = {
    ca: { type: "Opaque", data: { "ca.crt": btoa(`${certPem}\n${certPem}`) } },
    users: { type: "Opaque", data: { auth: btoa(`alice:${HASHES.bcrypt}\neve:$apr1$x$${"e".repeat(22)}\n`) } },
  };
  const warnings: string[] = [];
  const out = secretContents(
    refs,
    (r: SecretRef) => secrets[r.name] ?? null,
    (id, why) => warnings.push(`${id} ${why}`),
  );
  assert.ok(!("waiting" in out));
  assert.equal(out.pems.get("ns_ca_ca.pem"), `${certPem.trim()}\n\n${certPem.trim()}\n`);
  assert.equal(
    out.userlists,
    "userlist ul_ns_gone\n" + `userlist ul_ns_users\n    user alice password '${HASHES.bcrypt}'\n`,
  );
  assert.deepEqual(warnings.map((w) => w.slice(0, 30)), [
    "ns/gone the Secret does not ex",
    "ns/users user eve: $apr1$ (Apa",
  ]);
  assert.deepEqual(out.leftOut, []);
  // not known yet (the watch has not listed): wait
  assert.deepEqual(secretContents(refs, () => undefined, () => {}), { waiting: refs[0] });
  // a CA Secret known to be missing, or unusable, is left out with its reason; the rest is there
  const missing = secretContents(refs, (r) => r.kind === "ca" ? null : secrets.users, () => {});
  assert.ok("leftOut" in missing);
  assert.deepEqual(missing.leftOut, [{ ref: refs[0], reason: "the Secret does not exist" }]);
  assert.deepEqual([...missing.pems.keys()], []);
  assert.match(missing.userlists, /user alice/);
  const garbage = secretContents(
    refs,
    (r) => r.kind === "ca" ? { data: { "ca.crt": btoa(`${certPem}${GARBAGE_CERT}`) } } : secrets.users,
    () => {},
  );
  assert.ok("leftOut" in garbage);
  assert.match(garbage.leftOut[0].reason, /^certificate 2 of ca\.crt cannot be parsed/);
  // a CA bundle must be certificates only
  for (const bad of [`${certPem}${keyPem}`, "hello", ""]) {
    assert.throws(() => caSecretPem(refs[0], { data: { "ca.crt": btoa(bad) } }), /^Error: Secret ns\/ca: /);
  }
});

Deno.test("secretContents: the proxy judges the Secret it reads itself; a hash above the cost limits is left out of its userlist and named", () => {
  const refs = parseSecretRefs(JSON.stringify([{ kind: "htpasswd", namespace: "ns", name: "users" }]));
  // what the Secret holds when the proxy reads it, whatever the controller saw before
  const auth = [
    `alice:${HASHES.bcrypt}`,
    `mallory:$2y$16$${"m".repeat(53)}`,
    `trudy:$6$rounds=20000000$salt$${"t".repeat(86)}`,
  ].join("\n");
  const warnings: string[] = [];
  const out = secretContents(refs, () => ({ data: { auth: btoa(auth) } }), (id, why) => warnings.push(`${id} ${why}`));
  assert.ok(!("waiting" in out));
  assert.equal(out.userlists, `userlist ul_ns_users\n    user alice password '${HASHES.bcrypt}'\n`);
  assert.deepEqual(warnings.map((w) => w.replace(/;.*/, "")), [
    "ns/users user mallory: bcrypt cost 16 is above the proxy's limit of 7",
    "ns/users user trudy: SHA-crypt rounds=20000000 is above the proxy's limit of 30000",
  ]);
});

Deno.test("PEM_FILE is the contract's anchored pattern", () => {
  for (const good of ["a_b.pem", "ns-1_my.cert-2.pem", "0_0.pem"]) assert.ok(PEM_FILE.test(good), good);
  for (const bad of ["_b.pem", "a_.pem", "a_b.pem\n", "a/b_c.pem", "A_b.pem", "a_b.pem.x", "a-_b.pem", ".._b.pem"]) {
    assert.ok(!PEM_FILE.test(bad), bad);
  }
});

Deno.test("tlsSecretPem: cert chain then key, only from kubernetes.io/tls Secrets the proxy can serve", async () => {
  const { certPem, keyPem } = await testCertificate("site.test");
  const ref = { file: "ns_site.pem", namespace: "ns", name: "site" };
  const data = { "tls.crt": btoa(certPem), "tls.key": btoa(keyPem) };
  const pem = tlsSecretPem(ref, { type: "kubernetes.io/tls", data });
  assert.equal(pem, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`);
  assert.ok(pem.indexOf("BEGIN CERTIFICATE") < pem.indexOf("PRIVATE KEY"));
  assert.throws(
    () => tlsSecretPem(ref, { type: "Opaque", data }),
    /^Error: Secret ns\/site: its type is "Opaque", not kubernetes.io\/tls$/,
  );
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
    /tls\.key holds a certificate/,
  );
  const other = await testCertificate("site.test");
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.key": btoa(other.keyPem) } }),
    /^Error: Secret ns\/site: tls\.key does not match the certificate/,
  );
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.crt": "%%%" } }),
    /not base64/,
  );
  assert.throws(
    () => tlsSecretPem(ref, { type: "kubernetes.io/tls", data: { ...data, "tls.crt": btoa(certPem + "\x00") } }),
    /other than printable ASCII/,
  );
});

Deno.test("secretContents decodes a Secret object once: the same object again costs no decoding, a changed one is read", async () => {
  const one = await testCertificate("one.test");
  const two = await testCertificate("two.test");
  let reads = 0;
  /** A TLS Secret as a watch hands it out, counting how often its data is read. */
  const secret = (c: { certPem: string; keyPem: string }) => {
    const data = { "tls.crt": btoa(c.certPem), "tls.key": btoa(c.keyPem) };
    return {
      type: "kubernetes.io/tls",
      get data() {
        reads++;
        return data;
      },
    };
  };
  const refs = parseSecretRefs(JSON.stringify([{ file: "ns_site.pem", namespace: "ns", name: "site" }]));
  let current = secret(one);
  const pem = () => {
    const out = secretContents(refs, () => current, () => {});
    assert.ok("pems" in out);
    return out.pems.get("ns_site.pem")!;
  };
  assert.match(pem(), /BEGIN CERTIFICATE/);
  const first = reads;
  assert.ok(first > 0);
  for (let i = 0; i < 5; i++) assert.equal(pem(), tlsSecretPem({ namespace: "ns", name: "site" }, secret(one)));
  reads = first; // the comparisons above read fresh objects
  pem();
  assert.equal(reads, first, "the same Secret object is not decoded again");
  current = secret(two);
  assert.equal(pem(), tlsSecretPem({ namespace: "ns", name: "site" }, secret(two)));
  assert.ok(reads > first, "a changed Secret (a new object) is decoded");
  // a refused Secret is left out with its reason, and judged once per object too
  current = secret({ certPem: one.certPem, keyPem: two.keyPem });
  const leftOut = () => {
    const out = secretContents(refs, () => current, () => {});
    assert.ok("leftOut" in out && out.pems.size === 0);
    return out.leftOut.map((l) => l.reason);
  };
  const before = reads;
  const mismatch = ["tls.key does not match the certificate (the first one in tls.crt)"];
  assert.deepEqual(leftOut(), mismatch);
  const judged = reads;
  assert.ok(judged > before);
  assert.deepEqual(leftOut(), mismatch);
  assert.equal(reads, judged, "a refused Secret object is not judged again");
});

Deno.test("configmap-ca entries: a ConfigMap's ca.crt (plain text) as <ns>_<name>_configmap_ca.pem; missing or bad is left out", async () => {
  const { certPem, keyPem } = await testCertificate("site.test");
  const refs = parseSecretRefs(JSON.stringify([
    { kind: "configmap-ca", file: "ns_a_configmap_ca.pem", namespace: "ns", name: "a" },
    { kind: "ca", file: "ns_a_ca.pem", namespace: "ns", name: "a" },
  ]));
  assert.deepEqual(refs.map((r) => [r.kind, r.file]), [["ca", "ns_a_ca.pem"], [
    "configmap-ca",
    "ns_a_configmap_ca.pem",
  ]]);
  assert.ok(CA_FILE.test("ns_a_configmap_ca.pem") && CONFIGMAP_CA_FILE.test("ns_a_configmap_ca.pem"));
  assert.ok(!CONFIGMAP_CA_FILE.test("ns_a_ca.pem") && !PEM_FILE.test("ns_a_configmap_ca.pem"));
  // the file is the one the name gives, nothing else
  for (
    const file of ["ns_a_ca.pem", "ns_b_configmap_ca.pem", "../ns_a_configmap_ca.pem", null]
  ) {
    assert.throws(
      () => parseSecretRefs(JSON.stringify([{ kind: "configmap-ca", file, namespace: "ns", name: "a" }])),
      /must be "ns_a_configmap_ca\.pem"/,
    );
  }
  assert.throws(
    () =>
      parseSecretRefs(JSON.stringify([
        { kind: "configmap-ca", file: "ns_a_configmap_ca.pem", namespace: "ns", name: "a" },
        { kind: "configmap-ca", file: "ns_a_configmap_ca.pem", namespace: "ns", name: "a" },
      ])),
    /configmap-ca ConfigMap ns\/a is listed twice/,
  );
  const cm = (text: string) => ({ data: { "ca.crt": text } });
  const secret = { type: "Opaque", data: { "ca.crt": btoa(certPem) } };
  const contents = (c: { data: Record<string, string> } | null) =>
    secretContents(refs, (r) => r.kind === "configmap-ca" ? c : secret, () => {});
  const ok = contents(cm(certPem));
  assert.ok(!("waiting" in ok));
  assert.equal(ok.pems.get("ns_a_configmap_ca.pem"), `${certPem.trim()}\n`);
  assert.equal(ok.pems.get("ns_a_ca.pem"), `${certPem.trim()}\n`);
  const reason = (c: { data: Record<string, string> } | null) => {
    const out = contents(c);
    assert.ok(!("waiting" in out));
    assert.deepEqual([...out.pems.keys()], ["ns_a_ca.pem"]);
    return out.leftOut.map((l) => `${l.ref.kind} ${l.reason}`);
  };
  assert.deepEqual(reason(null), ["configmap-ca the ConfigMap does not exist"]);
  assert.deepEqual(reason({ data: {} }), ["configmap-ca there is no ca.crt"]);
  // base64 is a Secret's encoding, not a ConfigMap's: refused, never decoded
  assert.deepEqual(reason(cm(btoa(certPem))), ["configmap-ca ca.crt holds something else than PEM certificates"]);
  assert.deepEqual(reason(cm(`${certPem}${keyPem}`)), [
    "configmap-ca ca.crt holds something else than PEM certificates",
  ]);
  assert.match(reason(cm(`${certPem}${GARBAGE_CERT}`))[0], /^configmap-ca certificate 2 of ca\.crt cannot be parsed/);
});

Deno.test("secretContents: userlists past a namespace's or the proxy's check budget deny everyone, the costliest first", () => {
  // 78 bcrypt lines of cost 7: 499 ms of checks each time HAProxy loads its configuration, the most one Secret may hold.
  const auth = Array.from({ length: 78 }, (_, i) => `u${i}:$2y$07$${"a".repeat(53)}`).join("\n");
  const secret = { type: "Opaque", data: { auth: btoa(auth) } };
  const contents = (refs: { namespace: string; name: string }[]) => {
    const warnings: string[] = [];
    const parsed = parseSecretRefs(JSON.stringify(refs.map((r) => ({ kind: "htpasswd", ...r }))));
    const out = secretContents(parsed, () => secret, (id, why) => warnings.push(`${id}: ${why}`));
    assert.ok(!("waiting" in out));
    const kept = [...out.userlists.matchAll(/^userlist ul_(\S+)\n {4}user/gm)].map((m) => m[1]);
    return { kept, warnings };
  };
  // One namespace: two Secrets fit its 1,000 ms, the third denies everyone.
  const one = contents(["a", "b", "c"].map((name) => ({ namespace: "team", name })));
  assert.deepEqual(one.kept, ["team_a", "team_b"]);
  assert.equal(one.warnings.length, 1);
  assert.match(one.warnings[0], /^team\/c: the htpasswd Secrets of namespace team .* denies everyone$/);
  // Six namespaces of two each: 6 s for the proxy, over its 5 s; one namespace (the costliest, then by name) goes.
  const six = contents(
    Array.from({ length: 6 }, (_, i) => [{ namespace: `ns${i}`, name: "a" }, { namespace: `ns${i}`, name: "b" }])
      .flat(),
  );
  assert.deepEqual(six.kept, [
    "ns1_a",
    "ns1_b",
    "ns2_a",
    "ns2_b",
    "ns3_a",
    "ns3_b",
    "ns4_a",
    "ns4_b",
    "ns5_a",
    "ns5_b",
  ]);
  assert.deepEqual(six.warnings.map((w) => w.split(":")[0]), ["ns0/a", "ns0/b"]);
  // A namespace that spends more than another goes first.
  const uneven = contents([
    ...Array.from({ length: 5 }, (_, i) => [{ namespace: `ns${i}`, name: "a" }, { namespace: `ns${i}`, name: "b" }])
      .flat(),
    { namespace: "zz", name: "a" },
  ]);
  assert.deepEqual(uneven.warnings.map((w) => w.split(":")[0]), ["ns0/a", "ns0/b"]);
});
