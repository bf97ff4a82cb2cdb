/**
 * @module bench/secret_summary_bench
 * What the controller's Secret cache pays per Secret: `summarizeTlsSecret` (the informer's
 * transform, lib/render/tls_secret.ts) parses the chain and the key and matches them, once per
 * Secret version, for a leaf + CA chain with an ECDSA P-256 key and with an RSA-2048 key. Prints
 * the figures (ms per Secret, median of 5 runs of 1,000) as a JSON array on the last line.
 */
import { summarizeTlsSecret } from "../lib/render/tls_secret.ts";
import { createCA, issueCertificate, type KeyAlgorithm } from "../lib/pki/certs.ts";

interface Figure {
  name: string;
  unit: string;
  value: number;
}

const figures: Figure[] = [];
for (const [name, algorithm] of [["ecdsa_p256", "ECDSA-P256"], ["rsa_2048", "RSA-2048"]] as const) {
  const ca = await createCA({ commonName: "bench CA", algorithm: algorithm as KeyAlgorithm });
  const leaf = await issueCertificate(ca, { commonName: "a.example", usages: ["serverAuth"], algorithm });
  const secret = {
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa(leaf.certPem + ca.certPem), "tls.key": btoa(leaf.keyPem) },
  };
  if (!summarizeTlsSecret(secret).valid) throw new Error(`${name}: the bench Secret is not valid`);
  const times: number[] = [];
  for (let run = 0; run <= 5; run++) {
    const t = performance.now();
    for (let i = 0; i < 1_000; i++) summarizeTlsSecret(secret);
    if (run > 0) times.push((performance.now() - t) / 1_000); // run 0 warms up
  }
  const median = times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
  figures.push({ name: `secret_summary.${name}`, unit: "ms", value: Math.round(median * 1000) / 1000 });
  console.error(`secret summary (${name}, leaf + CA): ${median.toFixed(3)} ms per Secret`);
}
console.log(JSON.stringify(figures));
