/**
 * @module controller/v8_flags
 * The V8 flags the controller and proxy containers run with (`DENO_V8_FLAGS`). With V8's defaults
 * on a large host (young-generation semi-spaces up to 16 MB, an old-space limit of several GB), a
 * controller holding 10,000 Ingresses, Services and EndpointSlices kept pages it no longer used:
 * 265 MB RSS for 41 MB of live heap. Small semi-spaces and a heap limit make it collect before it
 * grows (160 MB, same workload), at no measurable cost in render time. The limit is a ceiling on
 * live objects too: the chart derives it from the container's memory limit (the chart's `controller.heapLimitMB`).
 */

/** MB per young-generation semi-space. */
export const SEMI_SPACE_MB = 2;

/** The controller's old-space limit in the chart's defaults (its memory limit is 1 GiB). */
export const CONTROLLER_HEAP_LIMIT_MB = 768;

/** A proxy process holds one configuration (a few MB at 10,000 routes) and its Secrets. */
export const PROXY_HEAP_LIMIT_MB = 512;

/** The value of `DENO_V8_FLAGS` for a process whose heap may grow to `heapLimitMB`. */
export function v8Flags(heapLimitMB: number): string {
  if (!Number.isInteger(heapLimitMB) || heapLimitMB < 64) {
    throw new RangeError(`heap limit ${heapLimitMB} MB: give a whole number of MB, at least 64`);
  }
  return `--max-semi-space-size=${SEMI_SPACE_MB},--max-old-space-size=${heapLimitMB}`;
}
