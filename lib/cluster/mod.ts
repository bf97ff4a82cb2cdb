/**
 * @module cluster
 * Cluster access for the controller and the proxy: a rate-limited keep-alive API client, a
 * list+watch informer with a local store and indexers, and the resource types.
 */
export { type ClusterAccess, loadKubeConfig, operatorNamespace } from "./access.ts";
export { ApiError, ClusterClient, type ClusterClientOptions, isStatus, type WatchStream } from "./client.ts";
export { Informer, type InformerHandlers, type InformerOptions } from "./informer.ts";
export { Store } from "./store.ts";
export { TokenBucket } from "./rate_limiter.ts";
export { Backoff } from "./backoff.ts";
export * from "./resources.ts";
