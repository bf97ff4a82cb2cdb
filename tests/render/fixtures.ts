/**
 * @module tests/render/fixtures
 * Plain cluster objects for renderer tests: an Ingress, Services, EndpointSlices and TLS Secrets
 * shaped as the API server returns them.
 */
import type { V1EndpointSlice, V1Ingress, V1IngressBackend, V1Secret, V1Service } from "@kubernetes/client-node";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

export function backend(service: string, port: number | string): V1IngressBackend {
  return { service: { name: service, port: typeof port === "number" ? { number: port } : { name: port } } };
}

export interface PathSpec {
  path?: string;
  pathType?: string;
  service: string;
  port: number | string;
}

export function ingress(opts: {
  namespace?: string;
  name: string;
  created?: string;
  annotations?: Record<string, string>;
  rules?: { host?: string; paths: PathSpec[] }[];
  tls?: { hosts?: string[]; secretName?: string }[];
  defaultBackend?: { service: string; port: number | string };
}): V1Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      namespace: opts.namespace ?? "default",
      name: opts.name,
      creationTimestamp: (opts.created ?? "2026-01-01T00:00:00Z") as unknown as Date,
      annotations: opts.annotations,
    },
    spec: {
      defaultBackend: opts.defaultBackend ? backend(opts.defaultBackend.service, opts.defaultBackend.port) : undefined,
      tls: opts.tls,
      rules: opts.rules?.map((r) => ({
        host: r.host,
        http: {
          paths: r.paths.map((p) => ({
            path: p.path,
            pathType: (p.pathType ?? "Prefix") as string,
            backend: backend(p.service, p.port),
          })),
        },
      })),
    },
  };
}

export function service(
  name: string,
  ports: { name?: string; port: number; targetPort?: number | string }[],
  namespace = "default",
): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace, name },
    spec: { ports: ports.map((p) => ({ protocol: "TCP", ...p })) },
  };
}

export function endpointSlice(
  serviceName: string,
  ports: { name?: string; port: number }[],
  endpoints: { address: string; ready?: boolean }[],
  opts: { namespace?: string; name?: string; addressType?: string } = {},
): V1EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      namespace: opts.namespace ?? "default",
      name: opts.name ?? `${serviceName}-abc`,
      labels: { "kubernetes.io/service-name": serviceName },
    },
    addressType: opts.addressType ?? "IPv4",
    ports: ports.map((p) => ({ protocol: "TCP", ...p })),
    endpoints: endpoints.map((e) => ({
      addresses: [e.address],
      conditions: e.ready === undefined ? {} : { ready: e.ready },
    })),
  };
}

/** One real certificate and key shared by every {@link tlsSecret}: the controller judges a Secret's content for real. */
export const FIXTURE_CERT = await issueCertificate(await createCA({ commonName: "fixtures CA" }), {
  commonName: "fixture.test",
  dnsNames: ["fixture.test"],
  usages: ["serverAuth"],
});

/** A Secret `namespace/name` holding {@link FIXTURE_CERT} (of type kubernetes.io/tls unless `type` says otherwise). */
export function tlsSecret(name: string, namespace = "default", type = "kubernetes.io/tls"): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace, name },
    type,
    data: { "tls.crt": btoa(FIXTURE_CERT.certPem), "tls.key": btoa(FIXTURE_CERT.keyPem) },
  };
}

/** A kubernetes.io/tls Secret `default/<name>` holding a real certificate and key. */
export function realTlsSecret(name: string, cert: { certPem: string; keyPem: string }): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: { namespace: "default", name },
    data: { "tls.crt": btoa(cert.certPem), "tls.key": btoa(cert.keyPem) },
  };
}

/** The PEM file the proxy writes for a TLS Secret: certificate, then key. */
export function pemFile(cert: { certPem: string; keyPem: string }): string {
  return `${cert.certPem.trimEnd()}\n${cert.keyPem.trimEnd()}\n`;
}

/** Services (one port each) whose one endpoint is a test server on 127.0.0.1. */
export function loopbackServices(
  list: { name: string; servicePort: number; port: number }[],
): { services: V1Service[]; endpointSlices: V1EndpointSlice[] } {
  return {
    services: list.map((s) => service(s.name, [{ port: s.servicePort }])),
    endpointSlices: list.map((s) => endpointSlice(s.name, [{ name: "", port: s.port }], [{ address: "127.0.0.1" }])),
  };
}

/**
 * Hashes computed once with Debian 12's crypt(3) (libxcrypt), too slow to compute in each run:
 * SHA-crypt at the proxy's rounds limit, and the costly shapes a hostile tenant writes (each names
 * the password it was made from).
 */
export const CRYPT_HASHES = {
  /** crypt("bob-pw", "$6$rounds=30000$costbound") */
  bobSha512AtLimit: "$6$rounds=30000$costbound$D6IuT40tssze4LBVLCjVGS.A1luq0tbZCXthBWEGURyU4oz7kdJDvqKlP3h90bvi" +
    "KcJtQ91Cr.78rbtulNQnv0",
  /** crypt("carol-pw", "$5$rounds=30000$costbound") */
  carolSha256AtLimit: "$5$rounds=30000$costbound$14jAm..BbXWT9rMkLs4EJkR0inJj7/vbee.hrlPtQC0",
  /** crypt("mallory-pw", "$2b$16$MalloryCostlyHashSalt."): about 3 s a check, past HAProxy's watchdog */
  malloryBcrypt16: "$2b$16$MalloryCostlyHashSalt.r7wyBF4rFZunNe4e0k7XQFEgPheF/Pe",
  /** crypt("trudy-pw", "$6$rounds=20000000$trudyslow"): about 5 s a check */
  trudySha512Slow: "$6$rounds=20000000$trudyslow$grDK29W/pQizqMdrZSzEXhcNBXYOfAg5vLvO52B1mtE8TS8l31p44PvpCGoLjvuHq" +
    "wJqYggKB5R.WBSNWSYAx.",
};
