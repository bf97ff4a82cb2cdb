/**
 * @module cluster/kubeconfig
 * Where the API server is and how to authenticate to it, read without @kubernetes/client-node in
 * the common cases: the in-cluster service account and kubeconfig users with static credentials
 * (token, tokenFile, client certificate and key, username/password). Importing client-node costs
 * about 80 MB of RSS (its generated API), more than the controller's caches of 10,000 Ingresses,
 * so it is imported only for users that need its authenticators (exec plugins, auth providers),
 * and their kubeconfig is handed to its `KubeConfig` as before.
 *
 * Token files (the service account's is rotated by the kubelet) and certificate files are read
 * again on every `connection()`, as client-go re-reads them; the cluster client asks at most every
 * few seconds (lib/cluster/client.ts). Errors are SetupErrors saying what is wrong in the file;
 * lib/cluster/access.ts adds the option and the file.
 */
import type { Buffer } from "node:buffer";
import { readFile } from "node:fs/promises";
import { isIPv6 } from "node:net";
import { dirname, isAbsolute, join } from "node:path";
import { parse } from "yaml";
import { oneLine, SetupError } from "../common/errors.ts";

/** TLS material and headers for requests to the API server. */
export interface Connection {
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly servername?: string;
  /** false only for `insecure-skip-tls-verify: true`. */
  readonly rejectUnauthorized?: boolean;
  /** Authorization and the like. */
  readonly headers: Readonly<Record<string, string>>;
}

/** A loaded cluster configuration: the one interface the clients use. */
export interface ClusterAccess {
  /** URL of the API server of the current context. */
  readonly server: string;
  /** Namespace of the current context (the service account's in a pod), if any. */
  readonly namespace: string | undefined;
  /** What it was loaded from, for messages: a file path or "the in-cluster configuration". */
  readonly source: string;
  /** Reads the credentials now (token and certificate files again, exec plugins through client-node). */
  connection(): Promise<Connection>;
}

/** Where a pod's service-account credentials are mounted. */
export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface InClusterEnv {
  /** `KUBERNETES_SERVICE_HOST`. */
  readonly host: string | undefined;
  /** `KUBERNETES_SERVICE_PORT`. */
  readonly port: string | undefined;
}

/** The in-cluster variables of this process. */
export const inClusterEnv = (): InClusterEnv => ({
  host: Deno.env.get("KUBERNETES_SERVICE_HOST"),
  port: Deno.env.get("KUBERNETES_SERVICE_PORT"),
});

/**
 * The in-cluster configuration, as client-go's `InClusterConfig`: https://HOST:PORT, the CA and
 * token of the service-account directory (the token re-read on every `connection()`).
 */
