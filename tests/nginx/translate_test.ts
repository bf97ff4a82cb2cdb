/**
 * The ingress-nginx translation over Ingresses written as users write them (tests/nginx/fixtures):
 * each annotation's verdict follows ingress-nginx's documented semantics, a key that becomes one of
 * ours that is not rendered yet is never `supported` (nor `translated`), snippets and other
 * namespaces' Secrets are refused, bad values are refused naming the value, unknown keys are
 * unsupported, and other annotations are not reported.
 */
import assert from "node:assert/strict";
import { specOf } from "../../lib/annotations/table.ts";
import { ingressesFromText, report } from "../../lib/nginx/command.ts";
import { NGINX_RULES } from "../../lib/nginx/table.ts";
import { checkIngress, translateAnnotation } from "../../lib/nginx/translate.ts";

const fixture = (name: string) =>
  ingressesFromText(Deno.readTextFileSync(new URL(`./fixtures/${name}`, import.meta.url)), name);
const rows = report(["shop.yaml", "internal.json", "grpc-canary.yaml"].flatMap(fixture));
const verdictOf = (ingress: string, key: string) =>
  rows.find((r) => r.ingress === ingress && r.annotation === `nginx.ingress.kubernetes.io/${key}`);

Deno.test("fixtures: every nginx annotation gets one row; other annotations and kinds are not reported", () => {
  assert.equal(rows.length, 63);
  assert.ok(rows.every((r) => r.annotation.startsWith("nginx.ingress.kubernetes.io/")));
  assert.deepEqual([...new Set(rows.map((r) => `${r.namespace}/${r.ingress}`))].sort(), [
    "default/legacy",
    "grpc/greeter",
    "grpc/greeter-canary",
    "kubernetes-dashboard/dashboard",
    "monitoring/grafana",
    "shop/shop-api",
    "shop/shop-web",
  ]);
});

Deno.test("keys that map to served keys are supported or translated today", () => {
  assert.equal(verdictOf("shop-api", "ssl-redirect")?.verdict, "translated", "the host of the Location in lower case");
  const read = verdictOf("shop-api", "proxy-read-timeout")!;
  assert.equal(read.verdict, "translated");
  assert.match(read.note, /one server inactivity timeout/);
  const passthrough = verdictOf("legacy", "ssl-passthrough")!;
  assert.equal(passthrough.verdict, "supported", "ssl-passthrough is served");
  assert.match(passthrough.note, /needs --enable-ssl-passthrough/);
  const ewma = verdictOf("greeter-canary", "load-balance")!;
  assert.deepEqual([ewma.verdict, ewma.note], ["translated", "load-balance: leastconn (HAProxy has no EWMA)"]);
});

Deno.test("a key that becomes one not rendered yet is never reported supported or translated", () => {
  for (const r of rows) {
    const rule = NGINX_RULES[r.annotation.slice("nginx.ingress.kubernetes.io/".length)];
    if (r.verdict === "supported" || r.verdict === "translated") {
      assert.ok(rule.to.every((k) => specOf(k)?.status === "served"), JSON.stringify(r));
    }
  }
  assert.equal(verdictOf("shop-api", "enable-cors")!.verdict, "translated", "cors-enable is served, with differences");
  assert.equal(verdictOf("greeter-canary", "canary")!.verdict, "supported", "canary is served");
  const auth = once("auth-secret", "users", { "nginx.ingress.kubernetes.io/auth-type": "basic" });
  assert.equal(auth.verdict, "translated", "auth-basic-secret is served");
  assert.match(auth.note, /^htpasswd in key auth; a missing or unreadable Secret answers 401 .*ingress-nginx: 503/);
  const errors = verdictOf("legacy", "custom-http-errors")!;
  assert.equal(errors.verdict, "translated", "error-codes is served");
  assert.match(errors.note, /needs default-backend on the Ingress.*GET of \/ with X-Code/);
});

Deno.test("regex paths, capture rewrites and the default backend are translated with their differences", () => {
  const rewrite = verdictOf("shop-api", "rewrite-target")!;
  assert.equal(rewrite.verdict, "translated");
  assert.equal(
    rewrite.note,
    "$n are filled from the path's regex captures; every path of the host is a regex (path-regex: all), on any " +
      "path type, as in ingress-nginx; the differences of use-regex apply",
  );
  const regex = verdictOf("shop-api", "use-regex")!;
  assert.equal(regex.verdict, "translated");
  assert.match(
    regex.note,
    /^every path of the Ingress \(Exact, Prefix, ImplementationSpecific\) and of every Ingress of the same host is a regular expression matched from the start of the path, case-insensitively, longest first, as in ingress-nginx; differences: /,
  );
  assert.equal(once("default-backend", "error-pages").verdict, "translated", "without X-Code when no endpoint");
  assert.equal(once("default-backend", "other/pages").verdict, "refused", "another namespace's Service");
  const both = verdictOf("legacy", "default-backend")!;
  assert.deepEqual([both.verdict, /with custom-http-errors it answers for those codes/.test(both.note)], [
    "translated",
    true,
  ]);
});

