/**
 * @module audit/auditor
 * `createAuditor`: loads the policy, opens the log and webhook backends in their delivery modes and
 * hands serving one `AuditHandle` per audited request, which emits the RequestReceived,
 * ResponseStarted (long-running requests), ResponseComplete or Panic events the policy keeps.
 */
import { log } from "../log/logger.ts";
import type { Backend, Sink } from "./backend.ts";
import { BlockingSink, BufferedSink } from "./delivery.ts";
import { type AuditEvent, eventUser, nowMicros, objectRef, responseStatus } from "./event.ts";
import { LogBackend } from "./log_backend.ts";
import { evaluatePolicy, loadPolicyFile, type Policy, type PolicyDecision, type Stage } from "./policy.ts";
import type { AuditSettings } from "./settings.ts";
import { type ConfigLike, settingsFromConfig } from "./settings_from_config.ts";
import { sourceIPs } from "./source_ips.ts";
import type { AuditHandle, AuditLevel, Auditor, AuditRequest } from "./types.ts";

const maxUserAgentLength = 1024;
/** The longest client-supplied Audit-ID kept (Kubernetes sets no limit; see README, Audit). */
export const maxAuditIDLength = 128;
/** A client's Audit-ID is kept when it is 1 to 128 printable ASCII characters, not starting or ending with a space. */
const clientAuditID = new RegExp(`^[!-~](?:[ -~]{0,${maxAuditIDLength - 2}}[!-~])?$`);
const utf8 = new TextDecoder();
const defaultShutdownTimeoutMs = 15_000;

/** Builds the auditor from the parsed command line or from plain settings (tests). */
export async function createAuditor(source: ConfigLike | AuditSettings): Promise<Auditor> {
  const settings = isConfig(source) ? settingsFromConfig(source) : source;
  const backends = [settings.log && "log", settings.webhook && "webhook"].filter(Boolean);
  if (!settings.policyFile) {
    if (backends.length > 0) {
      log.warn("audit: no --audit-policy-file given, so nothing is audited although a backend is configured", {
        backends,
      });
    }
    return disabledAuditor;
  }
  const policy = await loadPolicyFile(settings.policyFile);
  if (backends.length === 0) {
    log.info("audit: --audit-policy-file given but neither --audit-log-path nor --audit-webhook-config-file", {
      policy: settings.policyFile,
    });
    return disabledAuditor;
  }
  const opened: Backend[] = [];
  try {
    if (settings.log) opened.push(await LogBackend.open(settings.log));
    if (settings.webhook) {
      // Loaded only when used: the cluster client library is large.
      const { WebhookBackend } = await import("./webhook_backend.ts");
      opened.push(await WebhookBackend.open(settings.webhook));
    }
  } catch (err) {
    await Promise.all(opened.map((b) => b.close()));
    throw err;
  }
  const sinks = opened.map((b) => {
    const s = b.name === "log" ? settings.log! : settings.webhook!;
    return s.mode === "batch" ? new BufferedSink(b, s.batch) : new BlockingSink(b);
  });
  log.info("audit enabled", {
    policy: settings.policyFile,
    rules: policy.rules.length,
    ...(settings.log && {
      log: settings.log.path,
      logMode: settings.log.mode,
      logFormat: settings.log.format,
      logVersion: settings.log.version,
    }),
    ...(settings.webhook && {
      webhook: settings.webhook.configFile,
      webhookMode: settings.webhook.mode,
      webhookVersion: settings.webhook.version,
    }),
  });
  return new PolicyAuditor(policy, sinks, settings.shutdownTimeoutMs ?? defaultShutdownTimeoutMs);
}

function isConfig(x: ConfigLike | AuditSettings): x is ConfigLike {
  return typeof (x as ConfigLike).get === "function" && typeof (x as ConfigLike).has === "function";
}

const disabledAuditor: Auditor = Object.freeze({
  enabled: false,
  begin: () => null,
  shutdown: () => Promise.resolve(),
});

/** The auditor of a policy and its sinks; exported for tests that drive it with their own sinks. */
export class PolicyAuditor implements Auditor {
  readonly enabled = true;
  #shutdown: Promise<void> | null = null;

  constructor(readonly policy: Policy, readonly sinks: readonly Sink[], readonly shutdownTimeoutMs: number) {}

  begin(req: AuditRequest): AuditHandle | null {
    const q = req.requestURI.indexOf("?");
    const decision = evaluatePolicy(this.policy, {
      user: req.user,
      verb: req.verb,
      path: q < 0 ? req.requestURI : req.requestURI.slice(0, q),
      resource: req.objectRef,
    });
    if (decision.level === "None") return null;
    return new Handle(req, decision, this.sinks);
  }

  shutdown(): Promise<void> {
    this.#shutdown ??= this.#flush();
    return this.#shutdown;
  }

  async #flush(): Promise<void> {
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      log.warn("audit: shutdown deadline passed; giving up on events not yet delivered", {
        timeoutMs: this.shutdownTimeoutMs,
      });
      deadline.abort();
    }, this.shutdownTimeoutMs);
    try {
      await Promise.all(this.sinks.map((s) => s.shutdown(deadline.signal)));
    } finally {
      clearTimeout(timer);
    }
  }
}

class Handle implements AuditHandle {
  readonly auditID: string;
  readonly level: AuditLevel;
  readonly #base: AuditEvent;
  readonly #omit: ReadonlySet<Stage>;
  readonly #omitManagedFields: boolean;
  readonly #annotations: Record<string, string> = {};
  #requestObject: unknown = undefined;
  /** Per sink, the delivery of this request's latest event (blocking mode). */
  readonly #tails: (Promise<void> | undefined)[] = [];
  #done = false;
  #started = false;

