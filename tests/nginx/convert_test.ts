import assert from "node:assert/strict";
import { translateIngress } from "../../lib/nginx/translate.ts";
import { CONVERTERS } from "../../lib/nginx/convert.ts";
import { NGINX_RULES } from "../../lib/nginx/table.ts";
import { ANNOTATIONS } from "../../lib/annotations/table.ts";

const N = "nginx.ingress.kubernetes.io/";
const ing = (annotations: Record<string, string>) => ({ metadata: { namespace: "shop", name: "web", annotations } });

Deno.test("compatibility: served keys are written as ours, Go booleans normalised", () => {
  const { annotations, rows } = translateIngress(ing({
    [`${N}ssl-redirect`]: "False",
    [`${N}load-balance`]: "ewma",
    [`${N}proxy-read-timeout`]: "30",
    [`${N}proxy-send-timeout`]: "120",
    [`${N}configuration-snippet`]: "return 200;",
    [`${N}ssl-passthrough`]: "True",
  }));
  assert.deepEqual(annotations, {
    "ingress-controller.io/ssl-redirect": "false",
    "ingress-controller.io/ssl-passthrough": "true",
    "ingress-controller.io/load-balance": "leastconn",
    "ingress-controller.io/timeout-server": "120s",
  });
  assert.equal(rows.find((r) => r.annotation === `${N}configuration-snippet`)?.verdict, "refused");
});

Deno.test("compatibility: the oauth2-proxy pattern becomes auth-url, auth-signin and auth-response-headers", () => {
  const { annotations, rows } = translateIngress(ing({
    [`${N}auth-url`]: "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth",
    [`${N}auth-signin`]: "https://$host/oauth2/start?rd=$escaped_request_uri",
    [`${N}auth-response-headers`]: "X-Auth-Request-User, X-Auth-Request-Email",
  }));
  assert.deepEqual(annotations, {
    "ingress-controller.io/auth-url": "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth",
    "ingress-controller.io/auth-signin": "/oauth2/start",
    "ingress-controller.io/auth-response-headers": "X-Auth-Request-User, X-Auth-Request-Email",
  });
  assert.deepEqual(rows.map((r) => [r.annotation.slice(N.length), r.verdict]), [
    ["auth-response-headers", "supported"],
    ["auth-signin", "translated"],
    ["auth-url", "translated"],
  ]);
  // Not applicable, yet written as it is: our parser refuses it and the route answers 500 (never unauthenticated).
  const vars = translateIngress(ing({ [`${N}auth-url`]: "https://$host/oauth2/auth" }));
  assert.deepEqual(
    [vars.annotations, vars.rows[0].verdict],
    [{ "ingress-controller.io/auth-url": "https://$host/oauth2/auth" }, "unsupported"],
  );
  assert.match(vars.rows[0].note, /nginx variables are not available.*answer 500 instead of passing unauthenticated/);
  const metadata = translateIngress(ing({
    [`${N}auth-url`]: "http://169.254.169.254/latest/meta-data/",
    [`${N}auth-response-headers`]: "X-User, X'Evil",
  }));
  assert.deepEqual(metadata.annotations, {
    "ingress-controller.io/auth-url": "http://169.254.169.254/latest/meta-data/",
    "ingress-controller.io/auth-response-headers": "X-User, X'Evil",
  });
  assert.deepEqual(metadata.rows.map((r) => r.verdict), ["refused", "refused"]);
  assert.match(metadata.rows[1].note, /link-local.*answer 500 instead of passing unauthenticated/);
});

Deno.test("compatibility: the Ingress's own key (or its legacy alias) wins; bad values are not applied", () => {
  assert.deepEqual(
    translateIngress(ing({ [`${N}ssl-redirect`]: "false", "ingress.kubernetes.io/ssl-redirect": "true" })).annotations,
    {},
  );
  const bad = translateIngress(ing({ [`${N}ssl-redirect`]: "nope", [`${N}load-balance`]: "random" }));
  assert.deepEqual(bad.annotations, {});
  assert.deepEqual(bad.rows.map((r) => r.verdict), ["refused", "refused"]);
});

Deno.test("compatibility: every converter writes keys of ours that its rule names", () => {
  const ours = new Set(ANNOTATIONS.map((a) => a.key));
  for (const key of Object.keys(CONVERTERS)) {
    assert.ok(NGINX_RULES[key], `${key} has a rule`);
    for (const to of Object.keys(CONVERTERS[key]("1", { namespace: "x", annotations: {} }))) {
      assert.ok(ours.has(to), `${key} → ${to}`);
    }
  }
});

