/** The `configmap-ca` entries of a proxy's `secrets.json` (lib/render/configmap_ca.ts). */
import assert from "node:assert/strict";
import {
  configMapCaEntry,
  configMapCaFile,
  configMapCaProblem,
  withConfigMapCas,
} from "../../lib/render/configmap_ca.ts";
import { parseSecretRefs } from "../../lib/proxy/files.ts";
import { createCA } from "../../lib/pki/certs.ts";

Deno.test("configMapCaEntry: what the proxy accepts for that ConfigMap; names that are not names are a bug", () => {
  const entry = configMapCaEntry("apps", "backend-ca.v2");
  assert.deepEqual(entry, {
    kind: "configmap-ca",
    file: "apps_backend-ca.v2_configmap_ca.pem",
    namespace: "apps",
    name: "backend-ca.v2",
  });
  assert.deepEqual(parseSecretRefs(JSON.stringify([entry])), [entry]);
  for (const [ns, name] of [["Apps", "ca"], ["apps", "ca_x"], ["apps", "../ca"], ["a.b", "ca"], ["apps", ""]]) {
    assert.throws(() => configMapCaFile(ns, name), /^Error: bug: ConfigMap name/);
  }
});

Deno.test("withConfigMapCas: each ConfigMap once, beside the Secrets, in the render's order", () => {
  const tls = { file: "apps_web.pem", namespace: "apps", name: "web" };
  const out = withConfigMapCas([tls], [
    { namespace: "b", name: "ca" },
    { namespace: "a", name: "ca" },
    { namespace: "b", name: "ca" },
  ]);
  assert.deepEqual(out.map((s) => `${s.kind ?? "tls"} ${s.file}`), [
    "configmap-ca a_ca_configmap_ca.pem",
    "configmap-ca b_ca_configmap_ca.pem",
    "tls apps_web.pem",
  ]);
  assert.deepEqual(withConfigMapCas([tls], []), [tls]);
});

Deno.test("configMapCaProblem: PEM certificates only, as the proxy checks them", async () => {
  const ca = (await createCA({ commonName: "a CA" })).certPem;
  assert.equal(configMapCaProblem({ data: { "ca.crt": ca } }), null);
  assert.equal(configMapCaProblem({ data: {} }), "has no key ca.crt");
  assert.equal(
    configMapCaProblem({ data: { "ca.crt": btoa(ca) } }),
    "ca.crt holds something else than PEM certificates",
  );
});
