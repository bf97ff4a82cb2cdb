/**
 * The webhook's decision on plain AdmissionReview requests: valid ingresses allowed, the
 * renderer's field errors denied with one line naming the field, other classes and other
 * namespaces allowed untouched, the `haproxy -c` xray refusing what the static checks pass
 * (and skipped with the bypass), an xray that cannot finish or cannot run refusing (fail closed),
 * and the HTTP glue (through the review workers) answering malformed bodies with 400.
 */
import assert from "node:assert/strict";
import type { V1Ingress } from "@kubernetes/client-node";
import { admissionRoute, budgetMs } from "../../lib/admission/handler.ts";
import { type AdmissionRequest, reviewIngress, type ReviewOptions } from "../../lib/admission/review.ts";
import { loadTemplates } from "../../lib/render/mod.ts";
import { ingress } from "../render/fixtures.ts";

const templates = await loadTemplates(null);
const xray = { templates, haproxy: "haproxy", timeoutMs: 10_000 };
const base: ReviewOptions = { ingressClass: null, restrictToNamespace: null, xray: null };

let n = 0;
function requestFor(obj: V1Ingress, operation = "CREATE"): AdmissionRequest {
  return {
    uid: `uid-${++n}`,
    kind: { group: "networking.k8s.io", version: "v1", kind: "Ingress" },
    resource: { group: "networking.k8s.io", version: "v1", resource: "ingresses" },
    operation,
    namespace: obj.metadata?.namespace,
    name: obj.metadata?.name,
    object: obj,
  };
}

