/**
 * The proxy's check of each certificate and CA file with its own HAProxy (lib/proxy/file_check.ts):
 * against the real Debian haproxy 2.6, exactly the files HAProxy refuses are named, each with
 * HAProxy's reason, whatever the controller's check said; verdicts are kept per content. The
 * narrowing-down of a failure that names no file is tested with a runner of plain objects.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileChecker } from "../../lib/proxy/file_check.ts";
import { HAProxy } from "../../lib/proxy/haproxy.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { tlsPairProblem } from "../../lib/pki/secret_checks.ts";
import {
  encryptedKey,
  GARBAGE_CERT,
  goodPair,
  mismatchedPair,
  sha1SignedPair,
  weakChainPair,
  weakRsaPair,
} from "../pki/materials.ts";

/** A FileChecker running the real haproxy, counting its runs. */
async function realChecker(workDir: string): Promise<{ checker: FileChecker; runs: () => number }> {
  const haproxy = new HAProxy({
    binary: await ensureHaproxy(),
    workDir,
    bindAddress: "127.0.0.1",
    httpPort: 1,
    httpsPort: 2,
    statsPort: 3,
    runtimeSocket: join(workDir, "runtime.sock"),
    certDir: join(workDir, "certs"),
  });
  let runs = 0;
  const checker = new FileChecker((config, dir) => {
    runs++;
    return haproxy.check(config, { IC_CERT_DIR: dir });
  }, join(workDir, "file-check"));
  return { checker, runs: () => runs };
}

const pem = (p: { crt: string; key: string }) => `${p.crt.trimEnd()}\n${p.key.trimEnd()}\n`;

Deno.test("file check: the real haproxy names exactly the files it refuses, in one run", async () => {
  const workDir = await Deno.makeTempDir({ prefix: "ic-file-check-" });
  try {
    const { checker, runs } = await realChecker(workDir);
    const good = await goodPair("good.test");
    const rsa = await goodPair("rsa.test", "RSA-2048");
    const weakChain = await weakChainPair("chain.test");
    // the controller's check passes this one: only HAProxy can refuse it
    assert.equal(tlsPairProblem(weakChain.crt, weakChain.key), null);
    const pems = new Map([
      ["a_good.pem", pem(good)],
      ["a_rsa.pem", pem(rsa)],
      ["b_mismatch.pem", pem(await mismatchedPair("m.test"))],
      ["b_encrypted.pem", `${rsa.crt.trimEnd()}\n${encryptedKey("pkcs8")}`],
      ["b_weak.pem", pem(await weakRsaPair("w.test"))],
      ["b_sha1.pem", pem(await sha1SignedPair("s.test"))],
      ["b_chain.pem", pem(weakChain)],
      ["a_ca_ca.pem", good.ca.certPem],
      ["b_garbage_ca.pem", good.ca.certPem + GARBAGE_CERT],
      ["b_text_ca.pem", "hello\n"],
    ]);
    const verdicts = await checker.check(pems, true);
    assert.equal(verdicts.unchecked, 0);
    assert.deepEqual([...verdicts.refused.keys()].sort(), [
      "b_chain.pem",
      "b_encrypted.pem",
      "b_garbage_ca.pem",
      "b_mismatch.pem",
      "b_sha1.pem",
      "b_text_ca.pem",
      "b_weak.pem",
    ]);
    const why = (f: string) => verdicts.refused.get(f)!;
    assert.match(why("b_mismatch.pem"), /inconsistencies between private key and certificate loaded 'b_mismatch\.pem'/);
    assert.match(why("b_encrypted.pem"), /No Private Key found/);
    assert.match(why("b_weak.pem"), /unable to load SSL certificate into SSL Context 'b_weak\.pem'/);
    assert.match(why("b_chain.pem"), /unable to load chain certificate/);
    assert.match(why("b_garbage_ca.pem"), /ca-file 'b_garbage_ca\.pem'/);
    for (const reason of verdicts.refused.values()) assert.ok(!reason.includes(workDir), reason);
    // one run names them all, a second confirms the rest loads
    assert.equal(runs(), 2);

    // known content is not checked again; a new content of one file is, alone
    assert.deepEqual(await checker.check(pems, true), verdicts);
    assert.equal(runs(), 2);
    const next = new Map(pems).set("b_mismatch.pem", pem(await goodPair("m.test")));
    const after = await checker.check(next, true);
    assert.ok(!after.refused.has("b_mismatch.pem"));
    assert.equal(after.refused.size, verdicts.refused.size - 1);
    assert.equal(runs(), 3);
    // without checkNew, new files are only counted
    const unknown = new Map(next).set("c_new.pem", pem(await goodPair("n.test")));
    assert.deepEqual((await checker.check(unknown, false)).unchecked, 1);
    assert.equal(runs(), 3);
    // files HAProxy ran with are known good; a file known refused keeps its verdict
    checker.loaded(new Map(unknown).set("b_weak.pem", "a stand-in"));
    const loaded = await checker.check(unknown, true);
    assert.equal(runs(), 3);
    assert.ok(loaded.refused.has("b_weak.pem") && !loaded.refused.has("c_new.pem"));
    // a file no longer listed is forgotten: listed again, it is checked again
    const only = new Map([["a_good.pem", pems.get("a_good.pem")!]]);
    assert.deepEqual([...(await checker.check(only, true)).refused], []);
    assert.equal(runs(), 3);
    const back = await checker.check(new Map(only).set("b_weak.pem", pems.get("b_weak.pem")!), true);
    assert.ok(back.refused.has("b_weak.pem"));
    assert.equal(runs(), 4, "checked again, alone");
  } finally {
    await Deno.remove(workDir, { recursive: true });
  }
});

Deno.test("file check: a failure that names no file is narrowed down by halves; a check that always fails judges nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-file-check-" });
  try {
    const files = ["a_1.pem", "a_2.pem", "a_3.pem", "a_4.pem", "a_5.pem", "a_ca_ca.pem"];
    const pems = new Map(files.map((f) => [f, `content of ${f}\n`]));
    let runs = 0;
    /** haproxy -c that fails, naming nothing, when the configuration names `culprit` (or always). */
    const runner = (culprit: string | null) => async (config: string) => {
      runs++;
      const text = await Deno.readTextFile(config);
      const fails = culprit === null || text.includes(`"${culprit}"`);
      return { ok: !fails, output: fails ? "[ALERT]    (1) : config : something went wrong" : "" };
    };
    const narrowed = await new FileChecker(runner("a_4.pem"), join(dir, "c")).check(pems, true);
    assert.deepEqual([...narrowed.refused], [["a_4.pem", "[ALERT]    (1) : config : something went wrong"]]);
    assert.ok(runs <= 2 * Math.ceil(Math.log2(files.length)) + 2, `${runs} runs`);
    const never = await new FileChecker(runner(null), join(dir, "d")).check(pems, true);
    assert.deepEqual([...never.refused], [], "a configuration that fails without any file says nothing of them");
    // the check files are gone after each run
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
