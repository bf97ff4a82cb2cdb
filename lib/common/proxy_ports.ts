/**
 * @module common/proxy_ports
 * The ports of the proxy pod: what clients see of an Ingress proxy, where HAProxy listens inside
 * the pod, and the pod's internal ports. A leaf (it imports nothing), so the controller's pod spec
 * (lib/controller/proxy_pod.ts) and the Gateway's port mapping (lib/gateway/ports.ts) share it.
 */

/** The public Service's ports (clients see these). */
export const httpPort = 80;
export const httpsPort = 443;
/** Where HAProxy listens in the pod: unprivileged, so the pod needs no capability (the Service maps 80/443). */
export const containerHttpPort = 8080;
export const containerHttpsPort = 8443;
/** HAProxy's stats page: on the pod's loopback only (lib/proxy/haproxy.ts), read there by the exporter. */
export const statsPort = 56789;
export const exporterPort = 56790;
/** The proxy's probe endpoint (`proxy --health-port`). */
export const healthPort = 56791;
