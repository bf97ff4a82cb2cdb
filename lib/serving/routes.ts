/**
 * @module serving/routes
 * The paths served after authentication and authorization (secure port) or directly (ops
 * listener): health probes, `/version`, `/metrics`, `/debug/pprof/` when profiling, and
 * `/openapi/v2` + `/swagger-ui` when the swagger UI is enabled. POST endpoints of other parts
 * (lib/parts/secure_port.ts `BodyRoute`) are answered by serving/body_route.ts.
 */
import { registry } from "../metrics/registry.ts";
import type { Reply } from "../parts/secure_port.ts";
import type { HealthChecks } from "../parts/health.ts";
import { openApiDocument, type PathDoc, swaggerPage } from "./openapi.ts";
import { defaultCpuSeconds, defaultHeapSeconds, maxProfileSeconds, Profiler } from "./profiling.ts";

export interface RoutesOptions {
  readonly release: "A" | "B" | "C";
  readonly version: string;
  readonly health: HealthChecks;
  readonly profiler: Profiler | null;
  readonly swaggerUi: boolean;
  /** The ops listener has a landing page at `/`. */
  readonly landingPage: boolean;
}

const text = (status: number, body: string): Reply => ({ status, contentType: "text/plain; charset=utf-8", body });

export class Routes {
  readonly #o: RoutesOptions;
  readonly #doc: Record<string, unknown>;

  constructor(o: RoutesOptions) {
    this.#o = o;
    this.#doc = openApiDocument("ingress-controller", o.version, this.documented());
  }

  /** The paths this instance serves, as the OpenAPI document lists them. */
  documented(): PathDoc[] {
    const plain = "text/plain";
    const docs: PathDoc[] = [
      { path: "/healthz", summary: "All health checks", produces: plain, parameters: verbose },
      { path: "/livez", summary: "Liveness checks", produces: plain, parameters: verbose },
      {
        path: "/readyz",
        summary: "Readiness checks (registered by the controller)",
        produces: plain,
        parameters: verbose,
      },
      { path: "/version", summary: "Release and version of this build", produces: "application/json" },
      { path: "/metrics", summary: "Prometheus metrics of the controller", produces: "text/plain; version=0.0.4" },
    ];
    if (this.#o.profiler) {
      docs.push(
        { path: "/debug/pprof/", summary: "Index of the profiles", produces: "text/html" },
        {
          path: "/debug/pprof/profile",
          summary: "CPU profile (Chrome .cpuprofile JSON)",
          produces: "application/json",
          parameters: [seconds(defaultCpuSeconds)],
        },
        {
          path: "/debug/pprof/heap",
          summary: "Sampling heap profile: allocation stacks and sizes, no memory contents (Chrome .heapprofile JSON)",
          produces: "application/json",
          parameters: [seconds(defaultHeapSeconds)],
        },
        {
          path: "/debug/pprof/eventloop",
          summary: "Event-loop delay histogram (--contention-profiling)",
          produces: "application/json",
        },
      );
    }
    if (this.#o.swaggerUi) {
      docs.push(
        { path: "/openapi/v2", summary: "This document", produces: "application/json" },
        { path: "/swagger-ui", summary: "This document rendered as HTML", produces: "text/html" },
      );
    }
    return docs;
  }

  isLongRunning(path: string): boolean {
    return this.#o.profiler !== null && Profiler.isLongRunning(path);
  }

  /** `signal` aborts when the client has gone away (ends a running profile early). */
  async answer(method: string, url: URL, signal?: AbortSignal): Promise<Reply> {
    if (method !== "GET" && method !== "HEAD") {
      return { ...text(405, "method not allowed\n"), headers: { Allow: "GET, HEAD" } };
    }
    const path = url.pathname;
    const probe = await this.#o.health.answer(path, url.searchParams);
    if (probe) return text(probe.status, probe.body);
    if (path === "/version") {
      const [major, minor] = this.#o.version.split(".");
      return {
        status: 200,
        contentType: "application/json",
        body: JSON.stringify(
          {
            major,
            minor,
            gitVersion: `v${this.#o.version}`,
            release: this.#o.release,
            version: this.#o.version,
            runtime: `deno ${Deno.version.deno}`,
            platform: `${Deno.build.os}/${Deno.build.arch}`,
          },
          null,
          2,
        ) + "\n",
      };
    }
    if (path === "/metrics") return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
    if (this.#o.profiler && (path === "/debug/pprof" || path.startsWith("/debug/pprof/"))) {
      const r = await this.#o.profiler.answer(path, url.searchParams, signal);
      if (r) return r;
    }
    if (this.#o.swaggerUi) {
      if (path === "/openapi/v2") {
        return { status: 200, contentType: "application/json", body: JSON.stringify(this.#doc, null, 2) + "\n" };
      }
      if (path === "/swagger-ui" || path === "/swagger-ui/") {
        return { status: 200, contentType: "text/html; charset=utf-8", body: swaggerPage(this.#doc) };
      }
    }
    if (this.#o.landingPage && path === "/") {
      const links = this.documented().map((d) => `<li><a href="${d.path}">${d.path}</a>: ${d.summary}</li>`).join("");
      return {
        status: 200,
        contentType: "text/html; charset=utf-8",
        body:
          `<!doctype html><html><head><title>ingress-controller</title></head><body><h1>ingress-controller ${this.#o.version}</h1><ul>${links}</ul></body></html>\n`,
      };
    }
    return text(404, "404 page not found\n");
  }
}

const seconds = (dflt: number): NonNullable<PathDoc["parameters"]>[number] => ({
  name: "seconds",
  type: "integer",
  description: `duration, 1 to ${maxProfileSeconds} (default ${dflt}); one profile runs at a time`,
});

const verbose: PathDoc["parameters"] = [
  { name: "verbose", type: "boolean", description: "list every check" },
  { name: "exclude", type: "string", description: "skip the named check (repeatable)" },
];
