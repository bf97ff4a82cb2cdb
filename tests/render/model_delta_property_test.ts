/**
 * Property test of lib/render/model_delta.ts (and the maps edited in place, lib/render/maps.ts):
 * random sequences of changes (Ingresses with canaries, `www` twins, passthrough, wildcards, TLS,
 * regex paths, namespaces coming and going, Services and Secrets changing, settings layers, a
 * restricted namespace), every build with a ModelMemo (deltas) must equal a build from scratch of
 * the same state (with the same previous owners), byte for byte once rendered. Fixed seeds, bounded
 * to a few seconds; longer runs: SEEDS (comma list), STEPS, N (Ingress slots), MODE (all|ina|strict|pins),
 * COUNTED (both|0|1), e.g. `STEPS=2000 SEEDS=1,2,3,4`.
 */
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import { buildModel, type ClusterLookup, ModelMemo, readFragments } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render, RenderMemo } from "../../lib/render/render.ts";
import { endpointSlice, FIXTURE_CERT, ingress, service, tlsSecret } from "./fixtures.ts";
import type { OwnershipPolicy } from "../../lib/render/host_ownership.ts";

const A = "ingress-controller.io/";
const env = (k: string, d: string) => Deno.env.get(k) ?? d;
const SEEDS = env("SEEDS", "1,2").split(",").map(Number);
const STEPS = Number(env("STEPS", "300"));
const N = Number(env("N", "60"));
const MODES = env("MODE", "all") === "all" ? ["ina", "strict", "pins"] : [env("MODE", "all")];
const COUNTED = env("COUNTED", "both") === "both" ? [false, true] : [env("COUNTED", "both") === "1"];

function caSecret(name: string, ns: string): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: ns, name },
    type: "Opaque",
    data: { "ca.crt": btoa(FIXTURE_CERT.certPem) },
  };
}

const templates = await loadTemplates(null);

