/**
 * @module bench/render_bench
 * Render time (model + render, ms) for 1, 100, 1,000 and 10,000 ingresses, measured two ways:
 * `separate` renders one configuration per ingress (what the controller does: one proxy per
 * ingress, e.g. after a resync), `merged` renders all of them into one configuration (the worst
 * case for one proxy; every tenth Ingress has a TLS Secret of its own); the render alone of 10,000
 * Ingresses each with a TLS Secret of its own (`render.merged_tls_each.10000`). Also the time of
 * `haproxy -c` on the merged configuration of 1,000 ingresses. Prints the figures as a JSON array on the last line of stdout.
 */
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import { buildModel, type ClusterLookup, lookupFromLists } from "../lib/render/model.ts";
import { summarizedSecret } from "../lib/render/tls_secret.ts";
import { createCA, issueCertificate } from "../lib/pki/certs.ts";
import { loadTemplates, render } from "../lib/render/render.ts";
import { validateConfig } from "../lib/render/validate.ts";

interface Figure {
  name: string;
  unit: string;
  value: number;
}

/** One real certificate for every TLS Secret: the controller judges a Secret's content for real. */
const cert = await issueCertificate(await createCA({ commonName: "bench CA" }), {
  commonName: "host.example.com",
  usages: ["serverAuth"],
});

function cluster(n: number, tlsEvery = 10): { ingresses: V1Ingress[]; lookup: ClusterLookup } {
  const ingresses: V1Ingress[] = [];
  const services: V1Service[] = [];
  const slices: V1EndpointSlice[] = [];
  for (let i = 0; i < n; i++) {
    const ns = `ns${i % 50}`;
    const svc = `svc-${i}`;
    ingresses.push({
      metadata: { namespace: ns, name: `ing-${i}`, creationTimestamp: new Date(1_700_000_000_000 + i) },
      spec: {
        tls: i % tlsEvery === 0 ? [{ hosts: [`host-${i}.example.com`], secretName: `tls-${i}` }] : undefined,
        rules: [{
          host: `host-${i}.example.com`,
          http: {
            paths: [
              { path: "/", pathType: "Prefix", backend: { service: { name: svc, port: { name: "http" } } } },
              { path: "/api", pathType: "Exact", backend: { service: { name: svc, port: { number: 8080 } } } },
            ],
          },
        }],
      },
    });
    services.push({
      metadata: { namespace: ns, name: svc },
      spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }, { name: "api", port: 8080, targetPort: 9090 }] },
    });
    slices.push({
      metadata: { namespace: ns, name: `${svc}-x`, labels: { "kubernetes.io/service-name": svc } },
      addressType: "IPv4",
      ports: [{ name: "http", port: 8080 }, { name: "api", port: 9090 }],
      endpoints: [0, 1, 2].map((k) => ({
        addresses: [`10.${(i >> 8) & 255}.${i & 255}.${k + 1}`],
        conditions: { ready: true },
      })),
    });
  }
  // As the controller's Secret cache holds them: summaries, judged once (lib/render/tls_secret.ts).
  const secrets = ingresses.filter((_, i) => i % tlsEvery === 0).map((ing, i) =>
    summarizedSecret({
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/tls",
      metadata: { namespace: ing.metadata!.namespace!, name: `tls-${i * tlsEvery}` },
      data: { "tls.crt": btoa(cert.certPem), "tls.key": btoa(cert.keyPem) },
    }) as V1Secret
  );
  return { ingresses, lookup: lookupFromLists({ services, endpointSlices: slices, secrets }) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

const templates = await loadTemplates(null);
const figures: Figure[] = [];
let merged1000 = "";

for (const n of [1, 100, 1_000, 10_000]) {
  const { ingresses, lookup } = cluster(n);
  const runs = n === 1 ? 200 : n === 100 ? 20 : n === 1_000 ? 5 : 3;

  const separate: number[] = [];
  const mergedTimes: number[] = [];
  let bytes = 0;
  for (let r = 0; r <= runs; r++) {
    let t = performance.now();
    for (const ing of ingresses) render(buildModel({ ingresses: [ing], lookup }).model, templates);
    if (r > 0) separate.push(performance.now() - t); // run 0 warms up

    t = performance.now();
    const out = render(buildModel({ ingresses, lookup }).model, templates);
    if (r > 0) mergedTimes.push(performance.now() - t);
    bytes = out.config.length;
    if (n === 1_000) merged1000 = out.config;
  }
  figures.push({ name: `render.separate.${n}`, unit: "ms", value: round(median(separate)) });
  figures.push({ name: `render.merged.${n}`, unit: "ms", value: round(median(mergedTimes)) });
  console.error(
    `render: ${n} ingresses: separate ${round(median(separate))} ms, merged ${round(median(mergedTimes))} ms ` +
      `(${bytes} bytes of config), median of ${runs}`,
  );
}

{
  // every Ingress with a Secret of its own: what secrets.json and the crt-list cost at 10,000 Secrets
  const { ingresses, lookup } = cluster(10_000, 1);
  const model = buildModel({ ingresses, lookup }).model;
  const times: number[] = [];
  for (let r = 0; r <= 3; r++) {
    const t = performance.now();
    const out = render(model, templates);
    if (r > 0) times.push(performance.now() - t);
    if (out.secrets.length !== 10_000) throw new Error(`${out.secrets.length} Secrets listed, not 10,000`);
  }
  figures.push({ name: "render.merged_tls_each.10000", unit: "ms", value: round(median(times)) });
  console.error(`render: 10000 ingresses, a TLS Secret each: render ${round(median(times))} ms, median of 3`);
}

{
  const { ingresses, lookup } = cluster(1_000);
  const rendered = render(buildModel({ ingresses, lookup }).model, templates);
  if (rendered.config !== merged1000) throw new Error("rendering is not deterministic");
  const times: number[] = [];
  for (let r = 0; r < 3; r++) {
    const res = await validateConfig(rendered, { timeoutMs: 60_000, reuse: false });
    if (!res.ok) throw new Error(`haproxy -c failed: ${res.errors.join(" | ")}`);
    times.push(res.ms);
  }
  figures.push({ name: "haproxy_check.merged.1000", unit: "ms", value: round(median(times)) });
  console.error(`render: haproxy -c of 1000 merged ingresses: ${round(median(times))} ms`);
}

console.log(JSON.stringify(figures));
