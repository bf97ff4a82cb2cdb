/**
 * Fuzz test of the renderer: hostile values (line breaks, quotes, backslash, `#`, `%[`, `${`,
 * spaces, unicode, very long strings, bad numbers) in every cluster-controlled field must never
 * change the structure of the configuration. Compared with a benign baseline, a mutated state
 * renders only sections and directives the baseline has, only lines the baseline has (slot lines:
 * only the baseline's endpoints), only map lines the baseline's map files have (each of the
 * `<key> <backend>` shape), and a rejected value produces a problem instead of config.
 * Seeded PRNG (FUZZ_SEED, FUZZ_ITERATIONS) so a failure reproduces.
 */
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render, type Rendered } from "../../lib/render/render.ts";
import { validateConfig } from "../../lib/render/validate.ts";
import { MAP_FILES, MAP_LINE } from "../../lib/render/maps.ts";
import { ANNOTATIONS, PREFIX, specOf } from "../../lib/annotations/table.ts";
import { pathRegex } from "../../lib/annotations/values.ts";
import { endpointSlice, FIXTURE_CERT, ingress, service, tlsSecret } from "./fixtures.ts";
import { defaultGlobalSettings, parseGlobalSettings } from "../../lib/controller/global_settings.ts";
import type { ProxyOptions } from "../../lib/render/proxy_options.ts";

const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 0x5eed);
const ITERATIONS = Math.min(Number(Deno.env.get("FUZZ_ITERATIONS") ?? 600), 20_000);
const HAPROXY_CHECKS = 6;
const HAPROXY_REGEX_CHECKS = 8;

/** mulberry32: small, fast, good enough to pick mutations reproducibly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FRAGMENTS = [
  "\n",
  "\r",
  "\r\n",
  "'",
  '"',
  "\\",
  "#",
  "%[",
  "%[req.hdr(host)]",
  "${",
  "${HOME}",
  " ",
  "\t",
  "é",
  "☃",
  "\u2028",
  "\0",
  "{",
  "}",
  "`",
  "\nbackend evil\n    server x 1.2.3.4:80",
  "' } || TRUE { '",
  "\n    use_backend evil if TRUE\n",
  " if TRUE",
  "\\n",
];

/** Regex syntax a path regex must not pass into HAProxy (or may, when it is harmless): inserted into a valid one. */
const REGEX_FRAGMENTS = [
  "(?i)",
  "(?#x)",
  "(?{1})",
  "(*ACCEPT)",
  "(?=",
  "\\Q",
  "\\E",
  "\\1",
  "\\x41",
  "$",
  "$)",
  "|",
  "|.*",
  "(",
  ")",
  "[",
  "]",
  "[z-a]",
  "[\\d-z]",
  "{",
  "{99999}",
  "{2,1}",
  "){9}",
  "*",
  "*+",
  "?",
  "[[:alpha:]]",
  "%[path]",
  "' '",
  "\\",
];

interface State {
  ingresses: V1Ingress[];
  services: V1Service[];
  slices: V1EndpointSlice[];
  secrets: V1Secret[];
}

