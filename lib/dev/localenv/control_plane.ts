/**
 * @module lib/dev/localenv/control_plane
 * A real etcd + kube-apiserver on 127.0.0.1 (free random ports, one temporary directory), set up
 * as controller-runtime's envtest does: RBAC authorization, its own service-account signing key
 * and issuer, a client CA, and a front-proxy (request-header) CA with the `--requestheader-*`
 * flags, so `kube-system/extension-apiserver-authentication` carries both CAs and the
 * request-header settings. The admin user is in `system:masters`.
 *
 * ```ts
 * await using cp = await startControlPlane();
 * const kubeconfig = await cp.kubeConfig("alice", ["devs"]);
 * ```
 */
import { join } from "node:path";
import {
  type CertifiedKey,
  createCA,
  generateKeyPair,
  issueCertificate,
  privateKeyPem,
  publicKeyPem,
} from "../../pki/certs.ts";
import { type Binaries, ensureBinaries } from "./binaries.ts";
import { register } from "./cleanup.ts";
import { type Credentials, writeKubeConfig } from "./kubeconfig.ts";
import { freePorts } from "./ports.ts";
import { type ManagedProcess, spawnProcess } from "./process.ts";

/** A static bearer token known to the API server from the start (`--token-auth-file`). */
export interface StaticToken {
  token: string;
  user: string;
  uid?: string;
  groups?: string[];
}

export interface ControlPlaneOptions {
  /** How long to wait for `/readyz` (default 120 s: parallel test files share 2 cores). */
  readyTimeoutMs?: number;
  /** Extra kube-apiserver flags (`--name=value`), appended last so they win. */
  apiServerFlags?: string[];
  /** Static tokens for `--token-auth-file`. Tokens minted later come from `mintToken`. */
  staticTokens?: StaticToken[];
  /** Use these binaries instead of `ensureBinaries()`. */
  binaries?: Binaries;
  /** Keep the ServiceAccount admission plugin (a cluster with a controller-manager); default off, as envtest. */
  serviceAccountAdmission?: boolean;
}

/** A user's client certificate, signed by the client CA. */
export interface MintedUser {
  name: string;
  groups: string[];
  certPem: string;
  keyPem: string;
}

export interface MintTokenOptions {
  /** Namespace of the service account (created when missing); default "default". */
  namespace?: string;
  /** Service account (created when missing); default "testenv-user". */
  serviceAccount?: string;
  /** Token audiences; default the API server's own (what TokenReview checks by default). */
  audiences?: string[];
  /** Default 3600. */
  expirationSeconds?: number;
}

export interface ControlPlane extends AsyncDisposable {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** CA of the API server's serving certificate. */
  readonly caPem: string;
  /** CA that signs client certificates (`--client-ca-file`). */
  readonly clientCaPem: string;
  /** CA of the front proxy (`--requestheader-client-ca-file`). */
  readonly frontProxyCaPem: string;
  /** Common name the API server accepts from front-proxy clients (`--requestheader-allowed-names`). */
  readonly frontProxyClientName: string;
  /** `--service-account-issuer`. */
  readonly serviceAccountIssuer: string;
  /** kubeconfig of the admin (client certificate, group system:masters). */
  readonly adminKubeConfigPath: string;
  readonly admin: MintedUser;
  /** http://127.0.0.1:<port> of etcd. */
  readonly etcdUrl: string;
  /** Temporary directory (certificates, etcd data, logs, kubeconfigs); removed by stop(). */
  readonly dir: string;
  /** The service-account signing key (PEM), for a kube-controller-manager. */
  readonly serviceAccountKeyFile: string;
  /** Pids of etcd and kube-apiserver. */
  readonly pids: { etcd: number; kubeApiserver: number };
  /** Log files of etcd and kube-apiserver. */
  readonly logs: { etcd: string; kubeApiserver: string };
  /** Milliseconds from the call to `/readyz` answering ok. */
  readonly startMs: number;
  /** Resolves with a message if etcd or kube-apiserver exits before `stop()`; otherwise never. */
  readonly unexpectedExit: Promise<string>;
  /** A client certificate for `name` with O = `groups`, signed by the client CA. */
  mintUser(name: string, groups?: string[]): Promise<MintedUser>;
  /** A certificate with CN `cn` (default the allowed name) signed by the front-proxy CA. */
  mintFrontProxyClient(cn?: string): Promise<{ certPem: string; keyPem: string }>;
  /** A service-account token (TokenRequest API) that TokenReview accepts. */
  mintToken(opts?: MintTokenOptions): Promise<string>;
  /** Mints a user (client certificate) and writes a kubeconfig for it; returns the path. */
  kubeConfig(name: string, groups?: string[]): Promise<string>;
  /** Writes a kubeconfig with these credentials; returns the path. */
  writeKubeConfig(user: string, credentials: Credentials, path?: string): Promise<string>;
  /** fetch() against the API server as the admin; the caller consumes the body. */
  adminFetch(path: string, init?: RequestInit): Promise<Response>;
  /** Stops kube-apiserver and etcd and removes `dir`. Idempotent. */
  stop(): Promise<void>;
}

