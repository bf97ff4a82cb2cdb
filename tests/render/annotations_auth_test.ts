/**
 * Annotations that need Secret files beyond TLS certificates, through a real haproxy run by the
 * proxy's own Applier (with its `userlists.cfg` second `-f` file): basic auth (`auth-basic-*`,
 * htpasswd Secret → userlist), backend certificate verification (`backend-ca-secret`, CA Secret →
 * `ca-file`) and client certificates (`client-cert-*`, CA Secret → crt-list options). The
 * rendered `secrets.json` goes through the proxy's parser and `secretContents`, as in the proxy.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// bcrypt hashes as `htpasswd -B` writes them (the test machine has no htpasswd)
import bcrypt from "bcryptjs";
import { type CertifiedKey, createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { buildModel, lookupFromLists, type ModelInput } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render } from "../../lib/render/render.ts";
import { MAP_FILES, type MapFile } from "../../lib/render/maps.ts";
import { parseSecretRefs, secretContents, type TlsSecretLike } from "../../lib/proxy/files.ts";
import type { DesiredState } from "../../lib/proxy/apply.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { CRYPT_HASHES, endpointSlice, FIXTURE_CERT, ingress, service } from "./fixtures.ts";
import { proxyUnderTest, workerPid } from "../proxy/fixtures.ts";

const A = "ingress-controller.io/";

interface Secret extends TlsSecretLike {
  apiVersion: string;
  kind: string;
  metadata: { namespace: string; name: string };
}

function secret(name: string, data: Record<string, string>, type = "Opaque"): Secret {
  const enc = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)]));
  return { apiVersion: "v1", kind: "Secret", type, metadata: { namespace: "default", name }, data: enc };
}

/** Ingresses (one per host, Service `web` port 80 on `port`) with their annotations and TLS Secret. */
function objects(
  port: number,
  hosts: Record<string, Record<string, string>>,
  secrets: Secret[],
  tls: string | null = null,
): Omit<ModelInput, "allowLoopbackEndpoints"> {
  return {
    ingresses: Object.entries(hosts).map(([host, annotations], i) =>
      ingress({
        name: `ing-${i}`,
        annotations,
        tls: tls ? [{ hosts: [host], secretName: tls }] : undefined,
        rules: [{ host, paths: [{ path: "/", service: "web", port: 80 }] }],
      })
    ),
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port }], [{ address: "127.0.0.1" }])],
      // deno-lint-ignore no-explicit-any
      secrets: secrets as any,
    }),
  };
}

/** What the proxy would apply for these objects: the controller's ConfigMap data plus the files of the listed Secrets. */
async function desired(
  objs: Omit<ModelInput, "allowLoopbackEndpoints">,
  secrets: Secret[],
): Promise<{ state: DesiredState; problems: string[]; warnings: string[] }> {
  const { model, problems } = buildModel({ ...objs, allowLoopbackEndpoints: true });
  const data = configMapData(render(model, await loadTemplates(null)));
  const warnings: string[] = [];
  const contents = secretContents(
    parseSecretRefs(data["secrets.json"]),
    (ref) => secrets.find((s) => s.metadata.namespace === ref.namespace && s.metadata.name === ref.name) ?? null,
    (id, reason) => warnings.push(`${id}: ${reason}`),
  );
  if ("waiting" in contents) throw new Error(`a Secret is missing: ${JSON.stringify(contents.waiting)}`);
  return {
    state: {
      config: data["haproxy.cfg"],
      crtList: data["crt-list"],
      maps: new Map(MAP_FILES.map((f: MapFile) => [f, data[f]])),
      ...contents,
    },
    problems: problems.map((p) => `${p.reason}: ${p.message}`),
    warnings,
  };
}

interface Reply {
  /** 0: no HTTP answer (the TLS handshake or connection failed). */
  status: number;
  headers: Record<string, string>;
  /** The request headers the test backend received. */
  received: Record<string, string>;
  backend: string | null;
}

