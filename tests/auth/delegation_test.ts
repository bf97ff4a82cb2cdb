import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildDelegation } from "../../lib/auth/delegation.ts";
import { SetupError } from "../../lib/common/errors.ts";
import { defaultSettings } from "../../lib/serving/settings.ts";
import { tempDir } from "../serving/helpers.ts";

// Inside a pod the in-cluster configuration exists, so "no configuration" cannot be produced there.
const inPod = !!Deno.env.get("KUBERNETES_SERVICE_HOST");

Deno.test({
  name: "delegation: no kubeconfig and no in-cluster configuration is a SetupError naming the option" +
    (inPod ? " (ignored: KUBERNETES_SERVICE_HOST is set, the in-cluster configuration exists)" : ""),
  ignore: inPod,
}, async () => {
  await assert.rejects(
    buildDelegation({ ...defaultSettings }),
    (e: Error) => e instanceof SetupError && /--authentication-kubeconfig is unset/.test(e.message),
  );
  // With the token reviewer supplied and lookup skipped, authorization is the next to need a cluster.
  await assert.rejects(
    buildDelegation({ ...defaultSettings, authenticationSkipLookup: true }, {
      tokenReviewer: () => Promise.resolve({ authenticated: false }),
    }),
    (e: Error) => e instanceof SetupError && /--authorization-kubeconfig is unset/.test(e.message),
  );
});

Deno.test("delegation: unreadable kubeconfig and CA files are SetupErrors naming the option", async () => {
  using tmp = tempDir();
  const garbage = join(tmp.dir, "garbage.yaml");
  writeFileSync(garbage, "{{{ not yaml");
  await assert.rejects(
    buildDelegation({ ...defaultSettings, authenticationKubeconfig: garbage }),
    (e: Error) => e instanceof SetupError && e.message.startsWith("--authentication-kubeconfig: cannot load"),
  );
  await assert.rejects(
    buildDelegation({ ...defaultSettings, authenticationKubeconfig: join(tmp.dir, "missing") }),
    /--authentication-kubeconfig: file .* does not exist/,
  );
  const reviewers = {
    tokenReviewer: () => Promise.resolve({ authenticated: false }),
    accessReviewer: () => Promise.resolve({ allowed: false, reason: "" }),
  };
  await assert.rejects(
    buildDelegation(
      { ...defaultSettings, authenticationSkipLookup: true, clientCaFile: join(tmp.dir, "nope.crt") },
      reviewers,
    ),
    /--client-ca-file: cannot read/,
  );
  const empty = join(tmp.dir, "empty.crt");
  writeFileSync(empty, "");
  await assert.rejects(
    buildDelegation(
      { ...defaultSettings, authenticationSkipLookup: true, requestheaderClientCaFile: empty },
      reviewers,
    ),
    /--requestheader-client-ca-file .*no PEM certificate/,
  );
});
