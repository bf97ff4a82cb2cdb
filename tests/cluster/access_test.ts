import assert from "node:assert/strict";
import { join } from "node:path";
import { operatorNamespace } from "../../lib/cluster/access.ts";
import { SetupError } from "../../lib/common/errors.ts";

Deno.test("operatorNamespace: POD_NAMESPACE first, then the service-account file, `default` only when it is absent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-access-" });
  try {
    assert.equal(operatorNamespace(dir, undefined), "default", "no file: not in a pod");
    assert.equal(operatorNamespace(join(dir, "no-such-dir"), undefined), "default", "no directory either");
    await Deno.writeTextFile(join(dir, "namespace"), " ops\n");
    assert.equal(operatorNamespace(dir, undefined), "ops");
    assert.equal(operatorNamespace(dir, " team-a "), "team-a", "POD_NAMESPACE wins over the file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("operatorNamespace: a namespace file that exists but cannot be read or is empty is a one-line SetupError", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-access-" });
  try {
    const path = join(dir, "namespace");
    // Reading a directory fails with EISDIR: an error other than "absent" (root can read any file,
    // so a permission error cannot be produced here).
    await Deno.mkdir(path);
    assert.throws(() => operatorNamespace(dir, undefined), (err: Error) => {
      assert.ok(err instanceof SetupError, String(err));
      assert.match(
        err.message,
        /^cannot read the service-account namespace file .*\/namespace: .+; fix its mount or set POD_NAMESPACE$/,
      );
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    await Deno.remove(path);
    await Deno.writeTextFile(path, "\n");
    assert.throws(
      () => operatorNamespace(dir, undefined),
      (err: Error) => err instanceof SetupError && /namespace file .* is empty; .*POD_NAMESPACE$/.test(err.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
