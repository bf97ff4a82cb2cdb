import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { leaveOut, makeStandIns } from "../../lib/proxy/left_out.ts";
import { STAND_IN_FILE } from "../../lib/proxy/files.ts";
import type { DesiredState } from "../../lib/proxy/plan.ts";
import { caBundleProblem, tlsPairProblem } from "../../lib/pki/secret_checks.ts";

const standIns = { certificate: "STAND-IN CERT\n", ca: "STAND-IN CA\n" };

function state(crtList: string, files: string[]): DesiredState {
  return { config: "global\n", crtList, pems: new Map(files.map((f) => [f, `pem of ${f}`])) };
}

Deno.test("leaveOut: a certificate loses its crt-list lines; the others and the default stay", () => {
  const s = state(
    "ops_default.pem !*\na_one.pem one.test\nb_two.pem [ca-file b_ca_ca.pem verify required] two.test\n",
    [
      "ops_default.pem",
      "a_one.pem",
      "b_two.pem",
      "b_ca_ca.pem",
    ],
  );
  const out = leaveOut(s, new Set(["b_two.pem"]), standIns);
  assert.equal(out.crtList, "ops_default.pem !*\na_one.pem one.test\n");
  assert.deepEqual([...out.pems.keys()], ["ops_default.pem", "a_one.pem", "b_ca_ca.pem"]);
  assert.equal(out.config, s.config);
  assert.equal(leaveOut(s, new Set(), standIns), s, "nothing left out: the same state");
});

Deno.test("leaveOut: when the first line or every line goes, the stand-in is the default; never another tenant's", () => {
  const s = state("a_one.pem one.test\nb_two.pem two.test\n", ["a_one.pem", "b_two.pem"]);
  const first = leaveOut(s, new Set(["a_one.pem"]), standIns);
  assert.equal(first.crtList, `${STAND_IN_FILE} !*\nb_two.pem two.test\n`);
  assert.equal(first.pems.get(STAND_IN_FILE), standIns.certificate);
  const all = leaveOut(s, new Set(["a_one.pem", "b_two.pem"]), standIns);
  assert.equal(all.crtList, `${STAND_IN_FILE} !*\n`, "HAProxy refuses an empty crt-list");
  assert.deepEqual([...all.pems.keys()], [STAND_IN_FILE]);
  // a left-out file that is not in the crt-list (its Secret was missing) changes nothing else
  assert.equal(leaveOut(s, new Set(["c_three.pem"]), standIns).crtList, s.crtList);
});

Deno.test("leaveOut: a CA file keeps its place with a CA that verifies nothing", () => {
  const s = state("a_one.pem [ca-file a_ca_ca.pem verify required] one.test\n", ["a_one.pem", "b_ca_ca.pem"]);
  const out = leaveOut(s, new Set(["a_ca_ca.pem", "b_ca_ca.pem"]), standIns);
  assert.equal(out.crtList, s.crtList);
  assert.equal(out.pems.get("a_ca_ca.pem"), standIns.ca);
  assert.equal(out.pems.get("b_ca_ca.pem"), standIns.ca);
  // a CA ConfigMap's file too
  const cm = leaveOut(state("", ["c_ca_configmap_ca.pem"]), new Set(["c_ca_configmap_ca.pem"]), standIns);
  assert.equal(cm.pems.get("c_ca_configmap_ca.pem"), standIns.ca);
});

Deno.test("stand-ins: a certificate the proxy can serve, and a CA certificate without its key", async () => {
  const made = await makeStandIns();
  const [crt, key] = [
    made.certificate.split("-----BEGIN PRIVATE KEY")[0],
    made.certificate.slice(made.certificate.indexOf("-----BEGIN PRIVATE KEY")),
  ];
  assert.equal(tlsPairProblem(crt, key), null);
  assert.match(new X509Certificate(crt).subject, /CN=no-certificate\.invalid/);
  assert.equal(caBundleProblem(made.ca), null);
  assert.ok(new X509Certificate(made.ca).ca);
  assert.ok(!made.ca.includes("PRIVATE KEY"));
});