Deno.test("snippets, other namespaces' Secrets and bad values are refused; unknown keys unsupported", () => {
  const snippet = verdictOf("shop-web", "configuration-snippet")!;
  assert.equal(snippet.verdict, "refused");
  assert.match(snippet.note, /never executed .*use the request-headers-\*\/response-headers-\* annotations/);
  assert.equal(verdictOf("grafana", "server-snippet")?.verdict, "refused");
  assert.equal(verdictOf("grafana", "auth-secret")?.verdict, "translated", "monitoring/… is its own namespace");
  const foreign = verdictOf("dashboard", "auth-secret")!;
  assert.equal(foreign.verdict, "refused");
  assert.match(foreign.note, /Secret of namespace kube-system.*\(deliberate, for security\)$/);
  const size = verdictOf("legacy", "proxy-body-size")!;
  assert.deepEqual([size.verdict, size.note], [
    "refused",
    'invalid value "10 MB": it is not a size like 8m; the annotation is ignored',
  ]);
  assert.deepEqual(
    [verdictOf("legacy", "some-made-up-key")?.verdict, verdictOf("legacy", "some-made-up-key")?.note],
    ["unsupported", "not translated: this annotation is ignored"],
  );
  assert.equal(verdictOf("dashboard", "auth-url")?.verdict, "unsupported");
  assert.match(verdictOf("dashboard", "auth-url")!.note, /nginx variables are not available/);
  const signin = verdictOf("dashboard", "auth-signin")!;
  assert.equal(signin.verdict, "translated", "$host pattern translated");
  assert.match(
    signin.note,
    /^the sign-in Location is a path on the request's own scheme and host .*--whitelist-domain/,
  );
  assert.equal(verdictOf("dashboard", "auth-response-headers")!.verdict, "supported");
});

const ctx = (annotations: Record<string, string> = {}) => ({ namespace: "web", annotations });
const once = (key: string, raw: string, annotations: Record<string, string> = {}) =>
  translateAnnotation(key, raw, ctx(annotations));

