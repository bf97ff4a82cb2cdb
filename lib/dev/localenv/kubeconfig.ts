/**
 * @module lib/dev/localenv/kubeconfig
 * kubeconfig files (the format kubectl and @kubernetes/client-node read) for one cluster and one
 * user, with all certificates inline.
 */
import { stringify } from "yaml";

/** How a user authenticates: a client certificate or a bearer token. */
export type Credentials = { certPem: string; keyPem: string } | { token: string };

export interface KubeConfigInput {
  server: string;
  caPem: string;
  user: string;
  credentials: Credentials;
  /** Context and cluster name; default "testenv". */
  name?: string;
  /** The cluster's `tls-server-name` (the name the server's certificate is checked against). */
  tlsServerName?: string;
}

const b64 = (text: string) => btoa(text);

/** The kubeconfig YAML text. */
export function kubeConfigYaml(input: KubeConfigInput): string {
  const name = input.name ?? "testenv";
  const user = "token" in input.credentials ? { token: input.credentials.token } : {
    "client-certificate-data": b64(input.credentials.certPem),
    "client-key-data": b64(input.credentials.keyPem),
  };
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name,
      cluster: {
        server: input.server,
        "certificate-authority-data": b64(input.caPem),
        ...(input.tlsServerName ? { "tls-server-name": input.tlsServerName } : {}),
      },
    }],
    users: [{ name: input.user, user }],
    contexts: [{ name, context: { cluster: name, user: input.user } }],
    "current-context": name,
    preferences: {},
  });
}

/** Writes the kubeconfig to `path` (mode 0600, atomically) and returns `path`. */
export async function writeKubeConfig(path: string, input: KubeConfigInput): Promise<string> {
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, kubeConfigYaml(input), { mode: 0o600 });
  await Deno.rename(tmp, path);
  return path;
}
