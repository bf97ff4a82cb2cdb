/**
 * @module lib/dev/localnode/config
 * The single-node cluster's addresses and the configuration files of its parts (containerd, the
 * CNI bridge, kubelet, kube-proxy). Facts measured on our machines shape them: the sandbox refuses
 * to lower oom_score_adj (containerd `restrict_oom_score_adj`, else runc fails with "can't get final
 * child's PID from pipe"), cgroups are v1 hierarchies (kubelet `cgroupDriver: cgroupfs`,
 * `failCgroupV1: false`), Debian puts the CNI plugins in /usr/lib/cni, and no image can be pulled
 * (the sandbox image is our pause image; image garbage collection is off).
 */
import { join } from "node:path";

/** Addresses inside the cluster's network namespace; none is routed anywhere outside it. */
export const net = {
  nodeName: "node-1",
  /** On the namespace's loopback interface: the node's address (API server advertise address, kubelet). */
  nodeIp: "10.254.0.1",
  /** Pods, on the CNI bridge. */
  podCidr: "10.244.0.0/24",
  clusterCidr: "10.244.0.0/16",
  /** Services (kube-apiserver's `--service-cluster-ip-range` in control_plane.ts). */
  serviceCidr: "10.0.0.0/24",
  /** The DNS add-on's Service (kube-system/kube-dns), the pods' nameserver (dns_addon.ts). */
  dnsIp: "10.0.0.10",
} as const;

/** The files and sockets of one cluster, all under `dir`. */
export function clusterPaths(dir: string) {
  return {
    containerdRoot: join(dir, "containerd/root"),
    containerdState: join(dir, "containerd/state"),
    containerdSocket: join(dir, "containerd/containerd.sock"),
    containerdConfig: join(dir, "containerd/config.toml"),
    cniConfDir: join(dir, "cni/net.d"),
    cniIpamDir: join(dir, "cni/ipam"),
    kubeletRoot: join(dir, "kubelet"),
    kubeletConfig: join(dir, "kubelet-config.yaml"),
    podLogs: join(dir, "pod-logs"),
    kubeProxyConfig: join(dir, "kube-proxy-config.yaml"),
    rootCa: join(dir, "root-ca.crt"),
    resolvConf: join(dir, "resolv.conf"),
    logs: join(dir, "logs"),
  };
}
export type ClusterPaths = ReturnType<typeof clusterPaths>;

export function containerdConfig(p: ClusterPaths, sandboxImage: string): string {
  return `version = 2
root = "${p.containerdRoot}"
state = "${p.containerdState}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${p.containerdSocket}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${p.containerdRoot}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${sandboxImage}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${p.cniConfDir}"
`;
}

export function cniConfig(p: ClusterPaths): string {
  return JSON.stringify(
    {
      cniVersion: "0.4.0",
      name: "ic-cluster",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: p.cniIpamDir,
            ranges: [[{ subnet: net.podCidr }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/** `clusterDns`: pods get the DNS add-on's address as their nameserver (when the cluster runs it). */
export function kubeletConfig(p: ClusterPaths, cgroupRoot: string, clusterDns = false): string {
  return JSON.stringify(
    {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      cgroupDriver: "cgroupfs",
      failCgroupV1: false,
      cgroupRoot,
      containerRuntimeEndpoint: `unix://${p.containerdSocket}`,
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: "AlwaysAllow" },
      address: net.nodeIp,
      readOnlyPort: 0,
      healthzPort: 0,
      clusterDomain: "cluster.local",
      ...(clusterDns ? { clusterDNS: [net.dnsIp] } : {}),
      resolvConf: p.resolvConf,
      failSwapOn: false,
      podLogsDir: p.podLogs,
      // Nothing can be pulled again: never collect images, never evict for disk.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
      makeIPTablesUtilChains: false,
      serializeImagePulls: false,
    },
    null,
    2,
  );
}

export function kubeProxyConfig(kubeconfig: string): string {
  return JSON.stringify(
    {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      mode: "iptables",
      clientConnection: { kubeconfig },
      hostnameOverride: net.nodeName,
      clusterCIDR: net.clusterCidr,
      bindAddress: net.nodeIp,
      healthzBindAddress: "",
      metricsBindAddress: "127.0.0.1:10249",
      // Leave the namespace's conntrack settings alone (the sandbox may refuse to change them).
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    },
    null,
    2,
  );
}
