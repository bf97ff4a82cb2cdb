import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { loadKubeConfig } from "../../lib/cluster/access.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import type { ClusterAccess } from "../../lib/cluster/kubeconfig.ts";
import { SetupError } from "../../lib/common/errors.ts";
import { type ControlPlane, startControlPlane } from "../../lib/dev/localenv/control_plane.ts";

const tokens = [
  { token: "kubeconfig-test-token-a", user: "token-user-a", groups: ["system:masters"] },
  { token: "kubeconfig-test-token-b", user: "token-user-b", groups: ["system:masters"] },
];

/** Who the API server says we are, and the namespaces it lists, through a ClusterClient built from `access`. */
async function whoAndNamespaces(access: ClusterAccess): Promise<{ user: string; namespaces: string[] }> {
  const client = await ClusterClient.create({ kubeConfig: access, qps: 0, burst: 1 });
  try {
    const review = await client.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    const list = await client.request("GET", "/api/v1/namespaces");
    return { user: review.status.userInfo.username, namespaces: list.items.map((n: any) => n.metadata.name) };
  } finally {
    client.close();
  }
}

/** A kubeconfig with one cluster, one user and one context, written to `dir/name`. */
async function writeConfig(
  dir: string,
  name: string,
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  context: Record<string, unknown> = {},
): Promise<string> {
  const path = join(dir, name);
  await Deno.writeTextFile(
    path,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster }],
      users: [{ name: "u", user }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u", ...context } }],
      "current-context": "x",
    }),
  );
  return path;
}

const b64 = (text: string) => btoa(text);

