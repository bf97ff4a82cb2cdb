/**
 * @module nginx/settings
 * What `nginx-check` is run with (parsed from its flags by lib/flags/nginx_check_settings.ts).
 */

export interface NginxCheckSettings {
  /** YAML/JSON file of Ingresses; "" reads the cluster. */
  readonly file: string;
  readonly output: "text" | "json" | "httproute";
  /** With `output` httproute: the Gateway the routes attach to. */
  readonly gateway: { readonly namespace: string; readonly name: string } | null;
  /** kubeconfig of the cluster (without `file`); "" means the in-cluster configuration. */
  readonly kubeconfig: string;
  /** Only this namespace; "" means all. */
  readonly namespace: string;
}