async function curl(args: string[]): Promise<Reply> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--max-time", "10", "-D", "-", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) return { status: 0, headers: {}, received: {}, backend: null };
  const text = new TextDecoder().decode(out.stdout);
  const cut = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, cut).split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
  let answer: { name?: string; headers?: Record<string, string> } = {};
  try {
    answer = JSON.parse(text.slice(cut + 4));
  } catch { /* haproxy answered */ }
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    received: answer.headers ?? {},
    backend: answer.name ?? null,
  };
}

async function passwd(kind: "-6" | "-1" | "-apr1", password: string): Promise<string> {
  const out = await new Deno.Command("openssl", { args: ["passwd", kind, password], stdout: "piped" }).output();
  assert.ok(out.success, `openssl passwd ${kind}`);
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("auth-basic-secret: 401 with the realm without or with wrong credentials, 200 with bcrypt, SHA-512 and MD5-crypt users; an update reloads", async () => {
  await using web = await startBackend({ name: "web" });
  await using proxy = await proxyUnderTest();
  const htpasswd = [
    `alice:${bcrypt.hashSync("alice-pw", 6)}`,
    `bob:${await passwd("-6", "bob-pw")}`,
    `carol:${await passwd("-1", "carol-pw")}`,
    `dave:${await passwd("-apr1", "dave-pw")}`,
  ].join("\n");
  const annotations = { [`${A}auth-basic-secret`]: "users", [`${A}auth-basic-realm`]: "Staff only" };
  const hosts = { "auth.example.com": annotations, "open.example.com": {} };
  let secrets = [secret("users", { auth: htpasswd })];
  const first = await desired(objects(web.port, hosts, secrets), secrets);
  assert.deepEqual(first.problems, [
    "InvalidSecret: annotation ingress-controller.io/auth-basic-secret: Secret default/users: user dave: $apr1$ " +
    "(Apache MD5) is not supported by the proxy's crypt(3); regenerate with htpasswd -B (bcrypt); those lines are ignored",
  ]);
  assert.equal(first.warnings.length, 1);
  assert.match(first.warnings[0], /^default\/users: user dave: \$apr1\$/);
  assert.ok((await proxy.applier.apply(first.state)).ok);

  const url = `http://${proxy.bind}:${proxy.httpPort}/`;
  const get = (host: string, user?: string) => curl(["-H", `Host: ${host}`, ...(user ? ["-u", user] : []), url]);
  const anonymous = await get("auth.example.com");
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers["www-authenticate"], 'Basic realm="Staff only"');
  assert.equal((await get("auth.example.com", "alice:wrong")).status, 401);
  assert.equal((await get("auth.example.com", "nobody:alice-pw")).status, 401);
  for (const user of ["alice:alice-pw", "bob:bob-pw", "carol:carol-pw"]) {
    const ok = await get("auth.example.com", user);
    assert.deepEqual([ok.status, ok.backend], [200, "web"], user);
    // as ingress-nginx: the credentials reach the backend
    assert.equal(ok.received.authorization, `Basic ${btoa(user)}`);
  }
  assert.equal((await get("auth.example.com", "dave:dave-pw")).status, 401, "an $apr1$ line never lets in");
  assert.equal((await get("open.example.com")).status, 200, "other Ingresses are not affected");

  // a new password for alice: the userlist changes, which only a reload applies
  secrets = [secret("users", { auth: `alice:${bcrypt.hashSync("new-pw", 6)}\n` })];
  const second = await desired(objects(web.port, hosts, secrets), secrets);
  assert.equal(second.state.config, first.state.config, "the Secret's content never reaches haproxy.cfg");
  const applied = await proxy.applier.apply(second.state);
  assert.deepEqual([applied.ok, applied.kind], [true, "reload"]);
  assert.equal((await get("auth.example.com", "alice:alice-pw")).status, 401);
  assert.equal((await get("auth.example.com", "bob:bob-pw")).status, 401);
  assert.equal((await get("auth.example.com", "alice:new-pw")).status, 200);

  // the Secret deleted: the route is closed (an empty userlist), not opened
  const gone = await desired(objects(web.port, hosts, []), []);
  assert.match(gone.problems.join("\n"), /Secret default\/users not found; every request gets 401/);
  assert.ok((await proxy.applier.apply(gone.state)).ok);
  assert.equal((await get("auth.example.com", "alice:new-pw")).status, 401);
  assert.equal((await get("open.example.com")).status, 200);
});

