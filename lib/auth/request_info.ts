/**
 * @module auth/request_info
 * What a request asks for, derived from method and path exactly like Kubernetes'
 * RequestInfoFactory: `/api/{version}/…` and `/apis/{group}/{version}/…` are resource requests
 * (verbs get/list/watch/create/update/patch/delete/deletecollection, namespaces, names,
 * subresources, the `watch`/`proxy` path verbs); everything else is a non-resource request whose
 * verb is the lower-cased HTTP method (so HEAD stays "head", as in Kubernetes).
 */
import type { RequestAttributes, UserInfo } from "./types.ts";

const specialVerbs = new Set(["proxy", "watch"]);
const namespaceSubresources = new Set(["status", "finalize"]);
const truthy = new Set(["1", "t", "T", "true", "TRUE", "True"]);

function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? [] : trimmed.split("/");
}

/** Verb, path and (for resource paths) resource attributes of one request. */
export function requestAttributes(method: string, url: URL, user: UserInfo): RequestAttributes {
  const path = url.pathname;
  const nonResource: RequestAttributes = { user, verb: method.toLowerCase(), path };
  let parts = splitPath(path);
  if (parts.length < 3 || (parts[0] !== "api" && parts[0] !== "apis")) return nonResource;
  const prefix = parts[0];
  parts = parts.slice(1);
  let apiGroup = "";
  if (prefix === "apis") {
    if (parts.length < 3) return nonResource;
    apiGroup = parts[0];
    parts = parts.slice(1);
  }
  const apiVersion = parts[0];
  parts = parts.slice(1);
  let verb = "";
  let pathVerb = false;
  if (specialVerbs.has(parts[0])) {
    if (parts.length < 2) return nonResource;
    verb = parts[0];
    pathVerb = true;
    parts = parts.slice(1);
  } else {
    verb = ({ POST: "create", GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" } as const)[
      method.toUpperCase() as "GET"
    ] ?? "";
  }
  let namespace = "";
  if (parts[0] === "namespaces") {
    if (parts.length > 1) {
      namespace = parts[1];
      // /namespaces/{ns} and its status/finalize subresources are the namespace object itself.
      if (parts.length > 2 && !namespaceSubresources.has(parts[2])) parts = parts.slice(2);
    }
  }
  const resource = parts[0] ?? "";
  const name = parts.length >= 2 ? parts[1] : "";
  const subresource = parts.length >= 3 ? parts[2] : "";
  if (!pathVerb && verb === "get" && name === "") {
    verb = truthy.has(url.searchParams.get("watch") ?? "") ? "watch" : "list";
  }
  if (verb === "delete" && name === "") verb = "deletecollection";
  return {
    user,
    verb,
    path,
    resource: {
      apiGroup,
      apiVersion,
      resource,
      ...(subresource ? { subresource } : {}),
      ...(namespace ? { namespace } : {}),
      ...(name ? { name } : {}),
    },
  };
}
