/**
 * @module admission/run_part
 * The validating webhook inside `ingress-controller run`: the serving part (lib/serving/run_part.ts)
 * asks for it before it starts the secure port, mounts its route, and has it register once the
 * port serves. Null when `--enable-validating-webhook` is off (always in B and C) or HTTPS is off.
 */
import type { RunContext } from "../app/run.ts";
import { ClusterClient } from "../cluster/client.ts";
import { log } from "../log/logger.ts";
import { settingsFromConfig } from "./settings.ts";
import { type AdmissionWebhook, createAdmissionWebhook } from "./webhook.ts";

export interface AdmissionPart extends AdmissionWebhook {
  close(): void;
}

export async function prepareAdmission(ctx: RunContext): Promise<AdmissionPart | null> {
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
    return { ...webhook, close: () => client.close() };
  } catch (err) {
    client.close();
    throw err;
  }
}
