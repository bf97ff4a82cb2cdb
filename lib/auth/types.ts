/**
 * @module auth/types
 * Who made a request and what it asks for: shared by authentication, authorization and audit.
 */

/** An authenticated identity, shaped like Kubernetes' user.Info. */
export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export const anonymousUser: UserInfo = Object.freeze({
  name: "system:anonymous",
  groups: Object.freeze(["system:unauthenticated"]),
  extra: Object.freeze({}),
});

/** What a request asks for, as SubjectAccessReview and the audit policy see it. */
export interface RequestAttributes {
  readonly user: UserInfo;
  /** Lower-cased HTTP method for non-resource requests; get/list/watch/create/… for resource ones. */
  readonly verb: string;
  readonly path: string;
  readonly resource?: {
    readonly apiGroup: string;
    readonly apiVersion: string;
    readonly resource: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
}