function baseline(): State {
  return {
    ingresses: [
      ingress({
        name: "fuzz",
        created: "2026-01-01T00:00:00Z",
        annotations: {
          "ingress.kubernetes.io/ssl-redirect": "true",
          "ingress.kubernetes.io/load-balance": "leastconn",
          "ingress.kubernetes.io/timeout-server": "30s",
          "example.com/unrelated": "value",
          ...servedAnnotations(),
        },
        tls: [
          { hosts: ["foo.example.com", "bar.example.com"], secretName: "foo-tls" },
          { hosts: ["*.example.org"], secretName: "wild-tls" },
        ],
        defaultBackend: { service: "web", port: "http" },
        rules: [
          {
            host: "foo.example.com",
            paths: [
              { path: "/", pathType: "Prefix", service: "web", port: "http" },
              { path: "/exact", pathType: "Exact", service: "api", port: 8080 },
              { path: "/impl", pathType: "ImplementationSpecific", service: "web", port: 80 },
            ],
          },
          {
            host: "bar.example.com",
            paths: [
              { path: "/b", pathType: "Exact", service: "web", port: 80 },
              { path: "/c/", pathType: "Prefix", service: "api", port: 8080 },
            ],
          },
          { host: "*.example.org", paths: [{ path: "/w", pathType: "Prefix", service: "web", port: "http" }] },
          { host: "*.example.net", paths: [{ path: "/v", pathType: "Exact", service: "api", port: 8080 }] },
          { paths: [{ path: "/any", pathType: "Prefix", service: "web", port: 80 }] },
          { paths: [{ path: "/ex", pathType: "Exact", service: "api", port: 8080 }] },
        ],
      }),
      ingress({
        name: "second",
        created: "2026-02-01T00:00:00Z",
        rules: [{ host: "baz.example.com", paths: [{ path: "/", pathType: "Prefix", service: "api", port: 8080 }] }],
      }),
      ingress({
        name: "third",
        created: "2026-03-01T00:00:00Z",
        annotations: {
          [PREFIX + "canary"]: "true",
          [PREFIX + "canary-weight"]: "10",
          [PREFIX + "canary-header"]: "X-Canary",
          [PREFIX + "canary-header-value"]: "beta",
          [PREFIX + "canary-cookie"]: "canary",
        },
        rules: [{ host: "baz.example.com", paths: [{ path: "/", pathType: "Prefix", service: "web", port: 80 }] }],
      }),
      ingress({
        name: "regex",
        created: "2026-04-01T00:00:00Z",
        annotations: { [PREFIX + "path-regex"]: "true", [PREFIX + "rewrite-target"]: "/$2" },
        rules: [
          {
            host: "re.example.com",
            paths: [
              { path: "/re(/|$)(.*)", pathType: "ImplementationSpecific", service: "web", port: 80 },
              { path: "/v[0-9]+/\\d+(.*)", pathType: "ImplementationSpecific", service: "api", port: 8080 },
            ],
          },
          { paths: [{ path: "/any[a-z]*/(.*)", pathType: "ImplementationSpecific", service: "web", port: 80 }] },
        ],
      }),
      ingress({
        name: "pass",
        created: "2026-05-01T00:00:00Z",
        annotations: { [PREFIX + "ssl-passthrough"]: "true" },
        rules: [{ host: "pass.example.com", paths: [{ path: "/", pathType: "Prefix", service: "api", port: 8080 }] }],
      }),
    ],
    services: [
      service("web", [{ name: "http", port: 80, targetPort: "web" }]),
      service("api", [{ name: "main", port: 8080, targetPort: 9090 }]),
      service("error-pages", [{ port: 80 }]),
    ],
    slices: [
      endpointSlice("web", [{ name: "http", port: 8080 }], [{ address: "10.0.0.1" }, { address: "10.0.0.2" }]),
      endpointSlice("api", [{ name: "main", port: 9090 }], [{ address: "fd00::1" }, { address: "fd00::2" }], {
        name: "api-v6",
        addressType: "IPv6",
      }),
      endpointSlice("api", [{ name: "main", port: 9090 }], [{ address: "10.1.0.1" }, { address: "10.1.0.2" }]),
    ],
    secrets: [tlsSecret("foo-tls"), tlsSecret("wild-tls"), caSecret("backend-ca"), caSecret("clients-ca"), {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { namespace: "default", name: "web-users" },
      type: "Opaque",
      data: { auth: btoa(`alice:$2y$05$${"a".repeat(53)}\n`) },
    }],
  };
}

/** A Secret with a CA bundle (`ca.crt`) for the baseline's `backend-ca-secret` and `client-cert-ca-secret`. */
function caSecret(name: string): V1Secret {
  const crt = FIXTURE_CERT.certPem;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: "default", name },
    type: "Opaque",
    data: { "ca.crt": btoa(crt) },
  };
}

/** A crt-list line: its file, its options (`[…]`, HAProxy's per-line SSL options) and its SNI filters. */
function crtLine(line: string): { file: string; options: string; sni: string[] } {
  const m = /^(\S+)(?: (\[[^\]]*\]))?((?: \S+)*)$/.exec(line);
  if (!m) throw new Error(`not a crt-list line: ${JSON.stringify(line)}`);
  return { file: m[1], options: m[2] ?? "", sni: m[3].split(" ").filter((w) => w !== "") };
}

