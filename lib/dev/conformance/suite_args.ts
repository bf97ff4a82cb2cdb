/**
 * @module lib/dev/conformance/suite_args
 * The command line of `deno task conformance` and the one it gives the suite's binary.
 *
 *   deno task conformance [--set key=value]… [suite flag]…
 *
 * `--set key=value` (repeatable) goes to `helm install` of the chart; every other argument goes to
 * `conformance.test` after the harness's own flags, so it may add one (`-run-test=HTTPRouteWeight`,
 * `-skip-tests=…`, `-debug`) or override one (Go's flag package keeps the last value). The
 * harness never passes `-supported-features`: the suite infers them from the GatewayClass status.
 */
import { VERSIONS } from "../../flags/table.ts";
import { PROFILES } from "./core_tests.ts";

export interface TaskArgs {
  /** `--set` values for helm, as `key=value`. */
  helmSets: string[];
  /** Arguments for the suite's binary. */
  suiteArgs: string[];
}

/** Splits the task's arguments; throws on a `--set` without a `key=value`. */
export function parseTaskArgs(args: readonly string[]): TaskArgs {
  const helmSets: string[] = [];
  const suiteArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    let value: string | undefined;
    if (a === "--set") value = args[++i];
    else if (a.startsWith("--set=")) value = a.slice("--set=".length);
    else {
      suiteArgs.push(a);
      continue;
    }
    if (value === undefined || !/^[A-Za-z0-9_.\-\[\]]+=/.test(value)) {
      throw new Error(`--set needs key=value (a helm value for the chart), got ${JSON.stringify(value ?? "")}`);
    }
    helmSets.push(value);
  }
  return { helmSets, suiteArgs };
}

/** Who the report names as the implementation (ConformanceReport.implementation). */
export interface Implementation {
  organization: string;
  project: string;
  url: string;
  version: string;
  contact: string[];
}

/**
 * The implementation fields of the report: the project and its release A version; organization,
 * url and contact from `CONFORMANCE_ORGANIZATION`, `CONFORMANCE_URL`, `CONFORMANCE_CONTACT`
 * (comma-separated) when set, since a report submitted upstream must name the real ones.
 */
export function implementation(env: (name: string) => string | undefined): Implementation {
  return {
    organization: env("CONFORMANCE_ORGANIZATION") || "ingress-controller",
    project: "ingress-controller",
    url: env("CONFORMANCE_URL") || "https://github.com/ingress-controller/ingress-controller",
    version: VERSIONS.A,
    contact: (env("CONFORMANCE_CONTACT") || "@ingress-controller/maintainers").split(",").map((c) => c.trim())
      .filter(Boolean),
  };
}

/** The report's file name, as upstream names reports: `<channel>-<version>-<mode>-report.yaml`. */
export function reportFileName(impl: Implementation, channel = "standard", mode = "default"): string {
  return `${channel}-${impl.version}-${mode}-report.yaml`;
}

/** The suite binary's arguments: the harness's flags, then the caller's. */
export function suiteArgs(opts: {
  gatewayClass: string;
  reportPath: string;
  impl: Implementation;
  extra?: readonly string[];
}): string[] {
  const { impl } = opts;
  return [
    "-test.run=^TestConformance$",
    "-test.v",
    "-test.timeout=60m",
    `-gateway-class=${opts.gatewayClass}`,
    `-conformance-profiles=${PROFILES.map((p) => p.name).join(",")}`,
    `-organization=${impl.organization}`,
    `-project=${impl.project}`,
    `-url=${impl.url}`,
    `-version=${impl.version}`,
    `-contact=${impl.contact.join(",")}`,
    "-mode=default",
    `-report-output=${opts.reportPath}`,
    // The cluster is removed right after: deleting the base manifests would only cost time.
    "-cleanup-base-resources=false",
    ...(opts.extra ?? []),
  ];
}