export function inClusterAccess(saDir = serviceAccountDir, env: InClusterEnv = inClusterEnv()): ClusterAccess {
  if (!env.host || !env.port) {
    throw new SetupError("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set (not in a pod?)");
  }
  const host = isIPv6(env.host) ? `[${env.host}]` : env.host;
  const server = `https://${host}:${env.port}`;
  checkUrl(server);
  const tokenFile = join(saDir, "token");
  const caFile = join(saDir, "ca.crt");
  readOrThrow(tokenFile, "service-account token");
  readOrThrow(caFile, "service-account CA");
  let namespace: string | undefined;
  try {
    namespace = Deno.readTextFileSync(join(saDir, "namespace")).trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const user: StaticUser = { tokenFile };
  return {
    server,
    namespace,
    source: "the in-cluster configuration",
    connection: () => staticConnection({ caFile }, user),
  };
}

/**
 * A kubeconfig file: its current context, cluster and user. Relative file names in it are taken
 * from the file's directory, as kubectl does. A user with fields beyond static credentials (exec,
 * auth-provider, impersonation) gets its credentials from client-node's `KubeConfig`.
 */
export function kubeConfigFileAccess(path: string): ClusterAccess {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    throw new SetupError(`cannot read it: ${oneLine(err)}`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new SetupError(`not YAML: ${oneLine(err)}`);
  }
  const config = record(doc, "the file");
  const contextName = config["current-context"];
  if (typeof contextName !== "string" || !contextName) throw new SetupError("no current-context");
  const context = record(named(config.contexts, "contexts", contextName).context, `context ${contextName}`);
  const clusterName = stringField(context, "cluster", `context ${contextName}`);
  const cluster = record(named(config.clusters, "clusters", clusterName).cluster, `cluster ${clusterName}`);
  const server = stringField(cluster, "server", `cluster ${clusterName}`);
  checkUrl(server);
  const namespace = typeof context.namespace === "string" && context.namespace ? context.namespace : undefined;
  const userName = typeof context.user === "string" ? context.user : "";
  const user = userName ? record(named(config.users, "users", userName).user ?? {}, `user ${userName}`) : {};
  const base = dirname(path);
  const tls = clusterTls(cluster, base, clusterName);
  if (Object.keys(user).some((k) => !staticUserFields.has(k))) {
    return { server, namespace, source: path, connection: () => clientNodeConnection(path) };
  }
  const creds = staticUser(user, base, userName);
  // Read the files once now, so that a missing one fails at start-up and not at the first request.
  for (const [file, what] of [[tls.caFile, "certificate-authority"], [creds.certFile, "client-certificate"]]) {
    if (file) readOrThrow(file, what!);
  }
  if (creds.keyFile) readOrThrow(creds.keyFile, "client-key");
  if (creds.tokenFile) readOrThrow(creds.tokenFile, "tokenFile");
  return { server, namespace, source: path, connection: () => staticConnection(tls, creds) };
}

type Doc = Record<string, unknown>;

const staticUserFields = new Set([
  "token",
  "tokenFile",
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
  "username",
  "password",
]);

interface ClusterTls {
  caFile?: string;
  caData?: string;
  servername?: string;
  insecure?: boolean;
}

interface StaticUser {
  token?: string;
  tokenFile?: string;
  certFile?: string;
  certData?: string;
  keyFile?: string;
  keyData?: string;
  basic?: string;
}

function clusterTls(cluster: Doc, base: string, name: string): ClusterTls {
  const where = `cluster ${name}`;
  return {
    caFile: fileField(cluster, "certificate-authority", base, where),
    caData: dataField(cluster, "certificate-authority-data", where),
    servername: optionalString(cluster, "tls-server-name", where),
    insecure: cluster["insecure-skip-tls-verify"] === true,
  };
}

function staticUser(user: Doc, base: string, name: string): StaticUser {
  const where = `user ${name}`;
  const username = optionalString(user, "username", where);
  const password = optionalString(user, "password", where);
  const creds: StaticUser = {
    token: optionalString(user, "token", where),
    tokenFile: fileField(user, "tokenFile", base, where),
    certFile: fileField(user, "client-certificate", base, where),
    certData: dataField(user, "client-certificate-data", where),
    keyFile: fileField(user, "client-key", base, where),
    keyData: dataField(user, "client-key-data", where),
    basic: username !== undefined ? `${username}:${password ?? ""}` : undefined,
  };
  const hasCert = creds.certFile !== undefined || creds.certData !== undefined;
  const hasKey = creds.keyFile !== undefined || creds.keyData !== undefined;
  if (hasCert !== hasKey) {
    throw new SetupError(`${where}: a client certificate needs its key and a key its certificate`);
  }
  return creds;
}

async function staticConnection(tls: ClusterTls, user: StaticUser): Promise<Connection> {
  const headers: Record<string, string> = {};
  // As client-go: a token (or token file) wins over basic authentication.
  const token = user.token ?? (user.tokenFile ? (await readAsync(user.tokenFile, "tokenFile")).trim() : undefined);
  if (token) headers.Authorization = `Bearer ${token}`;
  else if (user.basic) headers.Authorization = `Basic ${btoa(user.basic)}`;
  return {
    ca: tls.caData ?? (tls.caFile ? await readAsync(tls.caFile, "certificate-authority") : undefined),
    cert: user.certData ?? (user.certFile ? await readAsync(user.certFile, "client-certificate") : undefined),
    key: user.keyData ?? (user.keyFile ? await readAsync(user.keyFile, "client-key") : undefined),
    servername: tls.servername,
    ...(tls.insecure ? { rejectUnauthorized: false } : {}),
    headers,
  };
}

/** The credentials of a user only client-node can authenticate (exec plugins, auth providers). */
async function clientNodeConnection(path: string): Promise<Connection> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  // applyToHTTPSOptions runs the user's authenticator and reads the CA and client certificates.
  const o: {
    ca?: string | Buffer;
    cert?: string | Buffer;
    key?: string | Buffer;
    servername?: string;
    rejectUnauthorized?: boolean;
    auth?: string;
    headers?: Record<string, unknown>;
  } = {};
  await kc.applyToHTTPSOptions(o);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) headers[k] = String(v);
  if (o.auth) headers.Authorization = `Basic ${btoa(o.auth)}`;
  return {
    ca: o.ca,
    cert: o.cert,
    key: o.key,
    servername: o.servername,
    ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
    headers,
  };
}

function record(v: unknown, what: string): Doc {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new SetupError(`${what} is not a mapping`);
  return v as Doc;
}

/** The entry called `name` of a kubeconfig list (`clusters`, `users`, `contexts`). */
function named(list: unknown, field: string, name: string): Doc {
  const found = Array.isArray(list) ? list.find((e) => e && typeof e === "object" && e.name === name) : undefined;
  if (!found) throw new SetupError(`${field} has no entry named ${JSON.stringify(name)}`);
  return found as Doc;
}

function optionalString(o: Doc, field: string, where: string): string | undefined {
  const v = o[field];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new SetupError(`${where}: ${field} is not a string`);
  return v;
}

function stringField(o: Doc, field: string, where: string): string {
  const v = optionalString(o, field, where);
  if (v === undefined) throw new SetupError(`${where} has no ${field}`);
  return v;
}

function fileField(o: Doc, field: string, base: string, where: string): string | undefined {
  const v = optionalString(o, field, where);
  return v === undefined || isAbsolute(v) ? v : join(base, v);
}

/** A `…-data` field: base64 of PEM text. */
function dataField(o: Doc, field: string, where: string): string | undefined {
  const v = optionalString(o, field, where);
  if (v === undefined) return undefined;
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(v.replace(/\s+/g, "")), (c) => c.charCodeAt(0)));
  } catch {
    throw new SetupError(`${where}: ${field} is not base64`);
  }
}

function checkUrl(server: string): void {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new SetupError(`server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new SetupError(`server ${server} is not an http(s) URL`);
  }
}

function readOrThrow(file: string, what: string): void {
  try {
    Deno.readFileSync(file);
  } catch (err) {
    throw new SetupError(`cannot read the ${what} file ${file}: ${oneLine(err)}`);
  }
}

async function readAsync(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new SetupError(`cannot read the ${what} file ${file}: ${oneLine(err)}`);
  }
}