/** Values of the served keys that render cleanly together (their examples, where those do). */
const BASELINE_VALUES: Record<string, string | null> = {
  "rewrite-target": "/", // `$n` needs regex paths
  "rate-limit-rpm": null, // with rate-limit-rps: refused
  "ssl-redirect": null, // set by its legacy key above
  "load-balance": null,
  "timeout-server": null,
  "backend-protocol": "h2-tls", // with backend-sni
  canary: null, // the baseline's third Ingress is the canary
  "redirect-to": null, // would hide every other request rule behind the redirect (still rendered; kept simple)
  "path-regex": null, // the Ingress "regex" has regex paths
  "service-upstream": null, // the baseline routes to endpoints (its Services have no cluster IP)
  "ssl-passthrough": null, // the baseline's fourth Ingress passes its host through
};

function servedAnnotations(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of ANNOTATIONS) {
    // frontend keys belong to the global and class settings (fuzzed below), not to an Ingress of a shared proxy
    if (a.status !== "served" || a.scope === "frontend") continue;
    const v = a.key in BASELINE_VALUES ? BASELINE_VALUES[a.key] : a.example;
    if (v !== null) out[PREFIX + a.key] = v;
  }
  out[PREFIX + "redirect-to"] = "https://www.example.com/";
  return out;
}

type Kind = "string" | "number";
/** One cluster-controlled field: how to set it, and whether a hostile value there must yield a problem. */
interface Field {
  name: string;
  kind: Kind;
  problem: boolean;
  set: (s: State, v: any) => void;
  /** An annotation of the table: a hostile value its parser accepts may render different (valid) lines. */
  annotation?: string;
  /** A regex path: hostile regex syntax is inserted; an accepted value may add its own routes-regex.map line. */
  regex?: boolean;
}

const ing = (s: State) => s.ingresses[0];
const rule = (s: State, r: number) => ing(s).spec!.rules![r];
const path = (s: State, r: number, p: number) => rule(s, r).http!.paths[p];