const good = (extra: Partial<Parameters<typeof ingress>[0]> = {}) =>
  ingress({
    name: "web",
    rules: [{ host: "shop.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    tls: [{ hosts: ["shop.example.com"], secretName: "shop-tls" }],
    ...extra,
  });

Deno.test("valid ingress is allowed, with and without the xray", async () => {
  for (const x of [null, xray]) {
    const req = requestFor(good());
    const res = await reviewIngress(req, { ...base, xray: x });
    assert.equal(res.uid, req.uid);
    assert.equal(res.allowed, true, JSON.stringify(res));
    assert.equal(res.status, undefined);
  }
  const update = await reviewIngress(requestFor(good(), "UPDATE"), base);
  assert.equal(update.allowed, true);
});

Deno.test("invalid host is denied with one line naming the field", async () => {
  const res = await reviewIngress(
    requestFor(ingress({ name: "bad", rules: [{ host: "shop example.com", paths: [{ service: "web", port: 80 }] }] })),
    base,
  );
  assert.equal(res.allowed, false);
  assert.equal(res.status?.code, 422);
  const msg = res.status!.message;
  assert.match(msg, /^spec\.rules\[0\]\.host: "shop example\.com" is not a valid host/);
  assert.doesNotMatch(msg, /\n/);
  assert.doesNotMatch(msg, /ignored/, "the controller's fallback is not part of a denial");
});

Deno.test("hostile annotation value (config injection) is denied, and stays on one line", async () => {
  const hostile = "30s\n    http-request deny\n#";
  const res = await reviewIngress(
    requestFor(good({ annotations: { "ingress.kubernetes.io/timeout-server": hostile } })),
    { ...base, xray },
  );
  assert.equal(res.allowed, false);
  assert.match(res.status!.message, /^annotation ingress\.kubernetes\.io\/timeout-server: "30s\\n/);
  assert.doesNotMatch(res.status!.message, /\n/);
});

Deno.test("invalid path, TLS secret name and every problem at once are named", async () => {
  const res = await reviewIngress(
    requestFor(ingress({
      name: "many",
      rules: [{ host: "a.example.com", paths: [{ path: "/a b", service: "web", port: 80 }] }],
      tls: [{ hosts: ["a.example.com"], secretName: "Not_A_Name" }],
    })),
    base,
  );
  assert.equal(res.allowed, false);
  const msg = res.status!.message;
  assert.match(msg, /spec\.rules\[0\]\.http\.paths\[0\]\.path: "\/a b"/);
  assert.match(msg, /spec\.tls\[0\]\.secretName: "Not_A_Name" is not a valid name/);
});

Deno.test("missing Services and Secrets are not judged (they may come later)", async () => {
  // good() refers to Service web and Secret shop-tls, neither of which the review can see.
  const res = await reviewIngress(requestFor(good()), { ...base, xray });
  assert.equal(res.allowed, true);
  assert.equal(res.warnings, undefined);
});

Deno.test("duplicate route inside the ingress is a warning, not a denial", async () => {
  const res = await reviewIngress(
    requestFor(ingress({
      name: "dup",
      rules: [{
        host: "d.example.com",
        paths: [{ path: "/x", service: "a", port: 80 }, { path: "/x/", service: "b", port: 80 }],
      }],
    })),
    base,
  );
  assert.equal(res.allowed, true);
  assert.equal(res.warnings?.length, 1);
  assert.match(res.warnings![0], /spec\.rules\[0\]\.http\.paths\[1\]: host "d\.example\.com" path "\/x"/);
});

Deno.test("ingress of another class is allowed untouched; ours and the default class are checked", async () => {
  const invalid = (cls: Record<string, string> | null, className?: string) => {
    const i = ingress({
      name: "cls",
      annotations: cls ?? undefined,
      rules: [{ host: "bad host", paths: [{ service: "web", port: 80 }] }],
    });
    if (className) i.spec!.ingressClassName = className;
    return requestFor(i);
  };
  const opts = { ...base, ingressClass: "haproxy" };
  assert.equal((await reviewIngress(invalid({ "kubernetes.io/ingress.class": "nginx" }), opts)).allowed, true);
  assert.equal((await reviewIngress(invalid(null, "nginx"), opts)).allowed, true);
  assert.equal((await reviewIngress(invalid(null, "haproxy"), opts)).allowed, false);
  assert.equal((await reviewIngress(invalid({ "kubernetes.io/ingress.class": "haproxy" }), opts)).allowed, false);
  // No class named: ours only when our class is the cluster default.
  let asked = 0;
  const withDefault = (d: string | null) => ({ ...opts, defaultClass: () => (asked++, Promise.resolve(d)) });
  assert.equal((await reviewIngress(invalid(null), withDefault("nginx"))).allowed, true);
  assert.equal((await reviewIngress(invalid(null), withDefault("haproxy"))).allowed, false);
  assert.equal(asked, 2);
  // Without --ingress-class every ingress is ours.
  assert.equal((await reviewIngress(invalid({ "kubernetes.io/ingress.class": "nginx" }), base)).allowed, false);
});

Deno.test("with --restrict-to-operator-namespace, other namespaces are not ours", async () => {
  const bad = ingress({
    namespace: "other",
    name: "x",
    rules: [{ host: "bad host", paths: [{ service: "w", port: 80 }] }],
  });
  assert.equal((await reviewIngress(requestFor(bad), { ...base, restrictToNamespace: "ops" })).allowed, true);
  assert.equal((await reviewIngress(requestFor(bad), { ...base, restrictToNamespace: "other" })).allowed, false);
});

Deno.test("xray: haproxy refuses what the static checks pass; the bypass skips it", async () => {
  // 999999m passes the annotation's pattern but overflows HAProxy's timer (max ~24.8 days).
  const req = () => requestFor(good({ annotations: { "ingress.kubernetes.io/timeout-server": "999999m" } }));
  const refused = await reviewIngress(req(), { ...base, xray });
  assert.equal(refused.allowed, false);
  assert.match(refused.status!.message, /^haproxy refuses the configuration this Ingress produces: .*timer overflow/);
  assert.doesNotMatch(refused.status!.message, /\n/);
  const bypassed = await reviewIngress(req(), { ...base, xray: null });
  assert.equal(bypassed.allowed, true);
});

Deno.test("xray that cannot run or cannot finish before the deadline refuses (503), never allows", async () => {
  const missing = await reviewIngress(requestFor(good()), {
    ...base,
    xray: { ...xray, haproxy: "/nonexistent/haproxy" },
  });
  assert.equal(missing.allowed, false);
  assert.equal(missing.status?.code, 503);
  assert.match(missing.status!.message, /^the xray cannot run: haproxy binary .* --bypass-validating-webhook-xray/);

  const slow = await reviewIngress(requestFor(good()), { ...base, xray: { ...xray, timeoutMs: 1 } });
  assert.equal(slow.allowed, false);
  assert.equal(slow.status?.code, 503);
  assert.match(slow.status!.message, /^haproxy -c did not finish within 1 ms: that is the time limit .* is refused/);

  const late = await reviewIngress(requestFor(good()), { ...base, xray }, Date.now() - 1);
  assert.equal(late.allowed, false);
  assert.match(late.status!.message, /could not finish before the webhook's deadline/);
  // The static checks need no xray: an invalid Ingress is still denied for what it is.
  const bad = ingress({ name: "b", rules: [{ host: "bad host", paths: [{ service: "w", port: 80 }] }] });
  assert.equal((await reviewIngress(requestFor(bad), { ...base, xray }, Date.now() - 1)).status?.code, 422);
});

Deno.test("not an Ingress CREATE/UPDATE: allowed without looking", async () => {
  const del = requestFor(good(), "DELETE");
  del.object = undefined;
  assert.equal((await reviewIngress(del, base)).allowed, true);
  const svc = { ...requestFor(good()), kind: { group: "", version: "v1", kind: "Service" } };
  assert.equal((await reviewIngress(svc, base)).allowed, true);
});

Deno.test("generateName on CREATE: judged under a placeholder name", async () => {
  const i = good();
  i.metadata = { namespace: "default", generateName: "web-" };
  const res = await reviewIngress({ ...requestFor(i), name: "" }, base);
  assert.equal(res.allowed, true, JSON.stringify(res));
});

Deno.test("HTTP glue: AdmissionReview in, AdmissionReview out through the workers; malformed bodies get 400", async () => {
  const route = await admissionRoute({
    review: { ingressClass: null, restrictToNamespace: null, xray: null },
    timeoutSeconds: 10,
  });
  try {
    const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const query = new URLSearchParams("timeout=10s");
    const req = requestFor(ingress({ name: "h", rules: [{ host: "bad host", paths: [{ service: "w", port: 80 }] }] }));
    const reply = await route.handle(
      enc({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: req }),
      { contentType: "application/json", query },
    );
    assert.equal(reply.status, 200);
    const out = JSON.parse(reply.body as string);
    assert.equal(out.apiVersion, "admission.k8s.io/v1");
    assert.equal(out.kind, "AdmissionReview");
    assert.equal(out.response.uid, req.uid);
    assert.equal(out.response.allowed, false);

    const bad = [
      [new TextEncoder().encode("{"), "application/json", /not JSON/],
      [
        enc({ apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: req }),
        "application/json",
        /v1 AdmissionReview/,
      ],
      [
        enc({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { ...req, uid: "" } }),
        undefined,
        /uid/,
      ],
      [enc({}), "text/plain", /content type/],
    ] as const;
    for (const [body, contentType, why] of bad) {
      const r = await route.handle(body, { contentType, query });
      assert.equal(r.status, 400);
      assert.match(JSON.parse(r.body as string).message, why);
    }
  } finally {
    route.close();
  }
});

Deno.test("deadline: the API server's ?timeout= (a Go duration) or timeoutSeconds, less a margin", () => {
  assert.equal(budgetMs(new URLSearchParams("timeout=10s"), 10), 8_500);
  assert.equal(budgetMs(new URLSearchParams("timeout=5s"), 10), 3_500);
  assert.equal(budgetMs(new URLSearchParams("timeout=1m0s"), 10), 8_500, "never beyond the registration's");
  assert.equal(budgetMs(new URLSearchParams("timeout=soon"), 10), 8_500);
  assert.equal(budgetMs(new URLSearchParams(), 30), 28_500);
  assert.equal(budgetMs(new URLSearchParams("timeout=1s"), 10), 0);
});

Deno.test("annotation table: bad or unknown ingress-controller.io keys are denied, one line naming each key", async () => {
  const res = await reviewIngress(
    requestFor(good({
      annotations: {
        "ingress-controller.io/rate-limit-rps": "lots",
        "ingress-controller.io/cors-allow-origin": "https://a.example.com\n    http-request deny",
        "ingress-controller.io/hstss": "true",
      },
    })),
    base,
  );
  assert.equal(res.allowed, false);
  assert.equal(res.status?.code, 422);
  assert.equal(
    res.status!.message,
    'annotation ingress-controller.io/cors-allow-origin: "https://a.example.com\\n    http-request deny" has ' +
      '"https://a.example.com\\n    http-request deny", which is not an origin like https://example.com; ' +
      'annotation "ingress-controller.io/hstss" is not an annotation of this controller (see the README\'s reference); ' +
      'annotation ingress-controller.io/rate-limit-rps: "lots" is not an integer 1–1000000',
  );
  const ok = await reviewIngress(
    requestFor(
      good({ annotations: { "ingress-controller.io/rate-limit-rps": "20", "ingress-controller.io/hsts": "true" } }),
    ),
    { ...base, xray },
  );
  assert.equal(ok.allowed, true, JSON.stringify(ok));
});

Deno.test("annotation table: a key the model reads is named once (ours or its legacy alias)", async () => {
  for (const key of ["ingress-controller.io/load-balance", "ingress.kubernetes.io/load-balance"]) {
    const res = await reviewIngress(requestFor(good({ annotations: { [key]: "fastest" } })), base);
    assert.equal(res.allowed, false);
    assert.equal(res.status!.message, `annotation ${key}: "fastest" is not one of roundrobin,leastconn,source`);
  }
});

Deno.test("regex paths: a valid one passes the xray (haproxy compiles it); an invalid one is denied naming the path", async () => {
  const regex = (path: string) =>
    requestFor(ingress({
      name: "re",
      annotations: {
        "ingress-controller.io/path-regex": "true",
        "ingress-controller.io/rewrite-target": "/$2",
        "ingress-controller.io/default-backend": "pages",
      },
      rules: [{
        host: "a.example.com",
        paths: [{ path, pathType: "ImplementationSpecific", service: "web", port: 80 }],
      }],
    }));
  const ok = await reviewIngress(regex("/something(/|$)(.*)"), { ...base, xray });
  assert.equal(ok.allowed, true, JSON.stringify(ok));
  const bad = await reviewIngress(regex("/x(?{code})"), { ...base, xray });
  assert.equal(bad.allowed, false);
  assert.match(
    bad.status!.message,
    /^spec\.rules\[0\]\.http\.paths\[0\]\.path: "\/x\(\?\{code\}\)" has "\(\?" at 2; only \(\?:…\) groups are allowed/,
  );
});

Deno.test("risk limit: translated nginx.ingress.kubernetes.io keys are judged as the keys they become", async () => {
  const annotations = {
    "nginx.ingress.kubernetes.io/canary": "true",
    "nginx.ingress.kubernetes.io/canary-by-header": "X-Canary",
    "nginx.ingress.kubernetes.io/proxy-body-size": "8m",
  };
  const limited = { ...base, riskLimit: "medium" as const };
  const res = await reviewIngress(requestFor(good({ annotations })), { ...limited, nginxCompat: true });
  assert.equal(res.allowed, false);
  assert.equal(
    res.status!.message,
    "annotation nginx.ingress.kubernetes.io/canary-by-header is disabled: it becomes " +
      "ingress-controller.io/canary-header, whose risk is medium, and annotations of risk medium and above are " +
      "turned off in this controller's settings; annotation nginx.ingress.kubernetes.io/proxy-body-size is " +
      "disabled: it becomes ingress-controller.io/max-body-size, whose risk is medium, and annotations of risk " +
      "medium and above are turned off in this controller's settings",
  );
  // Without compatibility mode they do nothing, and are not judged; without a limit they pass.
  assert.equal((await reviewIngress(requestFor(good({ annotations })), limited)).allowed, true);
  assert.equal((await reviewIngress(requestFor(good({ annotations })), { ...base, nginxCompat: true })).allowed, true);
});
