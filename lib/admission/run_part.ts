/**
 * @module admission/run_part
 * The validating webhook inside `ingress-controller run`, as a mount on the secure port
 * (lib/parts/secure_port.ts): the run wiring (lib/app/run.ts) hands `admissionMount` to the serving
 * part, which mounts its route before the port starts and calls `serving` (the registration)
 * once it serves. Null when `--enable-validating-webhook` is off (always in B and C) or HTTPS is off.
 */
import type { RunContext } from "../parts/run_part.ts";
import { ClusterClient } from "../cluster/client.ts";
import { log } from "../log/logger.ts";
import type { SecurePortMount } from "../parts/secure_port.ts";
import { settingsFromConfig } from "./settings.ts";
import { createAdmissionWebhook } from "./webhook.ts";

export async function admissionMount(ctx: RunContext): Promise<SecurePortMount | null> {
  const s = settingsFromConfig(ctx.config);
  if (!s.enabled) return null;
  if (s.securePort === 0) {
    log.warn(
      "--enable-validating-webhook has no effect with --secure-port=0: the webhook is served on the secure port",
    );
    return null;
  }
  const client = await ClusterClient.create({ kubeConfig: ctx.kubeConfig, qps: s.qps, burst: s.burst });
  try {
    const webhook = await createAdmissionWebhook(s, { client });
    return {
      routes: [webhook.route],
      serving: (chain, signal) => webhook.register(chain, signal),
      close() {
        webhook.close();
        client.close();
      },
    };
  } catch (err) {
    client.close();
    throw err;
  }
}
