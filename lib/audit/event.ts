/**
 * @module audit/event
 * The audit event, shaped like `audit.k8s.io/v1` Event, and the pieces it is built from:
 * microsecond UTC timestamps, the user, the object reference and the response status (as
 * metav1.Status is written).
 */
import type { RequestAttributes, UserInfo } from "../auth/types.ts";
import type { PolicyLevel, Stage } from "./policy.ts";

export interface EventUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  apiGroup?: string;
  apiVersion?: string;
  subresource?: string;
}

export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

/** One audit event; field order is the order Kubernetes serializes them in. */
export interface AuditEvent {
  level: Exclude<PolicyLevel, "None">;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: EventUser;
  impersonatedUser?: EventUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  /** Microseconds since the epoch; written as RFC 3339 with six fractional digits. */
  requestReceivedTimestamp: number;
  stageTimestamp: number;
  annotations?: Record<string, string>;
}

/** Now, in microseconds since the epoch (the wall clock with performance.now()'s resolution). */
export function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

// toISOString() is the costly part of a timestamp; events come many per second, so the seconds are cached.
let cachedSecond = -1;
let cachedPrefix = "";

/** `2006-01-02T15:04:05` (UTC) of a microsecond time. */
function secondsPrefix(us: number): string {
  const second = Math.floor(us / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
  }
  return cachedPrefix;
}

/** metav1.MicroTime: `2006-01-02T15:04:05.000000Z`. */
export function microTime(us: number): string {
  return `${secondsPrefix(us)}.${String(((us % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, "0")}Z`;
}

/** metav1.Time: whole seconds, `2006-01-02T15:04:05Z`. */
export function secondsTime(us: number): string {
  return `${secondsPrefix(us)}Z`;
}

/** Go's time.RFC3339Nano in UTC: the fraction without trailing zeros, none at all when zero. */
export function rfc3339Nano(us: number): string {
  const fraction = String(((us % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, "0").replace(/0+$/, "");
  return `${secondsPrefix(us)}${fraction ? "." + fraction : ""}Z`;
}

export function eventUser(u: UserInfo): EventUser {
  const out: EventUser = {};
  if (u.name) out.username = u.name;
  if (u.uid) out.uid = u.uid;
  if (u.groups.length > 0) out.groups = [...u.groups];
  const extra = Object.entries(u.extra);
  if (extra.length > 0) out.extra = Object.fromEntries(extra.map(([k, v]) => [k, [...v]]));
  return out;
}

export function objectRef(r: NonNullable<RequestAttributes["resource"]>): ObjectReference {
  const out: ObjectReference = {};
  if (r.resource) out.resource = r.resource;
  if (r.namespace) out.namespace = r.namespace;
  if (r.name) out.name = r.name;
  if (r.apiGroup) out.apiGroup = r.apiGroup;
  if (r.apiVersion) out.apiVersion = r.apiVersion;
  if (r.subresource) out.subresource = r.subresource;
  return out;
}

// metav1.StatusReason for the codes a secure port answers with.
const reasons: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

const statusTexts: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  409: "Conflict",
  410: "Gone",
  413: "Request Entity Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/**
 * The responseStatus of an event. A body that is a metav1.Status lends its status, message, reason
 * and details; other errors get status Failure, a message and the reason of their code; success is
 * just the code.
 */
export function responseStatus(code: number, body?: unknown): ResponseStatus {
  const out: ResponseStatus = { metadata: {}, code };
  const status = isStatusObject(body) ? body : undefined;
  if (status) {
    if (status.status === "Success" || status.status === "Failure") out.status = status.status;
    if (typeof status.message === "string" && status.message) out.message = status.message;
    if (typeof status.reason === "string" && status.reason) out.reason = status.reason;
    if (status.details !== undefined && status.details !== null) out.details = status.details;
    if (typeof status.code === "number" && status.code > 0) out.code = status.code;
  }
  if (code >= 400) {
    out.status ??= "Failure";
    out.message ??= typeof body === "string" && body.trim() ? body.trim() : (statusTexts[code] ?? `HTTP ${code}`);
    out.reason ??= reasons[code] ?? (code >= 500 ? "InternalError" : "Unknown");
  }
  return out;
}

function isStatusObject(body: unknown): body is Record<string, unknown> {
  return typeof body === "object" && body !== null && (body as Record<string, unknown>).kind === "Status";
}

/** The event field order of audit.k8s.io/v1 (JSON.stringify keeps insertion order). */
export function orderedEvent(e: AuditEvent): Record<string, unknown> {
  return {
    level: e.level,
    auditID: e.auditID,
    stage: e.stage,
    requestURI: e.requestURI,
    verb: e.verb,
    user: e.user,
    impersonatedUser: e.impersonatedUser,
    sourceIPs: e.sourceIPs,
    userAgent: e.userAgent || undefined,
    objectRef: e.objectRef,
    responseStatus: e.responseStatus,
    requestObject: e.requestObject,
    responseObject: e.responseObject,
    requestReceivedTimestamp: microTime(e.requestReceivedTimestamp),
    stageTimestamp: microTime(e.stageTimestamp),
    annotations: e.annotations && Object.keys(e.annotations).length > 0 ? e.annotations : undefined,
  };
}