Deno.test("compatibility: use-regex and rewrite-target make regex paths; default-backend is written as ours", () => {
  // every path of the Ingress, Prefix and Exact too (ingress-nginx's buildLocation: ~* "^<path>")
  assert.deepEqual(translateIngress(ing({ [`${N}use-regex`]: "true" })).annotations, {
    "ingress-controller.io/path-regex": "all",
  });
  // ingress-nginx turns the paths into regexes when rewrite-target is set, with or without use-regex
  assert.deepEqual(translateIngress(ing({ [`${N}rewrite-target`]: "/$2" })).annotations, {
    "ingress-controller.io/path-regex": "all",
    "ingress-controller.io/rewrite-target": "/$2",
  });
  assert.deepEqual(
    translateIngress(ing({ [`${N}default-backend`]: "error-pages", [`${N}custom-http-errors`]: "404,503" }))
      .annotations,
    { "ingress-controller.io/default-backend": "error-pages", "ingress-controller.io/error-codes": "404,503" },
    "custom-http-errors becomes error-codes",
  );
});

Deno.test("compatibility: basic auth, client certificates and backend verification as ingress-nginx applies them", () => {
  const A = "ingress-controller.io/";
  const basic = translateIngress(ing({
    [`${N}auth-type`]: "basic",
    [`${N}auth-secret`]: "shop/users",
    [`${N}auth-realm`]: "Staff",
  }));
  assert.deepEqual(basic.annotations, { [`${A}auth-basic-secret`]: "users", [`${A}auth-basic-realm`]: "Staff" });
  // without auth-type basic, or with the auth-map form, ingress-nginx asks for no password: neither does the translation
  assert.deepEqual(translateIngress(ing({ [`${N}auth-secret`]: "users" })).annotations, {});
  const map = translateIngress(ing({
    [`${N}auth-type`]: "basic",
    [`${N}auth-secret`]: "users",
    [`${N}auth-secret-type`]: "auth-map",
  }));
  assert.equal(map.annotations[`${A}auth-basic-secret`], undefined);

  const tls = translateIngress(ing({
    [`${N}auth-tls-secret`]: "shop/clients-ca",
    [`${N}auth-tls-verify-client`]: "optional",
    [`${N}auth-tls-pass-certificate-to-upstream`]: "true",
  }));
  assert.deepEqual(tls.annotations, {
    [`${A}client-cert-ca-secret`]: "clients-ca",
    [`${A}client-cert-verify`]: "optional",
    [`${A}client-cert-header`]: "ssl-client-cert",
  });
  const off = translateIngress(ing({ [`${N}auth-tls-secret`]: "clients-ca", [`${N}auth-tls-verify-client`]: "off" }));
  assert.deepEqual(off.annotations, {});
  assert.deepEqual(
    translateIngress(ing({ [`${N}auth-tls-secret`]: "clients-ca" })).annotations,
    { [`${A}client-cert-ca-secret`]: "clients-ca" },
    "on by default: client-cert-verify's default is required",
  );

  const verify = translateIngress(ing({ [`${N}proxy-ssl-secret`]: "shop/ca", [`${N}proxy-ssl-verify`]: "on" }));
  assert.deepEqual(verify.annotations, { [`${A}backend-ca-secret`]: "ca" });
  assert.deepEqual(translateIngress(ing({ [`${N}proxy-ssl-secret`]: "shop/ca" })).annotations, {}, "verify off");
});

Deno.test("compatibility: cookie affinity, its expiry and the www twin are applied; session-cookie-* alone pins nothing", () => {
  const sticky = translateIngress(ing({
    [`${N}affinity`]: "cookie",
    [`${N}affinity-mode`]: "balanced",
    [`${N}session-cookie-name`]: "route",
    [`${N}session-cookie-expires`]: "3600",
    [`${N}from-to-www-redirect`]: "true",
  }));
  assert.deepEqual(sticky.annotations, {
    "ingress-controller.io/sticky-cookie": "true",
    "ingress-controller.io/sticky-cookie-name": "route",
    "ingress-controller.io/sticky-cookie-max-age": "3600s",
    "ingress-controller.io/www-redirect": "true",
  });
  assert.deepEqual(sticky.rows.map((r) => [r.annotation.slice(N.length), r.verdict]), [
    ["affinity", "translated"],
    ["affinity-mode", "translated"],
    ["from-to-www-redirect", "translated"],
    ["session-cookie-expires", "translated"],
    ["session-cookie-name", "supported"],
  ]);
  // as ingress-nginx: max-age wins over expires
  const both = translateIngress(ing({
    [`${N}affinity`]: "cookie",
    [`${N}session-cookie-max-age`]: "60",
    [`${N}session-cookie-expires`]: "3600",
  }));
  assert.equal(both.annotations["ingress-controller.io/sticky-cookie-max-age"], "60s");
  const alone = translateIngress(ing({ [`${N}session-cookie-name`]: "route" })).annotations;
  assert.equal(alone["ingress-controller.io/sticky-cookie"], undefined);
});
