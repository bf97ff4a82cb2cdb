/**
 * The command lines of `deno task conformance` (lib/dev/conformance/suite_args.ts): `--set` goes to
 * helm, everything else to the suite after the harness's own flags (so a caller's flag adds to or
 * overrides them); the suite is never told its features; the report is named as upstream names
 * reports; the implementation fields come from the environment when set.
 */
import assert from "node:assert/strict";
import { implementation, parseTaskArgs, reportFileName, suiteArgs } from "../../../lib/dev/conformance/suite_args.ts";
import { VERSIONS } from "../../../lib/flags/table.ts";

Deno.test("--set goes to helm; every other argument to the suite, in order", () => {
  assert.deepEqual(
    parseTaskArgs(["-run-test=HTTPRouteWeight", "--set", "controller.options.v=2", "-debug", "--set=release=A"]),
    { helmSets: ["controller.options.v=2", "release=A"], suiteArgs: ["-run-test=HTTPRouteWeight", "-debug"] },
  );
  assert.throws(() => parseTaskArgs(["--set"]), /--set needs key=value/);
  assert.throws(() => parseTaskArgs(["--set", "novalue"]), /--set needs key=value .* got "novalue"/);
});

Deno.test("the suite's arguments: the whole test, the profiles (HTTP, gRPC, TLS), the report fields; features never passed", () => {
  const impl = implementation(() => undefined);
  const args = suiteArgs({ gatewayClass: "ingress-controller", reportPath: "/r.yaml", impl, extra: ["-debug"] });
  assert.equal(args[0], "-test.run=^TestConformance$");
  for (
    const a of [
      "-test.v",
      "-gateway-class=ingress-controller",
      "-conformance-profiles=GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TLS",
      "-mode=default",
      "-report-output=/r.yaml",
      `-version=${VERSIONS.A}`,
      "-project=ingress-controller",
    ]
  ) assert.ok(args.includes(a), a);
  assert.equal(args.at(-1), "-debug", "the caller's flags come last (Go keeps the last value)");
  assert.ok(!args.some((a) => /^-(supported|exempt)-features|^-all-features/.test(a)), args.join(" "));
  for (const f of ["organization", "url", "contact"]) {
    assert.ok(args.some((a) => a.startsWith(`-${f}=`) && a.length > f.length + 2));
  }
});

Deno.test("the implementation's organization, url and contact come from the environment when set", () => {
  const env: Record<string, string> = {
    CONFORMANCE_ORGANIZATION: "Example Org",
    CONFORMANCE_URL: "https://example.org/ic",
    CONFORMANCE_CONTACT: "@a, @b",
  };
  const impl = implementation((n) => env[n]);
  assert.deepEqual(impl, {
    organization: "Example Org",
    project: "ingress-controller",
    url: "https://example.org/ic",
    version: VERSIONS.A,
    contact: ["@a", "@b"],
  });
  assert.ok(suiteArgs({ gatewayClass: "x", reportPath: "r", impl }).includes("-contact=@a,@b"));
  assert.equal(reportFileName(impl), `standard-${VERSIONS.A}-default-report.yaml`);
});
