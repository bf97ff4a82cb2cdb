/**
 * One tenant's TLS Secret whose certificate is SHA-1 signed and has a subject with a T61String
 * holding a Latin-1 byte (valid DER; OpenSSL reads it as "café"): node:crypto's
 * X509Certificate#subject throws "invalid attributes" on it. That Secret is left out with a reason;
 * the other tenant's Secret gives its file (before, the whole configuration was refused for every
 * tenant: "Secret is unusable; keeping the current configuration").
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { secretContents, type SecretRef } from "../../lib/proxy/files.ts";
import { testCertificate } from "./fixtures.ts";

const here = (f: string) => Deno.readTextFileSync(fileURLToPath(new URL(f, import.meta.url)));

Deno.test("a Secret whose certificate subject node:crypto cannot print is left out, the others applied", async () => {
  const good = await testCertificate("good.test");
  const tls = (name: string, crt: string, key: string) => ({
    type: "kubernetes.io/tls",
    metadata: { namespace: "tenant", name },
    data: { "tls.crt": btoa(crt), "tls.key": btoa(key) },
  });
  const secrets: Record<string, unknown> = {
    bad: tls("bad", here("../pki/data/t61_subject.crt.pem"), here("../pki/data/t61_subject.key.pem")),
    good: tls("good", good.certPem, good.keyPem),
  };
  const refs: SecretRef[] = ["bad", "good"].map((name) => ({
    kind: "tls",
    file: `tenant_${name}.pem`,
    namespace: "tenant",
    name,
  }));
  const out = secretContents(refs, (r) => secrets[r.name] as never, () => {});
  assert.ok(!("waiting" in out));
  assert.deepEqual(out.leftOut.map((l) => l.ref.name), ["bad"]);
  assert.deepEqual([...out.pems.keys()], ["tenant_good.pem"]);
});