Deno.test("value-dependent verdicts follow ingress-nginx's semantics", () => {
  assert.equal(once("backend-protocol", "AJP").verdict, "unsupported");
  assert.equal(once("backend-protocol", "grpc").verdict, "supported", "GRPC maps to h2");
  assert.match(once("backend-protocol", "grpc").note, /backend-protocol: h2/);
  assert.equal(once("backend-protocol", "SPDY").verdict, "refused");
  assert.equal(once("auth-type", "digest").note, "digest authentication is not available");
  assert.match(once("auth-type", "basic").note, /\$apr1\$/);
  const basic = { "nginx.ingress.kubernetes.io/auth-type": "basic" };
  assert.equal(
    once("auth-secret", "web/users", basic).verdict,
    "translated",
    "own namespace: becomes auth-basic-secret",
  );
  assert.deepEqual(
    [once("auth-secret", "users").verdict, once("auth-secret", "users").note],
    ["supported", "no effect without auth-type: basic (as in ingress-nginx)"],
  );
  assert.equal(once("auth-secret", "other/users", basic).verdict, "refused");
  assert.equal(once("auth-secret-type", "auth-map").verdict, "unsupported");
  assert.equal(once("auth-tls-secret", "web/clients-ca").verdict, "translated", "on by default: handshake, not 400");
  const off = { "nginx.ingress.kubernetes.io/auth-tls-verify-client": "off" };
  assert.equal(once("auth-tls-secret", "web/clients-ca", off).verdict, "supported");
  assert.equal(once("auth-tls-verify-client", "optional").verdict, "translated", "another CA: handshake, not 400");
  assert.equal(once("auth-tls-secret", "other/clients-ca").verdict, "refused");
  assert.equal(once("auth-tls-verify-client", "optional_no_ca").verdict, "unsupported");
  assert.equal(once("auth-tls-verify-client", "on").verdict, "translated");
  assert.match(once("auth-tls-pass-certificate-to-upstream", "true").note, /base64 DER .*URL-encoded PEM/);
  const ssl = once("proxy-ssl-secret", "web/backend-ca", { "nginx.ingress.kubernetes.io/proxy-ssl-verify": "on" });
  assert.deepEqual([ssl.verdict, ssl.note.slice(0, 36)], ["translated", "its ca.crt verifies the backend (pro"]);
  assert.equal(once("proxy-ssl-secret", "web/backend-ca").verdict, "unsupported", "verify off: a client cert only");
  assert.equal(once("load-balance", "round_robin").verdict, "supported");
  assert.equal(once("load-balance", "random").verdict, "refused");
  assert.equal(once("canary-weight", "150").verdict, "refused");
  assert.equal(
    once("canary-weight", "150", { "nginx.ingress.kubernetes.io/canary-weight-total": "1000" }).verdict,
    "supported",
  );
  assert.equal(once("ssl-redirect", "False").verdict, "supported", "Go's ParseBool forms; no redirect, the same");
  assert.equal(once("ssl-redirect", "T").verdict, "translated", "the host of the Location in lower case");
  assert.equal(once("preserve-trailing-slash", "true").verdict, "supported", "a / ending the path kept");
  assert.equal(once("preserve-trailing-slash", "false").verdict, "supported", "dropped, as ingress-nginx");
  assert.deepEqual([once("load-balance", "ewma").verdict, once("load-balance", "ewma").note], [
    "translated",
    "load-balance: leastconn (HAProxy has no EWMA)",
  ]);
  assert.equal(once("proxy-ssl-server-name", "on").verdict, "supported");
  assert.equal(once("proxy-ssl-server-name", "off").verdict, "translated", "SNI is sent anyway");
  assert.equal(once("session-cookie-secure", "true").verdict, "supported");
  assert.equal(once("session-cookie-secure", "false").verdict, "translated", "not Secure over HTTPS");
  assert.equal(once("cors-allow-credentials", "false").verdict, "supported");
  assert.match(once("cors-allow-origin", "*").note, /sends the request's Origin back instead of \*/);
  assert.match(once("proxy-read-timeout", "30").note, /\(deliberate: an HAProxy limit\)$/);
  assert.match(once("server-snippet", "return 200;").note, /\(deliberate, for security\)$/);
  assert.equal(once("ssl-redirect", "no").verdict, "refused");
  assert.equal(once("proxy-read-timeout", "60s").verdict, "refused", "unitless seconds only");
  assert.match(
    once("rewrite-target", "/").note,
    /^the whole path is replaced; every path of the host is a regex \(path-regex: all, as ingress-nginx does when rewrite-target is set without use-regex\), on any path type/,
  );
  assert.equal(once("auth-signin", "https://$host/oauth2/start?rd=$escaped_request_uri").verdict, "translated");
  const url = once("auth-url", "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth");
  assert.equal(url.verdict, "translated");
  assert.match(url.note, /always a GET .*about 5 s.*without search domains/);
  assert.match(once("auth-signin", "https://$host/x?foo=$arg_x").note, /nginx variables other than/);
});

Deno.test("hostile values are refused or stay unsupported, on one line, never supported", () => {
  for (const key of Object.keys(NGINX_RULES)) {
    for (const raw of ["30\n    http-request deny", "${HOME}", "%[env(HOME)]", "x'y", "x".repeat(5000)]) {
      const t = once(key, raw);
      assert.ok(t.verdict === "refused" || t.verdict === "unsupported", `${key} ${JSON.stringify(raw)}: ${t.verdict}`);
      assert.doesNotMatch(t.note, /\n/);
      assert.ok(t.note.length < 600, key);
    }
  }
});

Deno.test("an Ingress without nginx annotations has no rows; a non-string value is refused", () => {
  assert.deepEqual(checkIngress({ metadata: { namespace: "a", name: "b", annotations: { "x/y": "z" } } }), []);
  assert.deepEqual(checkIngress({ metadata: { name: "b" } }), []);
  const odd = checkIngress({
    metadata: {
      namespace: "a",
      name: "b",
      annotations: { "nginx.ingress.kubernetes.io/canary": 1 as unknown as string },
    },
  });
  assert.equal(odd[0].verdict, "refused");
});

Deno.test("reading files: documents, Lists and JSON arrays; other kinds skipped; no namespace is default", () => {
  const text = [
    "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a}",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: b, namespace: x}}\n- {apiVersion: v1, kind: Service, metadata: {name: s}}",
    '[{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "c", "namespace": "y"}}]',
    "apiVersion: example.com/v1\nkind: Ingress\nmetadata: {name: not-networking}",
    "",
  ].join("\n---\n");
  assert.deepEqual(ingressesFromText(text, "f.yaml").map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`), [
    "default/a",
    "x/b",
    "y/c",
  ]);
  assert.throws(
    () => ingressesFromText("kind: List\nitems: 3\n", "l.yaml"),
    /-f l\.yaml: document 1 is a List without items/,
  );
  assert.throws(() => ingressesFromText("a: [b\n", "bad.yaml"), /-f bad\.yaml: document 1 is not valid YAML or JSON: /);
});