Deno.test("auth-basic-secret: hashes at the cost limits are served; costlier lines are refused by name, never reach haproxy, and their passwords stall nothing", async () => {
  await using web = await startBackend({ name: "web" });
  await using proxy = await proxyUnderTest();
  const htpasswd = [
    `alice:${bcrypt.hashSync("alice-pw", 7)}`,
    `bob:${CRYPT_HASHES.bobSha512AtLimit}`,
    `carol:${CRYPT_HASHES.carolSha256AtLimit}`,
    `eve:${bcrypt.hashSync("eve-pw", 8)}`,
    `mallory:${CRYPT_HASHES.malloryBcrypt16}`,
    `trudy:${CRYPT_HASHES.trudySha512Slow}`,
  ].join("\n");
  const annotations = { [`${A}auth-basic-secret`]: "users" };
  const hosts = { "auth.example.com": annotations, "open.example.com": {} };
  const secrets = [secret("users", { auth: htpasswd })];
  const { state, problems, warnings } = await desired(objects(web.port, hosts, secrets), secrets);
  // the controller's Warning and the proxy's own verdict name the same users
  assert.equal(problems.length, 1);
  assert.match(
    problems[0],
    /^InvalidSecret: .*Secret default\/users: user eve: bcrypt cost 8 is above the proxy's limit of 7/,
  );
  assert.match(
    problems[0],
    /; user mallory: bcrypt cost 16 is above .*; user trudy: SHA-crypt rounds=20000000 is above /,
  );
  assert.deepEqual(warnings.map((w) => w.replace(/ is above.*/, "")), [
    "default/users: user eve: bcrypt cost 8",
    "default/users: user mallory: bcrypt cost 16",
    "default/users: user trudy: SHA-crypt rounds=20000000",
  ]);
  assert.deepEqual([...state.userlists!.matchAll(/user (\w+) password/g)].map((m) => m[1]), ["alice", "bob", "carol"]);
  assert.ok((await proxy.applier.apply(state)).ok);
  const worker = await workerPid(proxy.haproxy);

  const url = `http://${proxy.bind}:${proxy.httpPort}/`;
  const get = (user: string) => curl(["-H", "Host: auth.example.com", "-u", user, url]);
  for (const user of ["alice:alice-pw", "bob:bob-pw", "carol:carol-pw"]) {
    const started = performance.now();
    assert.equal((await get(user)).status, 200, user);
    console.log(`${user.split(":")[0]}: answered in ${Math.round(performance.now() - started)} ms`);
  }
  for (const user of ["eve:eve-pw", "mallory:mallory-pw", "trudy:trudy-pw"]) {
    assert.equal((await get(user)).status, 401, `${user}: its line was left out`);
  }
  assert.equal((await get("alice:alice-pw")).status, 200);
  assert.equal(await workerPid(proxy.haproxy), worker, "the same worker serves on: no watchdog abort, no restart");
});

/** A TLS server on loopback whose certificate for `api.internal` is signed by `ca`. */
async function tlsBackend(ca: CertifiedKey) {
  const leaf = await issueCertificate(ca, {
    commonName: "api.internal",
    dnsNames: ["api.internal"],
    usages: ["serverAuth"],
  });
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: leaf.certPem, key: leaf.keyPem, onListen: () => {} },
    () => Response.json({ name: "tls" }),
  );
}