function fields(): Field[] {
  const f: Field[] = [
    { name: "ingress namespace", kind: "string", problem: true, set: (s, v) => ing(s).metadata!.namespace = v },
    { name: "ingress name", kind: "string", problem: true, set: (s, v) => ing(s).metadata!.name = v },
    { name: "second ingress name", kind: "string", problem: true, set: (s, v) => s.ingresses[1].metadata!.name = v },
    {
      name: "annotation ssl-redirect",
      kind: "string",
      problem: true,
      set: (s, v) => ing(s).metadata!.annotations!["ingress.kubernetes.io/ssl-redirect"] = v,
    },
    {
      name: "annotation load-balance",
      kind: "string",
      problem: true,
      set: (s, v) => ing(s).metadata!.annotations!["ingress.kubernetes.io/load-balance"] = v,
    },
    {
      name: "annotation timeout-server",
      kind: "string",
      problem: true,
      set: (s, v) => ing(s).metadata!.annotations!["ingress.kubernetes.io/timeout-server"] = v,
    },
    {
      name: "unrelated annotation",
      kind: "string",
      problem: false,
      set: (s, v) => ing(s).metadata!.annotations!["example.com/unrelated"] = v,
    },
    {
      name: "annotation key",
      kind: "string",
      problem: false,
      set: (s, v) => ing(s).metadata!.annotations![v] = "true",
    },
    { name: "tls secretName", kind: "string", problem: true, set: (s, v) => ing(s).spec!.tls![0].secretName = v },
    { name: "tls host", kind: "string", problem: true, set: (s, v) => ing(s).spec!.tls![0].hosts![1] = v },
    { name: "tls wildcard host", kind: "string", problem: true, set: (s, v) => ing(s).spec!.tls![1].hosts![0] = v },
    {
      name: "default backend service",
      kind: "string",
      problem: true,
      set: (s, v) => ing(s).spec!.defaultBackend!.service!.name = v,
    },
    {
      name: "default backend port name",
      kind: "string",
      problem: true,
      set: (s, v) => ing(s).spec!.defaultBackend!.service!.port = { name: v },
    },
    { name: "secret type", kind: "string", problem: true, set: (s, v) => s.secrets[0].type = v },
    { name: "secret tls.crt", kind: "string", problem: true, set: (s, v) => s.secrets[0].data!["tls.crt"] = v },
    { name: "secret tls.key", kind: "string", problem: true, set: (s, v) => s.secrets[1].data!["tls.key"] = v },
    {
      name: "service port name",
      kind: "string",
      problem: true,
      set: (s, v) => s.services[0].spec!.ports![0].name = v,
    },
    {
      name: "service targetPort",
      kind: "string",
      problem: false,
      set: (s, v) => s.services[0].spec!.ports![0].targetPort = v,
    },
    { name: "service type", kind: "string", problem: false, set: (s, v) => s.services[1].spec!.type = v },
    {
      name: "endpoint address",
      kind: "string",
      problem: true,
      set: (s, v) => s.slices[0].endpoints![1].addresses = [v],
    },
    {
      name: "IPv6 endpoint address",
      kind: "string",
      problem: true,
      set: (s, v) => s.slices[1].endpoints![0].addresses = [v],
    },
    { name: "slice port name", kind: "string", problem: false, set: (s, v) => s.slices[0].ports![0].name = v },
    { name: "slice port number", kind: "number", problem: true, set: (s, v) => s.slices[2].ports![0].port = v },
    { name: "slice addressType", kind: "string", problem: false, set: (s, v) => s.slices[0].addressType = v },
    {
      name: "slice service label",
      kind: "string",
      problem: false,
      set: (s, v) => s.slices[0].metadata!.labels!["kubernetes.io/service-name"] = v,
    },
  ];
  for (const a of ANNOTATIONS.filter((a) => a.status === "served" && a.scope !== "frontend")) {
    f.push({
      name: `annotation ${a.key}`,
      kind: "string",
      problem: false,
      annotation: a.key,
      set: (s, v) => ing(s).metadata!.annotations![PREFIX + a.key] = v,
    });
    if (a.scope === "backend") {
      f.push({
        name: `Service annotation ${a.key}`,
        kind: "string",
        problem: false,
        annotation: a.key,
        set: (s, v) => s.services[0].metadata!.annotations = { [PREFIX + a.key]: v },
      });
    }
  }
  const regexPath = (s: State, r: number, p: number) => s.ingresses[3].spec!.rules![r].http!.paths[p];
  f.push(
    { name: "regex path", kind: "string", problem: false, regex: true, set: (s, v) => regexPath(s, 0, 0).path = v },
    { name: "regex path 2", kind: "string", problem: false, regex: true, set: (s, v) => regexPath(s, 0, 1).path = v },
    {
      name: "host-less regex path",
      kind: "string",
      problem: false,
      regex: true,
      set: (s, v) => regexPath(s, 1, 0).path = v,
    },
    {
      name: "regex Ingress rewrite-target",
      kind: "string",
      problem: false,
      annotation: "rewrite-target",
      set: (s, v) => s.ingresses[3].metadata!.annotations![PREFIX + "rewrite-target"] = v,
    },
  );
  for (const key of ["canary", "canary-weight", "canary-header", "canary-header-value", "canary-cookie"]) {
    f.push({
      name: `canary Ingress annotation ${key}`,
      kind: "string",
      problem: false,
      annotation: key,
      set: (s, v) => s.ingresses[2].metadata!.annotations![PREFIX + key] = v,
    });
  }
  baseline().ingresses[0].spec!.rules!.forEach((r, ri) => {
    f.push({ name: `rule ${ri} host`, kind: "string", problem: true, set: (s, v) => rule(s, ri).host = v });
    r.http!.paths.forEach((_, pi) => {
      const at = `rule ${ri} path ${pi}`;
      f.push(
        { name: `${at} path`, kind: "string", problem: true, set: (s, v) => path(s, ri, pi).path = v },
        { name: `${at} pathType`, kind: "string", problem: true, set: (s, v) => path(s, ri, pi).pathType = v },
        {
          name: `${at} service`,
          kind: "string",
          problem: true,
          set: (s, v) => path(s, ri, pi).backend.service!.name = v,
        },
        {
          name: `${at} port name`,
          kind: "string",
          problem: true,
          set: (s, v) => path(s, ri, pi).backend.service!.port = { name: v },
        },
        {
          name: `${at} port number`,
          kind: "number",
          problem: true,
          set: (s, v) => path(s, ri, pi).backend.service!.port = { number: v },
        },
      );
    });
  });
  return f;
}

const BENIGN = ["foo.example.com", "/path", "web", "http", "10.0.0.9", "true", "30s", "default", "*.example.com"];
const BAD_NUMBERS = [0, -1, 65536, 1.5, NaN, Infinity, 1e20, "80", "80\n", null, { n: 1 }];

