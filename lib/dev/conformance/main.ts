/**
 * @module lib/dev/conformance/main
 * `deno task conformance [--set key=value]… [suite flag]…`: the official Gateway API conformance
 * suite (sigs.k8s.io/gateway-api/conformance v1.6.3, profiles GATEWAY-HTTP, GATEWAY-GRPC and GATEWAY-TLS) against this project on
 * its own single-node cluster, in one command:
 *   1. Go builds (cached): the cluster's binaries and helm, the suite's test binary and the CRDs;
 *   2. the images (`deno task images`: the project's, echo-basic under the suite's names, CoreDNS);
 *   3. the cluster (lib/dev/localnode) with those images imported;
 *   4. the CRDs (server-side apply), then the chart with its GatewayClass `ingress-controller`;
 *   5. `conformance.test -test.run '^TestConformance$'` inside the cluster's network namespace,
 *      features inferred from the GatewayClass status, the report written to
 *      `dist/conformance/<channel>-<version>-default-report.yaml`, the log beside it;
 *   6. the pod logs and the Gateway API objects copied to `dist/conformance/diagnostics/`, then the
 *      summary, each profile's core result, ending with the line `N passed, M failed` (the core
 *      tests of every profile).
 * Exits 0 only when every core test of every profile passed, none was skipped, and no extended
 * test of a claimed feature failed. The cluster is always removed,
 * also on Ctrl-C or a failure. See suite_args.ts for the arguments.
 */
import { join } from "node:path";
import { buildBinaries } from "../localenv/binaries.ts";
import { register } from "../localenv/cleanup.ts";
import { ensureHelm } from "../localenv/helm.ts";
import { buildImages, repoRoot } from "../images/build.ts";
import { type Cluster, startCluster } from "../localnode/mod.ts";
import { PROFILES, SUITE_VERSION } from "./core_tests.ts";
import {
  applyCrds,
  collectDiagnostics,
  GATEWAY_CLASS,
  gatewayClassLines,
  insideKubeconfig,
  installChart,
} from "./cluster_setup.ts";
import { Phases } from "./phases.ts";
import {
  assertionErrors,
  type ConformanceReport,
  conformant,
  coreSummary,
  extendedFailures,
  parseReport,
  suiteOutcome,
  summaryLines,
  testOutcomes,
} from "./report.ts";
import { runSuite } from "./suite.ts";
import { implementation, parseTaskArgs, reportFileName, suiteArgs } from "./suite_args.ts";

const say = (line: string) => console.log(line);
const nodeBinaries = ["kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy"];

/** The signal that stopped the run, if any: the cluster and the suite are then stopped by cleanup.ts. */
let interrupted: Deno.Signal | null = null;
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => {
    interrupted ??= sig;
    // The run then ends by itself once what it waits on has failed; a wait that does not end is cut short.
    Deno.unrefTimer(setTimeout(() => Deno.exit(130), 60_000));
  });
}