  constructor(req: AuditRequest, decision: PolicyDecision, private readonly sinks: readonly Sink[]) {
    this.level = decision.level as AuditLevel;
    this.#omit = decision.omitStages;
    this.#omitManagedFields = decision.omitManagedFields;
    const asked = req.auditID || req.headers.get("audit-id");
    this.auditID = asked && clientAuditID.test(asked) ? asked : crypto.randomUUID();
    let userAgent = headerText(req.headers.get("user-agent") ?? "");
    if (userAgent.length > maxUserAgentLength) userAgent = userAgent.slice(0, maxUserAgentLength) + "...TRUNCATED";
    const received = nowMicros();
    this.#base = {
      level: this.level,
      auditID: this.auditID,
      stage: "RequestReceived",
      requestURI: req.requestURI,
      verb: req.verb,
      user: eventUser(req.user),
      impersonatedUser: req.impersonatedUser ? eventUser(req.impersonatedUser) : undefined,
      sourceIPs: sourceIPs(req.headers, req.remoteAddress),
      userAgent,
      objectRef: req.objectRef ? objectRef(req.objectRef) : undefined,
      requestReceivedTimestamp: received,
      stageTimestamp: received,
    };
    if (!this.#omit.has("RequestReceived")) this.#emit({ ...this.#base });
  }

  annotate(key: string, value: string): void {
    // As in Kubernetes, the first value of an annotation key stays.
    if (!(key in this.#annotations)) this.#annotations[key] = value;
  }

  requestBody(body: unknown): void {
    if (this.level === "Metadata") return;
    this.#requestObject = this.#object(body);
  }

  responseStarted(status = 200): void {
    if (this.#done || this.#started) return;
    this.#started = true;
    if (this.#omit.has("ResponseStarted")) return;
    this.#emit(this.#stageEvent("ResponseStarted", { responseStatus: responseStatus(status) }));
  }

  complete(status: number, responseBody?: unknown): Promise<void> {
    if (this.#done) return Promise.resolve();
    this.#done = true;
    if (!this.#omit.has("ResponseComplete")) {
      this.#emit(this.#stageEvent("ResponseComplete", {
        responseStatus: responseStatus(status, responseBody),
        responseObject: this.level === "RequestResponse" ? this.#object(responseBody) : undefined,
      }));
    }
    return this.#settle();
  }

  panic(err: unknown): Promise<void> {
    if (this.#done) return Promise.resolve();
    this.#done = true;
    if (!this.#omit.has("Panic")) {
      const message = err instanceof Error ? err.message : String(err);
      this.#emit(this.#stageEvent("Panic", {
        responseStatus: {
          metadata: {},
          status: "Failure",
          message: `APIServer panic'd: ${message}`,
          reason: "InternalError",
          code: 500,
        },
      }));
    }
    return this.#settle();
  }

  #stageEvent(stage: Stage, extra: Partial<AuditEvent>): AuditEvent {
    return {
      ...this.#base,
      stage,
      requestObject: this.#requestObject,
      ...extra,
      stageTimestamp: nowMicros(),
      annotations: Object.keys(this.#annotations).length > 0 ? { ...this.#annotations } : undefined,
    };
  }

  #emit(event: AuditEvent): void {
    this.sinks.forEach((sink, i) => {
      const prev = this.#tails[i];
      // A sink that could reorder (concurrent webhook requests) gets this request's stages one after another.
      const p = prev && !sink.inOrder ? prev.then(() => sink.offer(event)) : sink.offer(event);
      if (p) this.#tails[i] = p;
    });
  }

  async #settle(): Promise<void> {
    // In-order sinks finish an earlier event before a later one, so the latest delivery per sink is enough.
    for (const tail of this.#tails) if (tail) await tail;
  }

  /** A body as the event carries it: JSON text parsed, managedFields removed when the policy says so. */
  #object(body: unknown): unknown {
    if (body === undefined || body === null) return undefined;
    let obj = body;
    if (body instanceof Uint8Array) obj = new TextDecoder().decode(body);
    if (typeof obj === "string") {
      try {
        obj = JSON.parse(obj);
      } catch {
        return obj;
      }
    }
    return this.#omitManagedFields ? withoutManagedFields(obj) : obj;
  }
}

/**
 * A header value as text. Headers hold the received bytes one per character (Latin-1); clients
 * send UTF-8, so the bytes are decoded as UTF-8 (invalid sequences become U+FFFD, as Go's JSON
 * encoder writes them). Control characters stay; the serializers escape them.
 */
function headerText(value: string): string {
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(value) || /[^\x00-\xff]/.test(value)) return value;
  return utf8.decode(Uint8Array.from(value, (c) => c.charCodeAt(0)));
}

function withoutManagedFields(obj: unknown): unknown {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) return obj;
  const o = obj as Record<string, unknown>;
  const strip = (x: unknown): unknown => {
    if (typeof x !== "object" || x === null) return x;
    const r = x as Record<string, unknown>;
    const meta = r.metadata as Record<string, unknown> | undefined;
    if (!meta || typeof meta !== "object" || !("managedFields" in meta)) return x;
    const { managedFields: _, ...rest } = meta;
    return { ...r, metadata: rest };
  };
  const top = strip(o) as Record<string, unknown>;
  return Array.isArray(top.items) ? { ...top, items: top.items.map(strip) } : top;
}
