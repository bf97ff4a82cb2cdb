/**
 * The lines of a backend variant (lib/render/settings_lines.ts, each feature's from its module under
 * lib/render/features/): with every feature set, the lines and their order are exactly these.
 */
import assert from "node:assert/strict";
import { resolveBackendSettings } from "../../lib/render/settings.ts";
import { settingsLines } from "../../lib/render/settings_lines.ts";
import { FULL_INGRESS, FULL_SERVICE, usableSecrets } from "./settings_fixtures.ts";

const LINES = [
  "timeout connect 2s",
  "timeout server 30s",
  "timeout queue 10s",
  "timeout tunnel 2h",
  "http-request set-timeout server 10m if { req.hdr(accept) -m sub text/event-stream }",
  "acl ic_allow src 10.0.0.0/8 2001:db8::/32",
  "http-request deny deny_status 403 if !ic_allow",
  "acl ic_deny src 192.0.2.0/24",
  "http-request deny deny_status 403 if ic_deny",
  "stick-table type ipv6 size 100k expire 120s store http_req_rate(60s),conn_cur",
  "acl ic_rate_allow src 10.1.0.0/16",
  "http-request track-sc0 src if !ic_rate_allow",
  "http-request deny deny_status 429 if { sc_http_req_rate(0) gt 300 }",
  "http-request deny deny_status 429 if { sc_conn_cur(0) gt 10 }",
  "acl ic_cert_sni ssl_fc_sni,lower,strcmp(txn.host) eq 0",
  "acl ic_cert_used ssl_c_used",
  "acl ic_cert_valid ssl_c_verify 0",
  "http-request deny deny_status 421 if { ssl_fc } !ic_cert_sni",
  "http-request deny deny_status 403 unless ic_cert_sni ic_cert_used ic_cert_valid",
  "http-request del-header X-SSL-Client-Cert",
  "http-request set-header X-SSL-Client-Cert %[ssl_c_der,base64] if ic_cert_sni ic_cert_used ic_cert_valid",
  "http-request auth realm 'Authentication Required' unless { http_auth(ul_shop_web-users) }",
  "http-request deny deny_status 413 if { req.hdr_val(content-length) gt 8388608 }",
  "http-request redirect location 'https://www.example.com/' code 301",
  "http-request redirect location '%[ssl_fc,iif(https,http)]://%[req.hdr(host)]/app' code 302 if { path / }",
  "acl ic_cors_origin req.hdr(origin) -m str 'https://app.example.com'",
  "acl ic_cors_origin req.hdr(origin) -m reg '^https://[^.]+\\.example\\.org$'",
  "http-request set-var(txn.ic_cors_origin) req.hdr(origin) if ic_cors_origin",
  "http-request return status 204 hdr Access-Control-Allow-Origin '%[var(txn.ic_cors_origin)]' hdr Access-Control-Allow-Credentials 'true' hdr Vary 'Origin' hdr Access-Control-Allow-Methods 'GET, PUT, POST, DELETE, PATCH, OPTIONS' hdr Access-Control-Allow-Headers 'DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization' hdr Access-Control-Max-Age '1728000' if METH_OPTIONS ic_cors_origin { req.hdr(access-control-request-method) -m found }",
  "http-response set-header Access-Control-Allow-Origin '%[var(txn.ic_cors_origin)]' if { var(txn.ic_cors_origin) -m found }",
  "http-response set-header Access-Control-Allow-Credentials 'true' if { var(txn.ic_cors_origin) -m found }",
  "http-response set-header Vary 'Origin' if { var(txn.ic_cors_origin) -m found }",
  "http-response set-header Access-Control-Expose-Headers 'X-Request-Id' if { var(txn.ic_cors_origin) -m found }",
  "http-request do-resolve(txn.ic_auth_dst,ic_auth,ipv4) str(oauth2-proxy.auth.svc.cluster.local)",
  "acl ic_auth_refused var(txn.ic_auth_dst) -m ip 0.0.0.0/8 127.0.0.0/8 169.254.0.0/16 100.100.100.200/32 168.63.129.16/32 224.0.0.0/3 ::/128 ::1/128 fe80::/10 ff00::/8 fd00:ec2::254/128 fd00:ec2::23/128 fd20:ce::254/128 fd00:100::100:200/128 64:ff9b::0.0.0.0/104 64:ff9b::127.0.0.0/104 64:ff9b::169.254.0.0/112 64:ff9b::100.100.100.200/128 64:ff9b::168.63.129.16/128 64:ff9b::224.0.0.0/99",
  "http-request set-var(txn.ic_auth_refused) var(txn.ic_auth_dst) if ic_auth_refused",
  "http-request unset-var(txn.ic_auth_dst) if ic_auth_refused",
  "http-request lua.ic_auth_request 'http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth' '80' '/oauth2/start' '-' '-'",
  "http-request deny deny_status 500 if !{ var(txn.ic_auth) -m str ok }",
  "http-response lua.ic_auth_cookies",
  "http-request del-header X-Debug",
  "http-request set-header X-Env 'prod'",
  "http-request add-header X-Trace 'on'",
  "http-request replace-path '^/api/?(.*)$' '/\\1'",
  "http-response del-header Server",
  "http-response set-header X-Frame-Options 'DENY'",
  "http-response add-header Cache-Control 'no-store'",
  "http-response set-header Strict-Transport-Security 'max-age=15768000; includeSubDomains' if { ssl_fc }",
  "dynamic-cookie-key 'be_shop_web_80_x'",
  "cookie INGRESSCOOKIE insert indirect nocache dynamic httponly attr SameSite=Lax maxlife 1h attr Max-Age=3600",
];

Deno.test("settings lines: every feature's lines, in the backend's order", () => {
  const s = resolveBackendSettings(
    FULL_INGRESS,
    FULL_SERVICE,
    { path: "/api", match: "prefix" },
    () => {},
    undefined,
    usableSecrets,
  );
  assert.deepEqual(settingsLines(s, "be_shop_web_80_x"), {
    lines: LINES,
    serverParams:
      "send-proxy-v2 ssl verify required ca-file shop_backend-ca_ca.pem sni str(api.internal.example) verifyhost api.internal.example alpn h2",
  });
});
