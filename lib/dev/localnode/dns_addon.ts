/**
 * @module lib/dev/localnode/dns_addon
 * The cluster's DNS add-on, as clusters usually run it: CoreDNS (the image `deno task images`
 * builds from its Go module) in kube-system, its `kubernetes` plugin answering for
 * `cluster.local` (Services, headless Services' pods, reverse lookups), behind the Service
 * `kube-dns` at the address the kubelet gives pods as their nameserver (`clusterDNS`). Nothing is
 * forwarded: the cluster's network reaches no resolver outside it. Its rights are CoreDNS's usual
 * ones: read Services, EndpointSlices, Pods and Namespaces.
 */
import type { ManifestObject } from "../deploy/apply.ts";
import { net } from "./config.ts";

const NS = "kube-system";
const NAME = "coredns";
const labels = { "k8s-app": "kube-dns" };

export const corefile = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30
    loop
    reload
    loadbalance
}
`;

/** The add-on's objects, for server-side apply in this order. */
export function dnsAddonObjects(image: string): ManifestObject[] {
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: NAME, namespace: NS } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: NAME, namespace: NS }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: NAME, namespace: NS }, data: { Corefile: corefile } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: NAME, namespace: NS, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: NAME,
            priorityClassName: "system-cluster-critical",
            // Its own lookups go nowhere: the node's resolv.conf is empty.
            dnsPolicy: "Default",
            containers: [{
              name: "coredns",
              image,
              imagePullPolicy: "Never",
              args: ["-conf", "/etc/coredns/Corefile"],
              ports: [
                { name: "dns", containerPort: 53, protocol: "UDP" },
                { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
              ],
              readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
              livenessProbe: { httpGet: { path: "/health", port: 8080 }, periodSeconds: 10, failureThreshold: 5 },
              resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "170Mi" } },
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] },
                readOnlyRootFilesystem: true,
              },
              volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
            }],
            volumes: [{ name: "config", configMap: { name: NAME } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: NS, labels: { ...labels, "kubernetes.io/name": "CoreDNS" } },
      spec: {
        selector: labels,
        clusterIP: net.dnsIp,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
        ],
      },
    },
  ];
}