const apiServerSans = {
  dnsNames: [
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
  ],
  ipAddresses: ["127.0.0.1", "10.0.0.1"],
};
const frontProxyClientName = "front-proxy-client";
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local";

/**
 * Starts etcd and kube-apiserver and waits until the API server is ready. Builds the binaries
 * first when they are not cached (see `binaries.ts`). Retries twice when a port was taken.
 */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const t0 = performance.now();
  const bins = opts.binaries ?? await ensureBinaries();
  for (let attempt = 1;; attempt++) {
    try {
      return await startOnce(opts, bins, t0);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(opts: ControlPlaneOptions, bins: Binaries, t0: number): Promise<ControlPlane> {
  const dir = await Deno.makeTempDir({ prefix: "ic-testenv-" });
  const parts: ManagedProcess[] = [];
  let httpClient: Deno.HttpClient | null = null;
  let stopped: Promise<void> | null = null;
  let stopCalled = false;
  const stop = () =>
    stopped ??= (async () => {
      stopCalled = true;
      // The API server first, so it does not log etcd connection errors while shutting down.
      for (const p of parts.toReversed()) await p.stop();
      httpClient?.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      unregister();
    })();
  const unregister = register(stop);

  try {
    const pki = await writePki(dir);
    const [etcdClientPort, etcdPeerPort, securePort] = freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcdPeerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const logs = { etcd: join(dir, "etcd.log"), kubeApiserver: join(dir, "kube-apiserver.log") };
    const etcd = await spawnProcess({
      name: "etcd",
      command: bins.etcd,
      logPath: logs.etcd,
      removeOnOrphan: dir,
      args: [
        "--name=default",
        `--data-dir=${join(dir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${etcdPeerUrl}`,
        `--initial-advertise-peer-urls=${etcdPeerUrl}`,
        `--initial-cluster=default=${etcdPeerUrl}`,
        "--initial-cluster-state=new",
        "--unsafe-no-fsync=true", // test data: durability is not needed, speed is
        "--log-level=warn",
      ],
    });
    parts.push(etcd);

    const tokenFile = join(dir, "tokens.csv");
    await Deno.writeTextFile(tokenFile, tokenCsv(opts.staticTokens ?? []), { mode: 0o600 });
    const server = `https://127.0.0.1:${securePort}`;
    const apiserver = await spawnProcess({
      name: "kube-apiserver",
      command: bins.kubeApiserver,
      logPath: logs.kubeApiserver,
      args: [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${securePort}`,
        `--cert-dir=${join(dir, "apiserver-certs")}`,
        `--tls-cert-file=${pki.files.servingCert}`,
        `--tls-private-key-file=${pki.files.servingKey}`,
        `--client-ca-file=${pki.files.clientCa}`,
        "--authorization-mode=RBAC",
        `--service-account-issuer=${serviceAccountIssuer}`,
        `--service-account-key-file=${pki.files.saPub}`,
        `--service-account-signing-key-file=${pki.files.saKey}`,
        `--token-auth-file=${tokenFile}`,
        `--requestheader-client-ca-file=${pki.files.frontProxyCa}`,
        `--requestheader-allowed-names=${frontProxyClientName}`,
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        `--proxy-client-cert-file=${pki.files.frontProxyClientCert}`,
        `--proxy-client-key-file=${pki.files.frontProxyClientKey}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--allow-privileged=true",
        // As envtest: no controller-manager creates the "default" service accounts pods would need.
        ...(opts.serviceAccountAdmission ? [] : ["--disable-admission-plugins=ServiceAccount"]),
        "--enable-priority-and-fairness=false",
        "--profiling=false",
        ...(opts.apiServerFlags ?? []),
      ],
    });
    parts.push(apiserver);

    const admin = await userCert(pki.clientCa, "admin", ["system:masters"]);
    httpClient = Deno.createHttpClient({ caCerts: [pki.servingCa.certPem], cert: admin.certPem, key: admin.keyPem });
    const client = httpClient;
    const adminFetch = (path: string, init?: RequestInit) =>
      fetch(new URL(path, server), { ...init, client } as RequestInit);

    await waitReady(adminFetch, [etcd, apiserver], opts.readyTimeoutMs ?? 120_000);

    const kubeConfigAt = (user: string, credentials: Credentials, path?: string) =>
      writeKubeConfig(path ?? join(dir, `kubeconfig-${safeFileName(user)}.yaml`), {
        server,
        caPem: pki.servingCa.certPem,
        user,
        credentials,
      });
    const adminKubeConfigPath = await kubeConfigAt("admin", admin);
    const startMs = Math.round(performance.now() - t0);
    const unexpectedExit = new Promise<string>((resolve) => {
      for (const p of [etcd, apiserver]) {
        p.exited.then((st) => {
          if (!stopCalled) resolve(`${p.name} exited unexpectedly (exit ${st.code}); its log: ${p.logPath}`);
        });
      }
    });

    const cp: ControlPlane = {
      server,
      caPem: pki.servingCa.certPem,
      clientCaPem: pki.clientCa.certPem,
      frontProxyCaPem: pki.frontProxyCa.certPem,
      frontProxyClientName,
      serviceAccountIssuer,
      adminKubeConfigPath,
      admin,
      etcdUrl,
      dir,
      serviceAccountKeyFile: pki.files.saKey,
      pids: { etcd: etcd.pid, kubeApiserver: apiserver.pid },
      logs,
      startMs,
      unexpectedExit,
      mintUser: (name, groups = []) => userCert(pki.clientCa, name, groups),
      async mintFrontProxyClient(cn = frontProxyClientName) {
        const c = await issueCertificate(pki.frontProxyCa, { commonName: cn, usages: ["clientAuth"] });
        return { certPem: c.certPem, keyPem: c.keyPem };
      },
      mintToken: (o) => mintServiceAccountToken(adminFetch, o),
      async kubeConfig(name, groups = []) {
        return await kubeConfigAt(name, await userCert(pki.clientCa, name, groups));
      },
      writeKubeConfig: kubeConfigAt,
      adminFetch,
      stop,
      [Symbol.asyncDispose]: stop,
    };
    return cp;
  } catch (err) {
    const tails = await Promise.all(parts.map(async (p) => `--- ${p.name} log (last lines) ---\n${await p.logTail()}`));
    await stop();
    throw new Error(`test control plane did not start: ${(err as Error).message}\n${tails.join("\n")}`);
  }
}

interface Pki {
  servingCa: CertifiedKey;
  clientCa: CertifiedKey;
  frontProxyCa: CertifiedKey;
  files: Record<
    | "servingCert"
    | "servingKey"
    | "clientCa"
    | "frontProxyCa"
    | "frontProxyClientCert"
    | "frontProxyClientKey"
    | "saKey"
    | "saPub",
    string
  >;
}

/** Creates the three CAs, the serving and front-proxy client certificates and the SA key pair. */
async function writePki(dir: string): Promise<Pki> {
  const [servingCa, clientCa, frontProxyCa, saKeys] = await Promise.all([
    createCA({ commonName: "testenv-serving-ca" }),
    createCA({ commonName: "testenv-client-ca" }),
    createCA({ commonName: "testenv-front-proxy-ca" }),
    // RSA: what every service-account token consumer supports (RS256).
    generateKeyPair("RSA-2048"),
  ]);
  const [serving, frontProxyClient] = await Promise.all([
    issueCertificate(servingCa, { commonName: "kube-apiserver", usages: ["serverAuth"], ...apiServerSans }),
    issueCertificate(frontProxyCa, { commonName: frontProxyClientName, usages: ["clientAuth"] }),
  ]);
  const pkiDir = join(dir, "pki");
  await Deno.mkdir(pkiDir, { mode: 0o700 });
  const files = {
    servingCert: [join(pkiDir, "serving.crt"), serving.certPem],
    servingKey: [join(pkiDir, "serving.key"), serving.keyPem],
    clientCa: [join(pkiDir, "client-ca.crt"), clientCa.certPem],
    frontProxyCa: [join(pkiDir, "front-proxy-ca.crt"), frontProxyCa.certPem],
    frontProxyClientCert: [join(pkiDir, "front-proxy-client.crt"), frontProxyClient.certPem],
    frontProxyClientKey: [join(pkiDir, "front-proxy-client.key"), frontProxyClient.keyPem],
    saKey: [join(pkiDir, "sa.key"), await privateKeyPem(saKeys.privateKey)],
    saPub: [join(pkiDir, "sa.pub"), await publicKeyPem(saKeys.publicKey)],
  } as const;
  await Promise.all(Object.values(files).map(([path, text]) => Deno.writeTextFile(path, text, { mode: 0o600 })));
  return {
    servingCa,
    clientCa,
    frontProxyCa,
    files: Object.fromEntries(Object.entries(files).map(([k, [path]]) => [k, path])) as Pki["files"],
  };
}

async function userCert(clientCa: CertifiedKey, name: string, groups: string[]): Promise<MintedUser> {
  const c = await issueCertificate(clientCa, { commonName: name, organizations: groups, usages: ["clientAuth"] });
  return { name, groups: [...groups], certPem: c.certPem, keyPem: c.keyPem };
}

function tokenCsv(tokens: StaticToken[]): string {
  const field = (v: string) => {
    if (/["\r\n]/.test(v)) throw new Error(`static token field ${JSON.stringify(v)}: no quotes or line breaks`);
    return `"${v}"`;
  };
  return tokens.map((t) => [t.token, t.user, t.uid ?? t.user, (t.groups ?? []).join(",")].map(field).join(",") + "\n")
    .join("");
}

function safeFileName(user: string): string {
  return user.replace(/[^A-Za-z0-9_.-]/g, "_");
}

type Fetcher = (path: string, init?: RequestInit) => Promise<Response>;

/** Polls `/readyz` until it answers 200; fails early when a process exits. */
async function waitReady(fetcher: Fetcher, procs: ManagedProcess[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = "no answer yet";
  while (performance.now() < deadline) {
    const dead = procs.find((p) => p.hasExited);
    if (dead) throw new Error(`${dead.name} exited during start-up (exit ${(await dead.exited).code})`);
    try {
      const res = await fetcher("/readyz");
      const body = await res.text();
      if (res.status === 200) return;
      last = `/readyz ${res.status}: ${body.split("\n").filter((l) => l.includes("failed")).join("; ")}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`kube-apiserver not ready after ${timeoutMs} ms (${last})`);
}

async function mintServiceAccountToken(fetcher: Fetcher, o: MintTokenOptions = {}): Promise<string> {
  const ns = o.namespace ?? "default";
  const sa = o.serviceAccount ?? "testenv-user";
  const send = async (path: string, body: unknown, okIfExists: boolean) => {
    const res = await fetcher(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    if (res.ok || (okIfExists && res.status === 409)) return json;
    throw new Error(`POST ${path}: ${res.status} ${json?.message ?? ""}`);
  };
  await send("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, true);
  await send(
    `/api/v1/namespaces/${ns}/serviceaccounts`,
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa } },
    true,
  );
  const tr = await send(`/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { audiences: o.audiences ?? null, expirationSeconds: o.expirationSeconds ?? 3600 },
  }, false);
  const token = tr?.status?.token;
  if (typeof token !== "string" || !token) throw new Error(`TokenRequest for ${ns}/${sa} returned no token`);
  return token;
}
