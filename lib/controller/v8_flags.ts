/**
 * @module controller/v8_flags
 * The V8 flags the controller and proxy containers run with (`DENO_V8_FLAGS`). With V8's defaults
 * on a large host (young-generation semi-spaces up to 16 MB, an old-space limit of several GB), a
 * controller holding 10,000 Ingresses, Services and EndpointSlices kept pages it no longer used:
 * 265 MB RSS for 41 MB of live heap. Bounded semi-spaces and a heap limit make it collect before it
 * grows (160 MB, same workload). The limit is a ceiling on live objects too: the chart derives it
 * from the container's memory limit (the chart's `controller.heapLimitMB`).
 */

/** MB per young-generation semi-space of a proxy process (little garbage per change). */
export const PROXY_SEMI_SPACE_MB = 2;

/**
 * MB per young-generation semi-space of the controller. A one-Ingress change at 10,000 makes a few
 * MB of garbage that lives until the change is published; with 2 MB semi-spaces much of it
 * outlived two scavenges and was promoted, and old-space collections took 13 ms of every change
 * (CPU profile of the scale bench, 40 changes); with 8 MB, 4 ms, and the settled RSS stayed the
 * same (V8's memory reducer shrinks the young generation of an idle process).
 */
export const CONTROLLER_SEMI_SPACE_MB = 8;

/** The controller's old-space limit in the chart's defaults (its memory limit is 1 GiB). */
export const CONTROLLER_HEAP_LIMIT_MB = 768;

/** A proxy process holds one configuration (a few MB at 10,000 routes) and its Secrets. */
export const PROXY_HEAP_LIMIT_MB = 512;

/** The value of `DENO_V8_FLAGS` for a process whose heap may grow to `heapLimitMB`. */
export function v8Flags(heapLimitMB: number, semiSpaceMB: number): string {
  if (!Number.isInteger(heapLimitMB) || heapLimitMB < 64) {
    throw new RangeError(`heap limit ${heapLimitMB} MB: give a whole number of MB, at least 64`);
  }
  return `--max-semi-space-size=${semiSpaceMB},--max-old-space-size=${heapLimitMB}`;
}