async function main(): Promise<number> {
  const { helmSets, suiteArgs: extra } = parseTaskArgs(Deno.args);
  const phases = new Phases(say);
  const outDir = join(repoRoot, "dist/conformance");
  await Deno.mkdir(outDir, { recursive: true });
  const impl = implementation((n) => Deno.env.get(n));
  const reportPath = join(outDir, reportFileName(impl));
  const logPath = reportPath.replace(/-report\.yaml$/, ".log");
  await Deno.remove(reportPath).catch(() => {});
  const profiles = PROFILES.map((p) => p.name).join(", ");
  say(`conformance: Gateway API ${SUITE_VERSION}, profiles ${profiles}, ${impl.project} ${impl.version}`);

  let cluster: Cluster | null = null;
  // Helm's home and the in-cluster admin kubeconfig: removed at the end, also on Ctrl-C (cleanup.ts
  // stops the cluster and the suite's process then).
  const work = await Deno.makeTempDir({ prefix: "ic-conformance-" });
  const removeWork = () => Deno.remove(work, { recursive: true }).catch(() => {});
  const unregister = register(removeWork);
  try {
    await phases.run("Go builds: cluster binaries, helm", async () => {
      await buildBinaries([]);
      await buildBinaries(nodeBinaries);
      await ensureHelm();
    });
    const suiteDir = await phases.run("Go builds: conformance.test, CRDs, echo-basic, CoreDNS", async () => {
      await buildBinaries(["echo", "pause"]);
      return await buildBinaries(["conformance.test", "gateway-crds", "echo-basic", "coredns"]);
    });
    const images = await phases.run(
      "images (deno task images)",
      () => buildImages(join(repoRoot, "dist/images"), say),
    );
    cluster = await phases.run("cluster start", () => startCluster({ images: images.map((i) => i.archive), say }));
    const c = cluster;
    await phases.run("Gateway API CRDs (server-side apply)", async () => {
      const crds = await applyCrds(c, join(suiteDir, "crds/standard"));
      say(`  ${crds.length} CRDs Established`);
    });
    await phases.run("chart install (helm install, controller Ready)", async () => {
      await installChart(c, helmSets, work);
      for (const l of await gatewayClassLines(c)) say(`  ${l}`);
    });
    const kubeconfig = await insideKubeconfig(c, join(work, "kubeconfig-inside.yaml"));
    const args = suiteArgs({ gatewayClass: GATEWAY_CLASS, reportPath, impl, extra });
    const run = await phases.run("conformance suite", async () => {
      say(`  log: ${logPath}`);
      return await runSuite(c, join(suiteDir, "conformance.test"), args, { kubeconfig, logPath, cwd: work, say });
    });
    say("");
    for (const l of await gatewayClassLines(c)) say(l);
    const diagnostics = join(outDir, "diagnostics");
    await collectDiagnostics(c, diagnostics).then(
      () => say(`pod logs and Gateway API objects: ${diagnostics}`),
      (err) => say(`diagnostics: ${(err as Error).message}`),
    );

    const log = await Deno.readTextFile(logPath);
    let report: ConformanceReport | null = null;
    try {
      report = parseReport(await Deno.readTextFile(reportPath));
    } catch (err) {
      say(`report ${reportPath}: ${err instanceof Deno.errors.NotFound ? "not written" : (err as Error).message}`);
    }
    const outcome = suiteOutcome(log);
    say(
      `suite: exit ${run.code} after ${run.seconds.toFixed(0)} s; TestConformance ${
        outcome ? `${outcome.outcome} (${outcome.seconds} s)` : "has no result line (see the log)"
      }`,
    );
    const errors = assertionErrors(log);
    for (const e of errors.filter((x) => x.test === "TestConformance")) say(`suite error: ${e.message}`);
    if (report) say(`report: ${reportPath}`);
    say(`log: ${logPath}`);
    say("");
    for (const l of phases.table()) say(l);
    say("");
    const outcomes = testOutcomes(log);
    const summaries = PROFILES.map((p) => coreSummary(p.coreTests, outcomes, report, p.name, errors));
    // a claimed feature whose test fails is a false claim in the class's status: the run fails too
    const extFailed = [...new Set(PROFILES.flatMap((p) => extendedFailures(report, p.name)))];
    if (extFailed.length > 0) say(`extended tests failed (${extFailed.length}): ${extFailed.join(", ")}`);
    for (const l of summaryLines(summaries, report)) say(l);
    return summaries.every(conformant) && extFailed.length === 0 ? 0 : 1;
  } catch (err) {
    say(`conformance: ${interrupted ? `stopped by ${interrupted}` : (err as Error).message}`);
    say("");
    for (const l of phases.table()) say(l);
    say(`0 passed, ${PROFILES.reduce((n, p) => n + p.coreTests.length, 0)} failed`);
    return 1;
  } finally {
    await cluster?.stop();
    await removeWork();
    unregister();
  }
}

Deno.exit(await main());