function hostile(rand: () => number, kind: Kind, regex = false): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  if (kind === "number") return pick(BAD_NUMBERS);
  if (regex && rand() < 0.7) {
    let s = pick(["/re(/|$)(.*)", "/v[0-9]+/\\d+(.*)", "/a.b"]);
    for (let i = 0, n = 1 + Math.floor(rand() * 3); i < n; i++) {
      const at = 1 + Math.floor(rand() * s.length);
      s = s.slice(0, at) + pick(rand() < 0.7 ? REGEX_FRAGMENTS : FRAGMENTS) + s.slice(at);
    }
    return s;
  }
  const style = rand();
  if (style < 0.1) return pick(BENIGN).repeat(300 + Math.floor(rand() * 700)) + pick(FRAGMENTS);
  if (style < 0.15) return "a".repeat(5000 + Math.floor(rand() * 5000));
  let s = pick(BENIGN);
  const n = 1 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(rand() * (s.length + 1));
    s = s.slice(0, at) + pick(FRAGMENTS) + s.slice(at);
  }
  return s;
}

function renderState(s: State, templates: Awaited<ReturnType<typeof loadTemplates>>) {
  const lookup = lookupFromLists({ services: s.services, endpointSlices: s.slices, secrets: s.secrets });
  const built = buildModel({ ingresses: s.ingresses, lookup });
  return { ...built, rendered: render(built.model, templates) };
}

/** Section header → the set of first words of its lines. */
function structure(config: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  let current = "";
  for (const line of config.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    if (!/^\s/.test(line)) {
      current = line;
      out.set(current, out.get(current) ?? new Set());
    } else out.get(current)!.add(line.trim().split(/\s+/)[0]);
  }
  return out;
}

const SLOT = /^ {4}server s(\d+) (\S+?)( disabled)?$/;

/** A configuration line's directive (with its action for rules and timeouts): what a setting's line is. */
function head(line: string): string {
  const w = line.trim().split(/\s+/);
  return ["http-request", "http-response", "timeout"].includes(w[0]) ? `${w[0]} ${w[1]}` : w[0];
}

/** Backend variants (`…_<hash>`) and their plain backend are one backend here: settings change the hash. */
function unvariant(text: string): string {
  return text.replace(/\b(be_[a-z0-9-]+_[a-z0-9-]+_[A-Za-z0-9-]+)_[0-9a-f]{10}\b/g, "$1").replace(
    /dynamic-cookie-key '[^']*'/,
    "dynamic-cookie-key KEY",
  );
}

