/**
 * @module lib/dev/images/refs
 * The names of the images `deno task images` builds. The controller's and the proxy's come from
 * the option table (`--image-registry`, `--exporter-image-tag`, `--proxy-image-tag` of a release),
 * so that the controller's defaults point at what was built; the test backend and the node's pause
 * image have names of their own.
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
