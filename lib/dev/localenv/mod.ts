/**
 * @module lib/dev/localenv/mod
 * The test environment: a real kube-apiserver + etcd and a real HAProxy on loopback, started by
 * the project's own code. Import everything from here.
 *
 * Control plane (`control_plane.ts`; binaries from `binaries.ts` / `build.sh`):
 * - `startControlPlane(opts?): Promise<ControlPlane>` — etcd + kube-apiserver on 127.0.0.1, free
 *   ports, temp dir, waits for `/readyz`. RBAC, own service-account key + issuer, client CA,
 *   front-proxy CA with `--requestheader-*`. Use `await using cp = await startControlPlane()` or
 *   `try { … } finally { await cp.stop() }`. Options: `staticTokens`, `apiServerFlags`,
 *   `readyTimeoutMs`, `binaries`.
 * - `cp.server`, `cp.caPem`, `cp.clientCaPem`, `cp.frontProxyCaPem`, `cp.frontProxyClientName`,
 *   `cp.serviceAccountIssuer`, `cp.adminKubeConfigPath`, `cp.admin` ({name, groups, certPem, keyPem};
 *   group system:masters), `cp.pids`, `cp.logs`, `cp.dir`, `cp.startMs`, `cp.unexpectedExit`.
 * - `cp.mintUser(name, groups?)` → {name, groups, certPem, keyPem} (CN=name, O=groups, clientAuth).
 * - `cp.kubeConfig(name, groups?)` → path of a kubeconfig for a newly minted user.
 * - `cp.writeKubeConfig(user, {certPem, keyPem} | {token}, path?)` → path.
 * - `cp.mintToken({namespace?, serviceAccount?, audiences?, expirationSeconds?})` → a service-account
 *   token from the TokenRequest API (namespace and account are created when missing).
 * - `cp.mintFrontProxyClient(cn?)` → {certPem, keyPem} signed by the front-proxy CA.
 * - `cp.adminFetch(path, init?)` → Response, as the admin.
 * - `cp.stop()`; SIGINT/SIGTERM stop every live part; a reaper kills the processes if Deno dies.
 *
 * HAProxy (`haproxy.ts`): `ensureHaproxy()`, `haproxyCheck(textOrPath, {env?})` → {ok, code, output},
 * `startHaproxy(configPath, {env?})` → {pid, dir, masterSocket, logPath, masterCommand(cmd),
 * workerPids(), stop()}, master-worker mode with the master socket in a temp dir.
 *
 * client-node (`client_node.ts`): `loadKubeConfig(path)` / `http1Only(kc)` → a KubeConfig whose
 * requests use HTTP/1.1 (an aborted Watch followed by a GOAWAY crashes Deno over HTTP/2).
 *
 * Images and a real node (import these modules directly): `container.ts` — `runImage(archive, {args?,
 * argv?, env?, mounts?, ownNetwork?})` runs a `dist/images/*.tar` with runc; `../localnode/mod.ts` —
 * `startCluster({images?})` → a single-node cluster in namespaces of its own ({kubeconfig, enter,
 * adminFetch, timings, stop()}), `requestsInside(cluster, url, {host?, count?})`; `debian.ts` —
 * `ensureTools([{command, package}], purpose)` installs missing Debian packages as root.
 *
 * Traffic: `startBackend({name, host?, port?})` → {name, address, port, url, requests, close()},
 * answering JSON `BackendAnswer`; `requestWithHost({address, port, host?, path?, …})` → {status,
 * headers, body} (fetch() cannot set Host); `freePort(host?)`, `freePorts(n, host?)`;
 * `processExists(pid)`.
 */
export * from "./control_plane.ts";
export { type Binaries, buildScript, ensureBinaries } from "./binaries.ts";
export { type Credentials, kubeConfigYaml, writeKubeConfig } from "./kubeconfig.ts";
export * from "./haproxy.ts";
export * from "./backend.ts";
export * from "./http.ts";
export { freePort, freePorts } from "./ports.ts";
export { processExists } from "./process.ts";
export { http1Only, loadKubeConfig } from "./client_node.ts";
