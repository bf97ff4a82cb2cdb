/**
 * @module controller/nginx_translations
 * Ingresses served in ingress-nginx compatibility mode as the model reads them: each cached
 * object's `nginx.ingress.kubernetes.io/*` annotations written as ours (lib/nginx/translate.ts),
 * computed once per object. The annotations not applied get one Warning Event each
 * (`NginxAnnotationRefused`, `NginxAnnotationUnsupported`), once per Ingress and set of them.
 */
import { keyOf, type KubeObject } from "../cluster/resources.ts";
import { compatIngress } from "../nginx/translate.ts";
import type { EventRecorder } from "./events.ts";

export class NginxTranslations {
  /** Each Ingress object as translated from its nginx annotations. */
  #translations = new WeakMap<KubeObject, KubeObject>();
  /** Ingress key → the signature of the nginx annotations last reported, so each is reported once. */
  #reported = new Map<string, string>();

  constructor(readonly events: EventRecorder) {}

  /** `ing` with its nginx annotations as ours, and ingress-nginx's defaults where ours differ. */
  translated(ing: KubeObject): KubeObject {
    const done = this.#translations.get(ing);
    if (done) return done;
    const { rows, annotations } = compatIngress(ing);
    const ignored = rows.filter((r) => r.verdict === "unsupported" || r.verdict === "refused");
    const signature = `${ing.metadata.uid}|${JSON.stringify(ignored)}`;
    if (this.#reported.get(keyOf(ing)) !== signature) {
      this.#reported.set(keyOf(ing), signature);
      for (const r of ignored) {
        this.events.record(
          ing,
          "Warning",
          r.verdict === "refused" ? "NginxAnnotationRefused" : "NginxAnnotationUnsupported",
          `${r.annotation} is ${r.verdict === "refused" ? "refused" : "not supported"}: ${r.note}`,
        );
      }
    }
    const translated = Object.keys(annotations).length === 0
      ? ing
      : { ...ing, metadata: { ...ing.metadata, annotations: { ...ing.metadata.annotations, ...annotations } } };
    this.#translations.set(ing, translated);
    return translated;
  }

  /** The Ingress `key` is no longer served: a later one of that name is reported anew. */
  forget(key: string): void {
    this.#reported.delete(key);
  }
}
