/**
 * @module lib/dev/localnode/echo
 * The echo backend as a Deployment for the real node: image `ingress-controller-test/echo:dev`
 * (never pulled), its pod name from the downward API, port 8080 named `http`, Ready once it answers.
 */
import { echoRef } from "../images/refs.ts";

export function echoDeployment(namespace: string, replicas: number, name = "echo") {
  const labels = { app: name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{
            name: "echo",
            image: echoRef,
            imagePullPolicy: "Never",
            env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
            ports: [{ name: "http", containerPort: 8080 }],
            readinessProbe: { httpGet: { path: "/ready", port: 8080 }, periodSeconds: 1 },
          }],
        },
      },
    },
  };
}
