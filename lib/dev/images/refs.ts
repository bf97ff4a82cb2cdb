/**
 * @module lib/dev/images/refs
 * The names of the images `deno task images` builds. The controller's and the proxy's come from
 * the option table (`--image-registry`, `--exporter-image-tag`, `--proxy-image-tag` of a release),
 * so that the controller's defaults point at what was built; the test backend and the node's pause
 * image have names of their own. The Gateway API conformance suite's images carry the names its
 * manifests (sigs.k8s.io/gateway-api/conformance v1.6.3: base/manifests.yaml, tests/*.yaml) use,
 * so that they run from the node's images and are never pulled.
 */
import { type Release, runTable } from "../../flags/table.ts";

export interface ImageRefs {
  /** `<registry>/ingress-controller:<exporter tag>`: the program (run, exporter, …). */
  controller: string;
  /** `<registry>/haproxy:<proxy tag>`: HAProxy and the program running `proxy`. */
  proxy: string;
  /** The end-to-end tests' backend. */
  echo: string;
  /** The node's pod sandbox image. */
  pause: string;
}

/**
 * The conformance suite's echo backend (echo-basic, built from the conformance module) under every
 * name the suite's manifests give it: v1.5.1 (most backends), v1.6.0-dev.3 (infra-backend-v3),
 * v1.6.0-dev.2 (the TCP/UDP route tests' backends).
 */
export const echoBasicRefs = [
  "registry.k8s.io/gateway-api/echo-basic:v1.5.1",
  "registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.3",
  "registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.2",
] as const;
/** CoreDNS, built from its Go module, under the name the suite's manifests use (and the node's DNS add-on). */
export const corednsRef = "registry.k8s.io/coredns/coredns:v1.12.2";

export const echoRef = "ingress-controller-test/echo:dev";
export const pauseRef = "ingress-controller-test/pause:dev";

/** The image references for `release` (default A, the newest). */
export function imageRefs(release: Release = "A"): ImageRefs {
  const registry = String(runTable["image-registry"].default.A).replace(/\/+$/, "");
  return {
    controller: `${registry}/ingress-controller:${runTable["exporter-image-tag"].default[release]}`,
    proxy: `${registry}/haproxy:${runTable["proxy-image-tag"].default[release]}`,
    echo: echoRef,
    pause: pauseRef,
  };
}

/** The image reference as containerd names it (`docker.io/` and `:latest` added where missing). */
export function normalizedRef(ref: string): string {
  const slash = ref.indexOf("/");
  const first = slash < 0 ? "" : ref.slice(0, slash);
  let out = first.includes(".") || first.includes(":") || first === "localhost" ? ref : `docker.io/${ref}`;
  if (/^docker\.io\/[^/]+$/.test(out.split(":")[0])) out = out.replace("docker.io/", "docker.io/library/");
  return /:[^/]+$/.test(out) || out.includes("@") ? out : `${out}:latest`;
}