Deno.test("kubeconfig loader against the real API server", async (t) => {
  await using cp: ControlPlane = await startControlPlane({ staticTokens: tokens });
  const dir = await Deno.makeTempDir({ prefix: "ic-kubeconfig-" });
  try {
    await t.step("client certificate (inline data)", async () => {
      const got = await whoAndNamespaces(loadKubeConfig(cp.adminKubeConfigPath));
      assert.equal(got.user, cp.admin.name);
      assert.ok(got.namespaces.includes("kube-system"), String(got.namespaces));
    });

    await t.step("client certificate and CA from files named relative to the kubeconfig", async () => {
      const user = await cp.mintUser("file-user", ["system:masters"]);
      await Deno.mkdir(join(dir, "certs"), { recursive: true });
      await Deno.writeTextFile(join(dir, "certs", "ca.crt"), cp.caPem);
      await Deno.writeTextFile(join(dir, "certs", "user.crt"), user.certPem);
      await Deno.writeTextFile(join(dir, "certs", "user.key"), user.keyPem);
      const path = await writeConfig(
        dir,
        "files.yaml",
        { server: cp.server, "certificate-authority": "certs/ca.crt" },
        {
          "client-certificate": "certs/user.crt",
          "client-key": "certs/user.key",
        },
        { namespace: "team-a" },
      );
      const access = loadKubeConfig(path);
      assert.equal(access.namespace, "team-a");
      assert.equal((await whoAndNamespaces(access)).user, "file-user");
    });

    await t.step("static token, then a rotated token file", async () => {
      const inline = await writeConfig(dir, "token.yaml", {
        server: cp.server,
        "certificate-authority-data": b64(cp.caPem),
      }, { token: tokens[0].token });
      assert.equal((await whoAndNamespaces(loadKubeConfig(inline))).user, "token-user-a");

      await Deno.writeTextFile(join(dir, "token"), `${tokens[0].token}\n`);
      const path = await writeConfig(dir, "token-file.yaml", {
        server: cp.server,
        "certificate-authority-data": b64(cp.caPem),
      }, { tokenFile: "token" });
      const access = loadKubeConfig(path);
      assert.equal((await whoAndNamespaces(access)).user, "token-user-a");
      await Deno.writeTextFile(join(dir, "token"), tokens[1].token);
      assert.equal((await whoAndNamespaces(access)).user, "token-user-b", "the same configuration reads the new token");
    });

    await t.step("in-cluster: service-account directory and KUBERNETES_SERVICE_HOST/PORT", async () => {
      const saDir = join(dir, "serviceaccount");
      await Deno.mkdir(saDir);
      await Deno.writeTextFile(join(saDir, "ca.crt"), cp.caPem);
      await Deno.writeTextFile(join(saDir, "token"), tokens[0].token);
      await Deno.writeTextFile(join(saDir, "namespace"), "ops\n");
      const port = new URL(cp.server).port;
      const access = loadKubeConfig(null, "kubeconfig", { saDir, env: { host: "127.0.0.1", port } });
      assert.equal(access.server, `https://127.0.0.1:${port}`);
      assert.equal(access.namespace, "ops");
      const got = await whoAndNamespaces(access);
      assert.equal(got.user, "token-user-a");
      assert.ok(got.namespaces.includes("default"));
      // The kubelet replaces the token file (a symlink swap); the next connection reads the new one.
      await Deno.writeTextFile(join(saDir, "token.new"), tokens[1].token);
      await Deno.rename(join(saDir, "token.new"), join(saDir, "token"));
      assert.equal((await whoAndNamespaces(access)).user, "token-user-b");
    });

    await t.step("TLS: insecure-skip-tls-verify, and tls-server-name checked against the certificate", async () => {
      const insecure = await writeConfig(
        dir,
        "insecure.yaml",
        { server: cp.server, "insecure-skip-tls-verify": true },
        {
          token: tokens[0].token,
        },
      );
      assert.equal((await whoAndNamespaces(loadKubeConfig(insecure))).user, "token-user-a");
      const named = (name: string) =>
        writeConfig(dir, `sni-${name}.yaml`, {
          server: cp.server,
          "certificate-authority-data": b64(cp.caPem),
          "tls-server-name": name,
        }, { token: tokens[0].token });
      assert.equal(
        (await whoAndNamespaces(loadKubeConfig(await named("kubernetes.default.svc")))).user,
        "token-user-a",
      );
      await assert.rejects(
        whoAndNamespaces(loadKubeConfig(await named("not-the-api-server.example"))),
        /not-the-api-server\.example/,
        "the certificate is checked against tls-server-name, not the server's address",
      );
    });

    await t.step("an exec plugin goes through client-node", async () => {
      const plugin = join(dir, "credential-plugin.sh");
      const credential = JSON.stringify({
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        status: { token: tokens[1].token },
      });
      await Deno.writeTextFile(plugin, `#!/bin/sh\necho '${credential}'\n`, { mode: 0o755 });
      const path = await writeConfig(dir, "exec.yaml", {
        server: cp.server,
        "certificate-authority-data": b64(cp.caPem),
      }, {
        exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
      });
      assert.equal((await whoAndNamespaces(loadKubeConfig(path))).user, "token-user-b");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kubeconfig loader: username and password become basic authentication; a token wins", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-kubeconfig-" });
  try {
    const basic = await writeConfig(dir, "basic.yaml", { server: "https://127.0.0.1:1" }, {
      username: "ann",
      password: "p:w",
    });
    assert.equal((await loadKubeConfig(basic).connection()).headers.Authorization, `Basic ${btoa("ann:p:w")}`);
    const both = await writeConfig(dir, "both.yaml", { server: "https://127.0.0.1:1" }, {
      username: "ann",
      password: "p",
      token: "t",
    });
    assert.equal((await loadKubeConfig(both).connection()).headers.Authorization, "Bearer t");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kubeconfig loader: a bad kubeconfig is one SetupError line naming the option and the fault", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-kubeconfig-" });
  const server = { server: "https://127.0.0.1:6443" };
  try {
    const write = async (name: string, text: string) => {
      await Deno.writeTextFile(join(dir, name), text);
      return join(dir, name);
    };
    const cases: [string, RegExp][] = [
      [await write("garbage.yaml", "{{{ not yaml"), /not YAML/],
      [await write("list.yaml", "- a\n- b\n"), /the file is not a mapping/],
      [await write("no-context.yaml", "apiVersion: v1\nkind: Config\n"), /no current-context/],
      [
        await write("missing-context.yaml", stringify({ "current-context": "x", contexts: [] })),
        /contexts has no entry named "x"/,
      ],
      [await writeConfig(dir, "no-server.yaml", {}, { token: "t" }), /cluster c has no server/],
      [
        await writeConfig(dir, "bad-server.yaml", { server: "ftp://h" }, { token: "t" }),
        /server ftp:\/\/h is not an http\(s\) URL/,
      ],
      [
        await writeConfig(dir, "cert-only.yaml", server, { "client-certificate-data": b64("x") }),
        /user u: a client certificate needs its key/,
      ],
      [
        await writeConfig(dir, "no-ca.yaml", { ...server, "certificate-authority": "missing-ca.crt" }, { token: "t" }),
        /cannot read the certificate-authority file .*missing-ca\.crt/,
      ],
      [
        await writeConfig(dir, "bad-data.yaml", { ...server, "certificate-authority-data": "%%%" }, { token: "t" }),
        /cluster c: certificate-authority-data is not base64/,
      ],
    ];
    for (const [path, fault] of cases) {
      assert.throws(() => loadKubeConfig(path, "authentication-kubeconfig"), (err: Error) => {
        assert.ok(err instanceof SetupError, String(err));
        assert.ok(
          err.message.startsWith(`--authentication-kubeconfig: cannot load ${path}: `),
          err.message,
        );
        assert.match(err.message, fault);
        assert.match(err.message, /; fix the file or give another one$/);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
    }
    assert.throws(
      () => loadKubeConfig(join(dir, "absent.yaml")),
      /^SetupError: --kubeconfig: file .*absent\.yaml does not exist/,
    );
    assert.throws(
      () => loadKubeConfig(null, "kubeconfig", { saDir: dir, env: { host: undefined, port: undefined } }),
      /^SetupError: no cluster configuration: --kubeconfig is unset and KUBERNETES_SERVICE_HOST is not set/,
    );
    assert.throws(
      () => loadKubeConfig(null, "kubeconfig", { saDir: dir, env: { host: "10.0.0.1", port: "443" } }),
      (err: Error) =>
        err instanceof SetupError &&
        /^--kubeconfig is unset and the in-cluster configuration cannot be loaded: cannot read the service-account token file .*\/token: /
          .test(err.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the controller's start-up imports @kubernetes/client-node only where an exec or auth-provider user needs it", async () => {
  // `deno info` lists every module main.ts can reach, the parts `run` imports dynamically too.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../../main.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string; dependencies?: { specifier: string; code?: unknown; isDynamic?: boolean }[] }[];
  };
  const importers = graph.modules.flatMap((m) =>
    (m.dependencies ?? [])
      .filter((d) => d.specifier.includes("@kubernetes/client-node") && d.code)
      .map((d) => `${m.specifier.replace(/^.*\/lib\//, "lib/")}${d.isDynamic ? " (dynamic)" : ""}`)
  );
  assert.deepEqual(importers, ["lib/cluster/kubeconfig.ts (dynamic)"]);
});