for (const mode of MODES) {
  for (const counted of COUNTED) {
    for (const seed0 of SEEDS) {
      Deno.test(`model delta property: mode ${mode} counted ${counted} seed ${seed0}`, () => {
        let seed = seed0 * 7919 + (counted ? 1 : 0) + mode.length * 131;
        const rand = (n: number) => {
          seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
          return ((seed >>> 8) ^ (seed >>> 20)) % n;
        };
        const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)];
        const nss = ["t1", "t2", "t3"];
        const svcNames = ["a", "b", "c", "d"];
        const services = new Map<string, V1Service>();
        const slices = new Map<string, V1EndpointSlice[]>();
        const secrets = new Map<string, V1Secret>();
        let generation = 0;
        const setService = (ns: string, name: string) => {
          generation++;
          const k = `${ns}/${name}`;
          const r = rand(10);
          if (r === 0) services.delete(k);
          else {
            services.set(
              k,
              service(name, [
                { name: "http", port: 80, targetPort: 8080 },
                ...(r === 1 ? [] : [{ name: "alt", port: 81, targetPort: 9090 }]),
              ], ns),
            );
          }
          const s = rand(8);
          if (s === 0) slices.delete(k);
          else {
            const eps = Array.from(
              { length: rand(6) },
              () => ({ address: `10.${nss.indexOf(ns)}.${rand(4)}.${rand(5) + 1}`, ready: rand(6) !== 0 }),
            );
            if (rand(15) === 0) eps.push({ address: "127.0.0.1", ready: true });
            slices.set(k, [
              endpointSlice(name, [{ name: "http", port: 8080 }, { name: "alt", port: 9090 }], eps, { namespace: ns }),
            ]);
          }
        };
        const setSecret = (ns: string, name: string) => {
          generation++;
          const k = `${ns}/${name}`;
          if (secrets.has(k) && rand(2) === 0) secrets.delete(k);
          else secrets.set(k, name === "ca" ? caSecret(name, ns) : tlsSecret(name, ns));
        };
        for (const ns of nss) {
          for (const s of svcNames) setService(ns, s);
          setSecret(ns, "tls");
          setSecret(ns, "ca");
        }
        const lookup: ClusterLookup = {
          service: (ns, n) => services.get(`${ns}/${n}`),
          endpointSlices: (ns, n) => slices.get(`${ns}/${n}`) ?? [],
          secret: (ns, n) => secrets.get(`${ns}/${n}`),
          ...(counted ? { generation: () => generation } : {}),
        };
        const hostOf = (i: number): string | undefined => {
          const r = rand(40);
          if (r < 22) return `u${i}-${rand(30)}.ex.com`;
          if (r < 26) return `s${rand(4)}.ex.com`;
          if (r < 28) return `www.s${rand(4)}.ex.com`;
          if (r < 30) return `*.w${rand(2)}.ex.com`;
          if (r < 34) return `${pick(["a", "b", "u0-1"])}.w${rand(2)}.ex.com`;
          if (r < 37) return undefined;
          if (r < 38) return "Bad_Host";
          return `u${rand(N)}-${rand(30)}.ex.com`; // someone else's own host
        };
        const annotationSets: Record<string, string>[] = [
          { [`${A}canary`]: "true", [`${A}canary-weight`]: "30" },
          { [`${A}www-redirect`]: "true" },
          { [`${A}ssl-passthrough`]: "true" },
          { [`${A}default-backend`]: "d" },
          { [`${A}load-balance`]: "leastconn" },
          { [`${A}load-balance`]: "source" },
          { [`${A}ssl-redirect`]: "false" },
          { [`${A}force-ssl-redirect`]: "true" },
          { [`${A}path-regex`]: "true" },
          { [`${A}path-regex`]: "all" },
          { [`${A}rewrite-target`]: "/" },
          { [`${A}timeout-server`]: "7s" },
          { [`${A}client-cert-ca-secret`]: "ca" },
          { [`${A}sticky-cookie`]: "true" },
          { [`${A}error-codes`]: "503", [`${A}default-backend`]: "c" },
          { [`${A}ssl-redirect-code`]: "301" },
          { [`${A}load-balance`]: "bogus" },
        ];
        const nsOf = new Map<number, string>();
        const makeIngress = (i: number): V1Ingress => {
          if (!nsOf.has(i) || rand(10) === 0) nsOf.set(i, pick(nss));
          const ns = nsOf.get(i)!;
          const odd = rand(5) === 0;
          const annotations: Record<string, string> = {};
          if (odd) { for (let k = rand(2); k >= 0; k--) Object.assign(annotations, pick(annotationSets)); }
          const rules = Array.from({ length: 1 + (rand(4) === 0 ? 1 : 0) }, () => ({
            host: hostOf(i),
            paths: Array.from({ length: rand(8) === 0 ? 0 : 1 + rand(2) }, () => ({
              path: pick([undefined, "/", "/", "/api", "/api/", "/x", "/v[0-9]+", "rel", "/a b"]),
              pathType: pick(["Exact", "Prefix", "Prefix", "ImplementationSpecific", "Weird"]),
              service: rand(12) === 0 ? "missing" : pick(svcNames),
              port: pick<number | string>([80, 80, "http", 81, 82]),
            })),
          }));
          const host0 = rules[0].host;
          return ingress({
            namespace: ns,
            name: rand(60) === 0 ? `Bad_${i}` : `ing-${i}`,
            created: `2026-01-0${1 + rand(3)}T00:00:0${rand(3)}Z`,
            annotations: odd ? annotations : undefined,
            rules,
            tls: rand(12) === 0
              ? [{ hosts: rand(4) === 0 ? [] : host0 ? [host0] : [], secretName: pick(["tls", "tls", "none", ""]) }]
              : undefined,
            defaultBackend: rand(30) === 0 ? { service: pick(svcNames), port: 80 } : undefined,
          });
        };
        const slots: (V1Ingress | null)[] = Array.from({ length: N }, (_, i) => rand(5) === 0 ? null : makeIngress(i));
        const graveyard: V1Ingress[] = [];
        const parked = new Map<string, { i: number; o: V1Ingress }[]>();
        const policies: Record<string, OwnershipPolicy> = {
          ina: { mode: "InterNamespaceAllowed", pins: [] },
          strict: { mode: "Strict", pins: [] },
          pins: {
            mode: "Strict",
            pins: [{ host: "a.w1.ex.com", namespace: "t2" }, { host: "*.w0.ex.com", namespace: "t1" }],
          },
        };
        const ownership = policies[mode];
        const memo = new ModelMemo();
        const renderMemo = new RenderMemo();
        let previous: ReadonlyMap<string, string> | null = null;
        let last: { model: unknown; copy: unknown } | null = null;
        let order: number[] | null = null;
        let layers: { global?: Record<string, string> } = {};
        let restrict: string | null = null;
        const layerChoices: Record<string, string>[] = [
          {},
          { "ssl-redirect": "false" },
          { "load-balance": "leastconn" },
          { "path-regex": "true" },
          { "www-redirect": "true" },
        ];
        const history: string[] = [];
        for (let step = 0; step < STEPS; step++) {
          const what = rand(100);
          let note = "";
          if (what < 4) {
            const ns = pick(nss), s = pick(svcNames);
            setService(ns, s);
            note = `service ${ns}/${s}`;
          } else if (what < 6) {
            const ns = pick(nss), s = pick(["tls", "ca"]);
            setSecret(ns, s);
            note = `secret ${ns}/${s}`;
          } else if (what < 12) {
            const i = rand(N);
            if (slots[i]) graveyard.push(slots[i]!);
            slots[i] = slots[i] ? null : makeIngress(i);
            note = `toggle ${i}`;
          } else if (what < 15 && graveyard.length > 0) {
            // the very same object again
            const o = graveyard[rand(graveyard.length)];
            const i = Number(o.metadata!.name!.replace(/^\D+_?-?/, ""));
            const idx = Number.isFinite(i) && i < N ? i : rand(N);
            if (slots[idx]) graveyard.push(slots[idx]!);
            slots[idx] = o;
            note = `re-add ${idx}`;
          } else if (what < 20) {
            // status write: a copy that reads the same
            const i = rand(N);
            if (slots[i]) {
              const c = structuredClone(slots[i]!);
              c.status = { loadBalancer: { ingress: [{ ip: `10.9.9.${step % 250}` }] } };
              if (rand(2)) memo.adopt(c);
              slots[i] = c;
              note = `status ${i}`;
            }
          } else if (what < 22) {
            // a namespace's Ingresses all removed, or back
            const ns = pick(nss);
            const p = parked.get(ns);
            if (p) {
              for (const { i, o } of p) if (!slots[i]) slots[i] = o;
              parked.delete(ns);
              note = `ns back ${ns}`;
            } else {
              const gone: { i: number; o: V1Ingress }[] = [];
              slots.forEach((o, i) => {
                if (o && o.metadata!.namespace === ns) {
                  gone.push({ i, o });
                  slots[i] = null;
                }
              });
              parked.set(ns, gone);
              note = `ns gone ${ns}`;
            }
          } else if (what === 22 && rand(3) === 0) {
            layers = { global: pick(layerChoices) };
            note = `layers ${JSON.stringify(layers)}`;
          } else if (what === 23 && rand(3) === 0) {
            restrict = restrict ? null : pick(nss);
            note = `restrict ${restrict}`;
          } else if (what < 24) {
            order = rand(2) ? null : Array.from({ length: N }, (_, i) => i).sort(() => rand(3) - 1);
            note = "order";
          } else {
            const ks: number[] = [];
            for (let k = rand(3); k >= 0; k--) {
              const j = rand(N);
              slots[j] = makeIngress(j);
              ks.push(j);
            }
            note = `edit ${ks.join(",")}`;
          }
          history.push(note);
          const list = (order ?? slots.map((_, i) => i)).map((i) => slots[i]).filter((x): x is V1Ingress => x !== null);
          const input = { ingresses: list, lookup, ownership, layers, namespace: restrict };
          if (rand(10) === 0) readFragments({ ...input, memo }, 0, rand(list.length + 1));
          const fresh = buildModel({ ...input, previousOwners: previous });
          const kept = buildModel({ ...input, memo });
          const ctx = `seed ${seed0} step ${step} (${history.slice(-4).join(" | ")})`;
          assert.deepEqual(kept, fresh, ctx);
          if (last) assert.deepEqual(last.model, last.copy, `${ctx}: the model of the step before changed`);
          last = { model: kept.model, copy: structuredClone(kept.model) };
          previous = kept.owners === null ? null : new Map(kept.owners);
          if (!fresh.servable) continue;
          const want = configMapData(render(fresh.model, templates));
          const got = configMapData(render(kept.model, templates, undefined, renderMemo));
          for (const k of Object.keys(want)) {
            assert.equal((got as Record<string, string>)[k], (want as Record<string, string>)[k], `${ctx}: ${k}`);
          }
        }
        // The comparison is worth something only while most builds are deltas.
        assert.ok(memo.deltas > STEPS / 5, `only ${memo.deltas} of ${STEPS} builds were deltas`);
      });
    }
  }
}