Deno.test("fuzz: hostile cluster values never change the structure of the configuration", async () => {
  const templates = await loadTemplates(null);
  const base = renderState(baseline(), templates);
  assert.deepEqual(base.problems, [], "the baseline is clean");
  const baseStructure = structure(unvariant(base.rendered.config));
  const baseLines = new Set(unvariant(base.rendered.config).split("\n"));
  const baseHeads = new Set([...baseLines].map(head));
  const baseEndpoints = new Set(
    [...baseLines].map((l) => SLOT.exec(l)?.[2]).filter((a): a is string => a !== undefined),
  );
  const baseCrt = base.rendered.crtList.split("\n").filter((l) => l !== "").map(crtLine);
  const baseFiles = new Set(baseCrt.map((c) => c.file));
  // without options too: a refused client-cert value leaves the hosts without the check
  const baseOptions = new Set(["", ...baseCrt.map((c) => c.options)]);
  assert.ok(baseOptions.has("[ca-file default_clients-ca_ca.pem verify optional]"), "the baseline checks clients");
  baseOptions.add("[ca-file default_clients-ca_ca.pem verify required]"); // the other value of client-cert-verify
  const baseSni = new Set(baseCrt.flatMap((c) => c.sni));
  const baseSecrets = new Set(base.rendered.secrets.map((s) => JSON.stringify(s)));
  assert.deepEqual(base.rendered.secrets.map((s) => s.kind ?? "tls"), ["ca", "ca", "htpasswd", "tls", "tls"]);
  const baseMaps = new Map(MAP_FILES.map((f) => [f, new Set(unvariant(base.rendered.maps[f]).split("\n"))]));
  assert.ok(baseMaps.get("routes-prefix.map")!.size > 2 && baseMaps.get("redirect-hosts.map")!.size > 1);
  assert.ok(baseMaps.get("routes-regex.map")!.size > 3, "the baseline has regex routes");
  assert.match(base.rendered.config, /!{ nbsrv\(be_/, "and a default-backend fallback");
  assert.match(base.rendered.config, /^ {4}http-response lua\.ic_error_page 'be_/m, "and error pages (error-codes)");
  // lines a rejected value may fall back to
  const fallbacks = new Set([
    "    balance roundrobin",
    "    default_backend ic_default_404",
    // no certificate left: the passthrough frontend closes other TLS connections
    "    tcp-request content reject if !{ var(sess.ic_pass) -m found }",
  ]);

  const rand = prng(SEED);
  const all = fields();
  const toCheck: Rendered[] = [];
  let regexChecks = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const state = baseline();
    const chosen = Array.from(
      { length: rand() < 0.8 ? 1 : 2 + Math.floor(rand() * 2) },
      () => all[Math.floor(rand() * all.length)],
    );
    const applied: string[] = [];
    /** A hostile value an annotation's parser accepts is a valid setting: its lines may differ, not its structure. */
    let validSetting = false;
    let refusedSetting = false;
    /** A hostile regex path the parser accepted: a new regex route, with its own map key. */
    let acceptedRegex = false;
    for (const field of chosen) {
      const value = hostile(rand, field.kind, field.regex);
      field.set(state, value);
      if (field.regex) {
        const ok = pathRegex.parse(value as string).ok;
        acceptedRegex ||= ok;
        validSetting ||= ok; // its rewrite line changes with it
        refusedSetting ||= !ok;
      }
      if (field.annotation) {
        const ok = specOf(field.annotation)!.value.parse(value as string).ok;
        validSetting ||= ok;
        refusedSetting ||= !ok;
      }
      applied.push(`${field.name}=${JSON.stringify(value)?.slice(0, 60)}`);
    }
    const where = `seed ${SEED} iteration ${i}: ${applied.join(", ")}`;
    const { problems, rendered } = renderState(state, templates);
    const config = unvariant(rendered.config);

    for (const [section, words] of structure(config)) {
      const baseWords = baseStructure.get(section);
      assert.ok(baseWords, `${where}: new section ${JSON.stringify(section)}`);
      for (const w of words) assert.ok(baseWords.has(w), `${where}: new directive ${w} in ${section}`);
    }
    for (const line of config.split("\n")) {
      const slot = SLOT.exec(line);
      if (slot) {
        assert.ok(slot[3] ? slot[2] === "127.0.0.1:1" : baseEndpoints.has(slot[2]), `${where}: slot ${line}`);
      } else if (validSetting || refusedSetting) {
        // a setting's lines may change with it (or, refused, with its fallback) but only as lines the baseline has kinds of
        const known = baseLines.has(line) || fallbacks.has(line) || baseHeads.has(head(line));
        assert.ok(known, `${where}: new line ${JSON.stringify(line)}`);
      } else {
        assert.ok(baseLines.has(line) || fallbacks.has(line), `${where}: new line ${JSON.stringify(line)}`);
      }
    }
    for (const line of rendered.crtList.split("\n").filter((l) => l !== "")) {
      const { file, options, sni } = crtLine(line);
      const known = baseFiles.has(file) && baseOptions.has(options) && sni.every((h) => baseSni.has(h));
      assert.ok(known, `${where}: crt-list ${line}`);
    }
    for (const s of rendered.secrets) assert.ok(baseSecrets.has(JSON.stringify(s)), `${where}: secret ${s.name}`);
    assert.deepEqual(Object.keys(rendered.maps).sort(), [...MAP_FILES].sort(), `${where}: map files`);
    for (const file of MAP_FILES) {
      const text = rendered.maps[file];
      assert.ok(text === "" || text.endsWith("\n"), `${where}: ${file} ends without a line break`);
      for (const line of text.split("\n").slice(0, -1)) {
        assert.match(line, MAP_LINE, `${where}: ${file} line ${JSON.stringify(line)}`);
        const base = baseMaps.get(file)!;
        // a setting may change a value (a variant, a redirect code), never add a key; ssl-passthrough may pass
        // a host the baseline routes
        const key = line.split(" ")[0];
        const routed = file === "passthrough.map" && validSetting &&
          [...baseMaps.get("routes-prefix.map")!].some((l) => l.startsWith(`${key}/ `));
        const known = base.has(unvariant(line)) || routed ||
          ((validSetting || refusedSetting) && [...base].some((l) => l.split(" ")[0] === key)) ||
          (acceptedRegex && file === "routes-regex.map");
        assert.ok(known, `${where}: new ${file} line ${JSON.stringify(line)}`);
      }
    }
    // with several mutations one may hide another (a skipped slice hides its bad address)
    if (chosen.length === 1 && (chosen[0].problem || refusedSetting)) {
      assert.ok(problems.length > 0, `${where}: rejected without a problem`);
    }
    for (const p of problems) {
      assert.doesNotMatch(p.message, /[\r\n\u2028]/, `${where}: multi-line message ${JSON.stringify(p.message)}`);
    }
    if (i % Math.ceil(ITERATIONS / HAPROXY_CHECKS) === 0) toCheck.push(rendered);
    // accepted hostile regexes are compiled by haproxy itself (map_reg entries, replace-path)
    else if (acceptedRegex && regexChecks++ < HAPROXY_REGEX_CHECKS) toCheck.push(rendered);
  }
  for (const [n, rendered] of toCheck.entries()) {
    const check = await validateConfig(rendered, { timeoutMs: 20_000 });
    assert.deepEqual(check.errors, [], `haproxy -c of sample ${n}`);
  }
});

Deno.test("fuzz: hostile frontend settings (global and class ConfigMaps) never change the structure of the configuration", async () => {
  const templates = await loadTemplates(null);
  // (`proxy` is a frontend key an Ingress alone sets)
  const keys = ANNOTATIONS.filter((a) => a.status === "served" && a.scope === "frontend" && !a.ingressOnly)
    .map((a) => a.key);
  assert.ok(keys.includes("accept-proxy-protocol") && keys.includes("timeout-http-request"));
  const model = buildModel({
    ingresses: baseline().ingresses,
    lookup: lookupFromLists({
      services: baseline().services,
      endpointSlices: baseline().slices,
      secrets: baseline().secrets,
    }),
  }).model;
  const options = (data: Record<string, string>, layer: "global" | "class") => {
    const global = parseGlobalSettings(layer === "global" ? data : {}, defaultGlobalSettings, "global", "ops");
    const parsed = layer === "global" ? global : parseGlobalSettings(data, global.settings, "class", "ops");
    const proxy: ProxyOptions = { ...parsed.settings.proxy, defaultCertificate: null };
    return { proxy, problems: parsed.problems };
  };
  const benign = Object.fromEntries(keys.map((k) => [k, specOf(k)!.example]));
  const base = options(benign, "global");
  assert.deepEqual(base.problems, []);
  const baseConfig = render(model, templates, base.proxy).config;
  assert.match(baseConfig, /expect-proxy layer4 if ic_proxy_trusted/);
  const baseLines = new Set(baseConfig.split("\n"));
  const baseHeads = new Set([...baseLines].map(head));
  const baseStructure = structure(baseConfig);
  const rand = prng(SEED ^ 0xf0);
  for (let i = 0; i < Math.ceil(ITERATIONS / 4); i++) {
    const key = keys[Math.floor(rand() * keys.length)];
    const value = String(hostile(rand, "string"));
    const layer = rand() < 0.5 ? "global" : "class";
    const where = `seed ${SEED} iteration ${i}: ${layer} ${key}=${JSON.stringify(value).slice(0, 60)}`;
    const { proxy, problems } = options({ ...benign, [key]: value }, layer);
    const config = render(model, templates, proxy).config;
    for (const [section, words] of structure(config)) {
      const baseWords = baseStructure.get(section);
      assert.ok(baseWords, `${where}: new section ${JSON.stringify(section)}`);
      for (const w of words) assert.ok(baseWords.has(w), `${where}: new directive ${w} in ${section}`);
    }
    for (const line of config.split("\n")) {
      assert.ok(baseLines.has(line) || baseHeads.has(head(line)), `${where}: new line ${JSON.stringify(line)}`);
    }
    if (!specOf(key)!.value.parse(value).ok) {
      assert.ok(problems.some((p) => p.key === key), `${where}: refused without a problem`);
      const { [key]: _, ...without } = benign;
      const lower = render(model, templates, options(without, layer).proxy).config;
      assert.equal(config, lower, `${where}: a refused value keeps the lower layer's`);
    }
  }
});
