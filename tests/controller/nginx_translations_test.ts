/**
 * lib/controller/nginx_translations.ts: the Ingresses of the compatibility mode as the model reads
 * them (their nginx annotations as ours, ingress-nginx's defaults where ours differ) and the Warning
 * Events for the annotations not applied, which an empty `x-forwarded-prefix` is not (ingress-nginx
 * ignores it silently).
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import type { EventRecorder } from "../../lib/controller/events.ts";
import { NginxTranslations } from "../../lib/controller/nginx_translations.ts";

function recorder(): { events: EventRecorder; sent: string[] } {
  const sent: string[] = [];
  const events = {
    record: (_obj: KubeObject, type: string, reason: string, message: string) => {
      sent.push(`${type} ${reason}: ${message}`);
      return Promise.resolve();
    },
  } as unknown as EventRecorder;
  return { events, sent };
}

const ing = (name: string, annotations: Record<string, string>): KubeObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { namespace: "shop", name, uid: `uid-${name}`, annotations },
});

Deno.test("compatibility mode: ingress-nginx's defaults on every Ingress; the Ingress's own key and preserve-trailing-slash win", () => {
  const { events, sent } = recorder();
  const t = new NginxTranslations(events);
  const slash = (o: KubeObject) => o.metadata.annotations?.["ingress-controller.io/ssl-redirect-trailing-slash"];
  assert.equal(slash(t.translated(ing("plain", {}))), "drop", "no nginx annotation at all");
  assert.equal(
    slash(t.translated(ing("keep", { "nginx.ingress.kubernetes.io/preserve-trailing-slash": "true" }))),
    "keep",
  );
  assert.equal(
    slash(t.translated(ing("own", { "ingress-controller.io/ssl-redirect-trailing-slash": "keep" }))),
    "keep",
  );
  const same = ing("cached", {});
  assert.equal(t.translated(same), t.translated(same), "translated once per object");
  assert.deepEqual(sent, []);
});

Deno.test("compatibility mode: an empty x-forwarded-prefix sets no header and sends no Warning; a bad value does", () => {
  const { events, sent } = recorder();
  const t = new NginxTranslations(events);
  const empty = t.translated(ing("empty", { "nginx.ingress.kubernetes.io/x-forwarded-prefix": "" }));
  assert.equal(empty.metadata.annotations?.["ingress-controller.io/request-headers-set"], undefined);
  assert.deepEqual(sent, []);
  t.translated(ing("bad", { "nginx.ingress.kubernetes.io/x-forwarded-prefix": "/a\nX-Evil: 1" }));
  assert.equal(sent.length, 1);
  assert.match(
    sent[0],
    /^Warning NginxAnnotationRefused: nginx\.ingress\.kubernetes\.io\/x-forwarded-prefix is refused/,
  );
});