Deno.test("backend-ca-secret: the backend's certificate is verified against the Secret's CA (200), another CA's is refused (503)", async () => {
  const ca = await createCA({ commonName: "backend-ca" });
  const other = await createCA({ commonName: "other-ca" });
  const server = await tlsBackend(ca);
  try {
    await using proxy = await proxyUnderTest();
    const annotations = {
      [`${A}backend-protocol`]: "h1-tls",
      [`${A}backend-sni`]: "api.internal",
      [`${A}backend-ca-secret`]: "backend-ca",
    };
    const get = async () =>
      (await curl(["-H", "Host: v.example.com", `http://${proxy.bind}:${proxy.httpPort}/`])).status;
    for (const [caPem, status] of [[ca.certPem, 200], [other.certPem, 503]] as const) {
      const secrets = [secret("backend-ca", { "ca.crt": caPem })];
      const { state, problems } = await desired(
        objects(server.addr.port, { "v.example.com": annotations }, secrets),
        secrets,
      );
      assert.deepEqual(problems, []);
      assert.match(state.config, /default-server ssl verify required ca-file default_backend-ca_ca\.pem sni/);
      assert.equal(state.pems.get("default_backend-ca_ca.pem"), `${caPem.trim()}\n`);
      assert.ok((await proxy.applier.apply(state)).ok);
      assert.equal(await get(), status, `CA ${caPem === ca.certPem ? "of the backend" : "of another"}`);
    }
    // no usable CA Secret: a Warning, and the backend is not reached (fails closed)
    const broken = [secret("backend-ca", { "ca.crt": "not a certificate" })];
    const { state, problems } = await desired(
      objects(server.addr.port, { "v.example.com": annotations }, broken),
      broken,
    );
    assert.deepEqual(problems, [
      "InvalidSecret: annotation ingress-controller.io/backend-ca-secret: Secret default/backend-ca is unusable: " +
      "ca.crt holds something else than PEM certificates; every request gets 503 (the backend is never reached unverified)",
    ]);
    assert.ok((await proxy.applier.apply(state)).ok);
    assert.equal(await get(), 503);
  } finally {
    await server.shutdown();
  }
});

