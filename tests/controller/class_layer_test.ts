/**
 * What the Ingress source layers over the global settings for a group, with plain objects (the
 * cluster tests cover the same through the real API server): a class's parameters, ingress-nginx's
 * class in compatibility mode, a dedicated Ingress's own frontend annotations, and the problems
 * reported on the object that holds the value.
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { NGINX_CONTROLLER } from "../../lib/controller/class.ts";
import { classLayer, type ClassLayerSources } from "../../lib/controller/class_layer.ts";
import { defaultClassParams } from "../../lib/controller/class_params.ts";
import { EventRecorder } from "../../lib/controller/events.ts";
import { defaultGlobalSettings } from "../../lib/controller/global_settings.ts";
import type { Writer } from "../../lib/controller/leader.ts";

const NS = "ops";

const okWriter: Writer = { request: <T>() => Promise.resolve(undefined as T) };

const recorder = () => new EventRecorder(okWriter);

const ingressClass = (name: string, controller: string, parameters?: Record<string, unknown>): KubeObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "IngressClass",
  metadata: { name, uid: `uid-${name}` },
  spec: { controller, ...(parameters ? { parameters } : {}) },
});

const configMap = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: NS },
  data,
});

function sources(opts: {
  classes?: KubeObject[];
  ingresses?: KubeObject[];
  params?: KubeObject[] | null;
}): ClassLayerSources {
  return {
    ingressClass: (name) => opts.classes?.find((c) => c.metadata.name === name),
    ingress: (key) => opts.ingresses?.find((i) => `${i.metadata.namespace}/${i.metadata.name}` === key),
    parameters: () =>
      opts.params === null ? null : {
        get: (ref) => opts.params?.find((cm) => `${cm.metadata.namespace}/${cm.metadata.name}` === ref),
      },
  };
}

const paramsRef = (name: string) => ({ apiGroup: "", kind: "ConfigMap", name, namespace: NS, scope: "Namespace" });

Deno.test("class layer: a class's parameters set its proxy pod and override the global proxy settings", () => {
  const events = recorder();
  const ic = ingressClass("web", "ingress-controller.io/ingress-controller", paramsRef("web-params"));
  const cm = configMap("web-params", { replicas: "3", "timeout-client": "5m", "hsts": "true", replicas2: "x" });
  const layer = classLayer("class:web", defaultGlobalSettings, sources({ classes: [ic], params: [cm] }), NS, events);
  assert.ok(layer);
  assert.equal(layer.params.replicas, 3);
  assert.equal(layer.settings.proxy.timeouts.client, "5m");
  // Our annotation keys (`timeout-client` is one too) become the model's `class` layer.
  assert.deepEqual(layer.classValues, { hsts: "true", "timeout-client": "5m" });
  assert.equal(layer.owner, ic);
  // The unknown key is reported on the IngressClass.
  assert.deepEqual(
    events.recent.map((e) => [e.object, e.reason]),
    [["default/web", "InvalidParameters"]],
  );
  assert.match(events.recent[0].message, /ConfigMap ops\/web-params: parameter "replicas2" is unknown/);
});

Deno.test("class layer: the class waits for its parameters to be listed; a missing ConfigMap keeps the defaults", () => {
  const events = recorder();
  const ic = ingressClass("web", "ingress-controller.io/ingress-controller", paramsRef("web-params"));
  assert.equal(
    classLayer("class:web", defaultGlobalSettings, sources({ classes: [ic], params: null }), NS, events),
    null,
  );
  const layer = classLayer("class:web", defaultGlobalSettings, sources({ classes: [ic], params: [] }), NS, events);
  assert.ok(layer);
  assert.equal(layer.params, defaultClassParams);
  assert.equal(layer.settings, defaultGlobalSettings);
  assert.deepEqual(events.recent.map((e) => e.reason), ["ParametersNotFound"]);
});

Deno.test("class layer: ingress-nginx's class is served in compatibility mode; a class-less group has no owner", () => {
  const events = recorder();
  const nginx = ingressClass("nginx", NGINX_CONTROLLER);
  const layer = classLayer("class:nginx", defaultGlobalSettings, sources({ classes: [nginx] }), NS, events);
  assert.equal(layer?.settings.nginxCompat, true);
  assert.equal(layer?.owner, nginx);
  const classless = classLayer("class:", defaultGlobalSettings, sources({ classes: [nginx] }), NS, events);
  assert.equal(classless?.settings.nginxCompat, defaultGlobalSettings.nginxCompat);
  assert.equal(classless?.owner, null);
  assert.deepEqual(events.recent, []);
});

Deno.test("class layer: a dedicated Ingress's frontend annotations layer over the global values, a bad one is reported", () => {
  const events = recorder();
  const ing: KubeObject = {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name: "app",
      namespace: "shop",
      uid: "uid-app",
      annotations: {
        "ingress-controller.io/timeout-client": "2m",
        "ingress-controller.io/timeout-http-request": "soon",
      },
    },
  };
  const layer = classLayer("shop/app", defaultGlobalSettings, sources({ ingresses: [ing] }), NS, events);
  assert.ok(layer);
  assert.equal(layer.settings.proxy.timeouts.client, "2m");
  assert.equal(layer.settings.proxy.timeouts.httpRequest, defaultGlobalSettings.proxy.timeouts.httpRequest);
  assert.deepEqual(layer.classValues, {});
  assert.equal(layer.owner, null);
  assert.deepEqual(events.recent.map((e) => [e.object, e.reason]), [["shop/app", "InvalidAnnotation"]]);
  assert.match(events.recent[0].message, /^annotation ingress-controller\.io\/timeout-http-request: "soon"/);
});