Deno.test("client-cert-*: required refuses TLS without a certificate of the CA, optional lets it through without the header; the header cannot be forged", async () => {
  await using web = await startBackend({ name: "web" });
  await using proxy = await proxyUnderTest();
  const serverCa = await createCA({ commonName: "server-ca" });
  const clientsCa = await createCA({ commonName: "clients-ca" });
  const otherCa = await createCA({ commonName: "other-ca" });
  const names = ["r.example.com", "o.example.com", "p.example.com"];
  const leaf = await issueCertificate(serverCa, { commonName: names[0], dnsNames: names, usages: ["serverAuth"] });
  const client = await issueCertificate(clientsCa, { commonName: "alice", usages: ["clientAuth"] });
  const stranger = await issueCertificate(otherCa, { commonName: "mallory", usages: ["clientAuth"] });
  const dir = await Deno.makeTempDir({ prefix: "ic-client-cert-" });
  try {
    const files: Record<string, string> = {
      "server-ca.pem": serverCa.certPem,
      "alice.crt": client.certPem,
      "alice.key": client.keyPem,
      "mallory.crt": stranger.certPem,
      "mallory.key": stranger.keyPem,
    };
    for (const [f, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, f), text);
    const secrets = [
      secret("tls", { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem }, "kubernetes.io/tls"),
      secret("clients-ca", { "ca.crt": clientsCa.certPem }),
    ];
    const header = { [`${A}client-cert-ca-secret`]: "clients-ca", [`${A}client-cert-header`]: "X-SSL-Client-Cert" };
    const objs = objects(
      web.port,
      {
        "r.example.com": header,
        "o.example.com": { ...header, [`${A}client-cert-verify`]: "optional" },
        "p.example.com": {},
      },
      secrets,
      "tls",
    );
    const { state, problems } = await desired(objs, secrets);
    assert.deepEqual(problems, []);
    assert.equal(
      state.crtList,
      [
        "default_tls.pem [ca-file default_clients-ca_ca.pem verify optional] o.example.com",
        "default_tls.pem p.example.com",
        "default_tls.pem [ca-file default_clients-ca_ca.pem verify required] r.example.com",
      ].join("\n") + "\n",
    );
    assert.ok((await proxy.applier.apply(state)).ok);

    const get = (sni: string, host: string, cert: "alice" | "mallory" | null, extra: string[] = []) =>
      curl([
        "--resolve",
        `${sni}:${proxy.httpsPort}:${proxy.bind}`,
        "--cacert",
        join(dir, "server-ca.pem"),
        ...(cert ? ["--cert", join(dir, `${cert}.crt`), "--key", join(dir, `${cert}.key`)] : []),
        "-H",
        `Host: ${host}`,
        ...extra,
        `https://${sni}:${proxy.httpsPort}/`,
      ]);
    // base64 of the DER certificate: the PEM body without its line breaks
    const der = client.certPem.split("\n").filter((l) => l !== "" && !l.startsWith("-----")).join("");
    const forged = ["-H", "X-SSL-Client-Cert: forged"];

    // required
    assert.equal((await get("r.example.com", "r.example.com", null)).status, 0, "no certificate: no TLS");
    assert.equal((await get("r.example.com", "r.example.com", "mallory")).status, 0, "another CA: no TLS");
    const ok = await get("r.example.com", "r.example.com", "alice", forged);
    assert.deepEqual([ok.status, ok.backend], [200, "web"]);
    assert.equal(ok.received["x-ssl-client-cert"], der);
    // a connection made for a host without the check cannot reach the checked host
    assert.equal((await get("p.example.com", "r.example.com", null)).status, 421);

    // optional
    const none = await get("o.example.com", "o.example.com", null, forged);
    assert.deepEqual([none.status, none.received["x-ssl-client-cert"]], [200, undefined]);
    assert.equal(
      (await get("o.example.com", "o.example.com", "mallory")).status,
      0,
      "an invalid certificate is refused",
    );
    const valid = await get("o.example.com", "o.example.com", "alice");
    assert.equal(valid.received["x-ssl-client-cert"], der);
    // a certificate verified for the required host does not vouch for the optional one's header… and the reverse
    const crossed = await get("r.example.com", "o.example.com", "alice", forged);
    assert.deepEqual([crossed.status, crossed.received["x-ssl-client-cert"]], [200, undefined]);

    // the host without the check is served as before
    assert.equal((await get("p.example.com", "p.example.com", null)).status, 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("client-cert-*: the oldest Ingress's check of a host wins; an Ingress without TLS hosts is warned", () => {
  const secrets = [
    secret("tls", { "tls.crt": FIXTURE_CERT.certPem, "tls.key": FIXTURE_CERT.keyPem }, "kubernetes.io/tls"),
    secret("ca", { "ca.crt": FIXTURE_CERT.certPem }),
  ];
  const check = (verify: string) => ({ [`${A}client-cert-ca-secret`]: "ca", [`${A}client-cert-verify`]: verify });
  const withTls = (name: string, annotations: Record<string, string>, created: string) =>
    ingress({
      name,
      created,
      annotations,
      tls: [{ hosts: ["a.example.com"], secretName: "tls" }],
      rules: [{ host: "a.example.com", paths: [{ path: `/${name}`, service: "web", port: 80 }] }],
    });
  const lookup = objects(1, {}, secrets).lookup;
  const { model, problems } = buildModel({
    ingresses: [
      withTls("old", check("optional"), "2026-01-01T00:00:00Z"),
      withTls("same", check("optional"), "2026-02-01T00:00:00Z"),
      withTls("other", check("required"), "2026-03-01T00:00:00Z"),
      ingress({
        name: "plain",
        annotations: check("required"),
        rules: [{ host: "b.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
    ],
    lookup,
    allowLoopbackEndpoints: true,
  });
  assert.deepEqual(model.clientCerts, { "a.example.com": { namespace: "default", name: "ca", verify: "optional" } });
  assert.deepEqual(problems.map((p) => `${p.object} ${p.reason}`).sort(), [
    "default/other ClientCertConflict",
    "default/plain ClientCertWithoutTLS",
  ]);
});

/**
 * One openssl GET (Deno's TLS client cannot resume sessions) to the proxy's HTTPS port with SNI and
 * Host `host`: its status (0: no TLS) and whether the proxy resumed `sessIn`.
 */
async function opensslGet(
  dir: string,
  addr: string,
  host: string,
  opts: { version: "1_2" | "1_3"; cert?: string; sessOut?: string; sessIn?: string },
): Promise<{ status: number; reused: boolean }> {
  const args = ["s_client", "-connect", addr, "-servername", host, `-tls${opts.version}`, "-ign_eof"];
  args.push("-CAfile", join(dir, "server-ca.pem"));
  if (opts.cert) args.push("-cert", join(dir, `${opts.cert}.crt`), "-key", join(dir, `${opts.cert}.key`));
  if (opts.sessOut) args.push("-sess_out", join(dir, opts.sessOut));
  if (opts.sessIn) args.push("-sess_in", join(dir, opts.sessIn));
  const child = new Deno.Command("openssl", { args, stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(`GET / HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`));
  await w.close();
  const out = new TextDecoder().decode((await child.output()).stdout);
  const status = /^HTTP\/1\.1 (\d{3})/m.exec(out);
  return { status: status ? Number(status[1]) : 0, reused: /^Reused, /m.test(out) };
}

Deno.test("client-cert-*: a TLS session verified for one host's CA never resumes on a host checked against another CA", async () => {
  await using web = await startBackend({ name: "web" });
  await using proxy = await proxyUnderTest();
  const serverCa = await createCA({ commonName: "server-ca" });
  const [caA, caB] = [await createCA({ commonName: "tenant-a-ca" }), await createCA({ commonName: "tenant-b-ca" })];
  const names = ["a.example.com", "b.example.com"];
  const leaf = await issueCertificate(serverCa, { commonName: names[0], dnsNames: names, usages: ["serverAuth"] });
  const alice = await issueCertificate(caA, { commonName: "alice", usages: ["clientAuth"] });
  const dir = await Deno.makeTempDir({ prefix: "ic-client-cert-resume-" });
  try {
    const files = { "server-ca.pem": serverCa.certPem, "alice.crt": alice.certPem, "alice.key": alice.keyPem };
    for (const [f, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, f), text);
    const secrets = [
      secret("tls", { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem }, "kubernetes.io/tls"),
      secret("ca-a", { "ca.crt": caA.certPem }),
      secret("ca-b", { "ca.crt": caB.certPem }),
    ];
    const objs = objects(
      web.port,
      {
        "a.example.com": { [`${A}client-cert-ca-secret`]: "ca-a" },
        "b.example.com": { [`${A}client-cert-ca-secret`]: "ca-b" },
      },
      secrets,
      "tls",
    );
    const { state, problems } = await desired(objs, secrets);
    assert.deepEqual(problems, []);
    assert.ok((await proxy.applier.apply(state)).ok);
    const addr = `${proxy.bind}:${proxy.httpsPort}`;
    for (const version of ["1_3", "1_2"] as const) {
      const first = await opensslGet(dir, addr, "a.example.com", { version, cert: "alice", sessOut: "alice.session" });
      assert.deepEqual(first, { status: 200, reused: false }, `TLS ${version}: alice on her tenant's host`);
      // Without `tune.ssl.cachesize 0` HAProxy 2.6 resumed this session for b.example.com (TLS 1.3: with
      // its SNI, the client certificate counted as used and verified) and served it (measured).
      const other = await opensslGet(dir, addr, "b.example.com", { version, sessIn: "alice.session" });
      assert.deepEqual(other, { status: 0, reused: false }, `TLS ${version}: the other tenant's check is kept`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
