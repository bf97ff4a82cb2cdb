/**
 * The TLS passthrough ports of the Gateway renderer (lib/gateway/render_tls.ts): `haproxy -c` on a
 * model with TLS and HTTP ports, the `passthrough.map` keys (exact, wildcard suffix, any name),
 * the weighted choice lines, the `mode tcp` backends, and the refusal of unchecked values.
 */
import assert from "node:assert/strict";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { MAP_LINE } from "../../lib/render/maps.ts";
import type { GatewayProxyModel, ProxyPort, SniEntry, TlsRule } from "../../lib/gateway/model_types.ts";
import { checkRendered, createCA, entry, httpPort, model, pemFor, rule, service } from "./render_fixtures.ts";

const templates = await loadTemplates(null);
const tcp = (ns: string, svc: string, address: string, port = 443) => ({
  ...service(ns, svc, [{ address, port: 8443 }], port),
  name: `be_${ns}_${svc}_${port}_tcp`,
  mode: "tcp" as const,
});
const a = tcp("ns", "a", "10.0.0.1");
const b = tcp("ns", "b", "10.0.0.2");
const web = service("ns", "web", [{ address: "10.0.0.3", port: 8080 }]);

function tlsPort(port: number, sni: SniEntry[]): ProxyPort {
  return { port, protocol: "TLS", routes: [], certs: [], sni };
}
const sni = (hostname: string, r: string): SniEntry => ({ hostname, rule: r, route: "ns/r" });
const tlsRule = (name: string, targets: [string, number][], invalidWeight = 0): TlsRule => ({
  name,
  targets: targets.map(([backend, weight]) => ({ backend, weight })),
  invalidWeight,
});

function tlsModel(): GatewayProxyModel {
  return {
    ...model(
      [
        httpPort(80, [entry("", "/", "gw_web")]),
        tlsPort(443, [sni("abc.example.com", "gw_one"), sni("*.example.com", "gw_split"), sni("", "gw_none")]),
        tlsPort(8443, [sni("*.a.b.c.d.e.f.example.com", "gw_one")]),
      ],
      [rule("gw_web", [[web.name, 1]])],
      [a, b, web],
    ),
    tlsRules: [
      tlsRule("gw_none", [], 1),
      tlsRule("gw_one", [[a.name, 1]]),
      tlsRule("gw_split", [[a.name, 3], [b.name, 1]], 1),
    ],
  };
}

Deno.test("TLS ports: a mode tcp frontend per port routing by SNI through passthrough.map; haproxy -c accepts it", async () => {
  const r = renderGateway(tlsModel(), templates);
  const check = await checkRendered(r);
  assert.ok(check.ok, check.output);
  const cfg = r.config;
  assert.ok(cfg.includes('frontend tls_443\n    mode tcp\n    bind "${IC_BIND_ADDR}:8443"\n'));
  assert.ok(cfg.includes('frontend tls_8443\n    mode tcp\n    bind "${IC_BIND_ADDR}:18443"\n'));
  assert.match(cfg, /^frontend http_80$/m);
  // the ClientHello's SNI, never decrypted; a connection that sends none within the delay is closed
  assert.match(cfg, /tcp-request content reject if !\{ req_ssl_hello_type 1 \}/);
  assert.match(cfg, /set-var\(sess\.ic_sni\) req\.ssl_sni,lower/);
  // an eight-label wildcard suffix is looked up too (the default depths stop at five)
  assert.match(cfg, /field\(-1,\.,8\),regsub\(\^,8443:\.\)/);
  assert.ok(cfg.includes("backend be_ns_a_443_tcp\n    balance roundrobin\n    mode tcp\n"));
  assert.deepEqual(r.maps["passthrough.map"].split("\n").filter(Boolean), [
    "443: ic_reject",
    "443:.example.com gw_split",
    "443:abc.example.com be_ns_a_443_tcp",
    "8443:.a.b.c.d.e.f.example.com be_ns_a_443_tcp",
  ]);
  for (const l of r.maps["passthrough.map"].split("\n").filter(Boolean)) assert.match(l, MAP_LINE);
});

Deno.test("TLS rules by weight: a random number below the summed weight picks a target, the invalid share is refused", () => {
  const cfg = renderGateway(tlsModel(), templates).config;
  const lines = cfg.split("\n").map((l) => l.trim()).filter((l) => l.includes("gw_split"));
  assert.deepEqual(lines, [
    "tcp-request content set-var(sess.ic_pick) rand(5) if { var(sess.ic_pass) -m str gw_split }",
    "tcp-request content set-var(sess.ic_pass) str(be_ns_a_443_tcp) if { var(sess.ic_pass) -m str gw_split } " +
    "{ var(sess.ic_pick) -m int lt 3 }",
    "tcp-request content set-var(sess.ic_pass) str(be_ns_b_443_tcp) if { var(sess.ic_pass) -m str gw_split } " +
    "{ var(sess.ic_pick) -m int lt 4 }",
    "tcp-request content set-var(sess.ic_pass) str(ic_reject) if { var(sess.ic_pass) -m str gw_split }",
  ]);
  // a rule with one target and nothing invalid maps straight to its backend: no choice lines
  assert.ok(!cfg.includes("-m str gw_one"));
});

Deno.test("TLS ports refuse what the model should never hold: unchecked names, unknown rules, a name twice", () => {
  const bad = (m: GatewayProxyModel) => assert.throws(() => renderGateway(m, templates), /bug/);
  const withSni = (entries: SniEntry[]) => ({ ...tlsModel(), ports: [tlsPort(443, entries)] });
  bad(withSni([sni("a.example.com x", "gw_one")]));
  bad(withSni([sni("a.example.com\n", "gw_one")]));
  bad(withSni([sni("${HOME}.example.com", "gw_one")]));
  bad(withSni([sni("a.example.com", "gw_unknown")]));
  bad(withSni([sni("a.example.com", "gw_one"), sni("a.example.com", "gw_split")]));
  bad({ ...tlsModel(), tlsRules: [tlsRule("gw_one", [["be_ns_gone_443_tcp", 1]])] });
  bad({ ...tlsModel(), tlsRules: [tlsRule("gw one", [[a.name, 1]], 1)] });
  bad({ ...tlsModel(), backends: [{ ...a, name: "be_ns_a_443" }, b, web] });
});

/** A TLS port whose listeners are in `modes`; Terminate ones serve the certificate `file` for `hosts`. */
function modePort(port: number, modes: ("Passthrough" | "Terminate")[], sniEntries: SniEntry[], hosts: string[]) {
  const certs = modes.includes("Terminate") ? [{ file: "ns_cert.pem", namespace: "ns", name: "cert", hosts }] : [];
  return { ...tlsPort(port, sniEntries), tlsModes: modes, certs };
}
const term = (hostname: string, r: string | null): SniEntry => ({ hostname, rule: r, route: "ns/t", terminate: true });

Deno.test("TLS Terminate port: one frontend decrypting with the crt-list, routing by the handshake's SNI (t<port>: keys)", async () => {
  const ca = await createCA({ commonName: "render tls terminate CA" });
  const m: GatewayProxyModel = {
    ...tlsModel(),
    ports: [modePort(8443, ["Terminate"], [term("tls.example.com", "gw_one"), term("*.example.com", null)], [
      "tls.example.com",
      "*.example.com",
    ])],
  };
  const r = renderGateway(m, templates);
  const check = await checkRendered(r, { "ns_cert.pem": await pemFor(ca, ["tls.example.com"]) });
  assert.ok(check.ok, check.output);
  assert.ok(r.config.includes(
    'frontend tls_8443\n    mode tcp\n    bind "${IC_BIND_ADDR}:18443" ssl crt-list "${IC_CERT_DIR}/crt-list" strict-sni\n',
  ));
  // nothing is inspected before the handshake; the SNI is the one the handshake agreed
  assert.ok(!r.config.includes("req_ssl_hello_type"));
  assert.match(r.config, /set-var\(sess\.ic_sni\) ssl_fc_sni,lower/);
  assert.ok(!r.config.includes("frontend tlsterm_"));
  assert.deepEqual(r.maps["passthrough.map"].split("\n").filter(Boolean), [
    "t8443:.example.com ic_reject",
    "t8443:tls.example.com be_ns_a_443_tcp",
  ]);
  assert.deepEqual(r.crtList.trim().split("\n"), ["ns_cert.pem tls.example.com *.example.com"]);
  assert.deepEqual(r.secrets, [{ file: "ns_cert.pem", namespace: "ns", name: "cert" }]);
});

Deno.test("mixed TLS port: the ClientHello's SNI first; Terminate names handed to a decrypting frontend over a socket", async () => {
  const ca = await createCA({ commonName: "render tls mixed CA" });
  const m: GatewayProxyModel = {
    ...tlsModel(),
    ports: [
      httpPort(80, [entry("", "/", "gw_web")]),
      modePort(8883, ["Passthrough", "Terminate"], [
        sni("abc.example.com", "gw_one"),
        term("tls.example.com", "gw_split"),
        term("*.t.example.com", null),
      ], ["tls.example.com"]),
    ],
  };
  const r = renderGateway(m, templates);
  const check = await checkRendered(r, { "ns_cert.pem": await pemFor(ca, ["tls.example.com"]) });
  assert.ok(check.ok, check.output);
  const cfg = r.config;
  assert.ok(cfg.includes('frontend tls_8883\n    mode tcp\n    bind "${IC_BIND_ADDR}:8883"\n'));
  assert.ok(cfg.includes(
    'frontend tlsterm_8883\n    mode tcp\n    bind "unix@${IC_RUNTIME_SOCKET}.tls8883" mode 600 accept-proxy ' +
      'ssl crt-list "${IC_CERT_DIR}/crt-list" strict-sni\n',
  ));
  assert.ok(cfg.includes(
    'backend ic_tlsterm_8883\n    mode tcp\n    server tlsterm "unix@${IC_RUNTIME_SOCKET}.tls8883" send-proxy-v2\n',
  ));
  // before decryption every name, the Terminate ones to the hand-off (a stop refused at once); after, Terminate names only
  assert.deepEqual(r.maps["passthrough.map"].split("\n").filter(Boolean), [
    "8883:.t.example.com ic_reject",
    "8883:abc.example.com be_ns_a_443_tcp",
    "8883:tls.example.com ic_tlsterm_8883",
    "t8883:.t.example.com ic_reject",
    "t8883:tls.example.com gw_split",
  ]);
  // the weighted choice runs where the rule is chosen: in the decrypting frontend only
  const term8883 = cfg.slice(cfg.indexOf("frontend tlsterm_8883"));
  const pass8883 = cfg.slice(cfg.indexOf("frontend tls_8883"), cfg.indexOf("frontend tlsterm_8883"));
  assert.match(
    term8883.slice(0, term8883.indexOf("use_backend")),
    /rand\(5\) if \{ var\(sess\.ic_pass\) -m str gw_split \}/,
  );
  assert.ok(!pass8883.includes("gw_split"));
  assert.match(pass8883, /req_ssl_hello_type 1/);
});

Deno.test("TLS Terminate ports refuse a model without certificate or mode", () => {
  const bad = (p: ProxyPort) => assert.throws(() => renderGateway({ ...tlsModel(), ports: [p] }, templates), /bug/);
  bad({ ...modePort(443, ["Terminate"], [term("a.example.com", "gw_one")], ["a.example.com"]), certs: [] });
  bad({ ...modePort(443, [], [], []) });
  bad(modePort(443, ["Terminate"], [term("a.example.com x", "gw_one")], ["a.example.com"]));
});

Deno.test("hostname-less listeners on two ports (HTTPS and TLS Terminate): the lower port's certificate is the default of both", async () => {
  const ca = await createCA({ commonName: "render two defaults CA" });
  const own = (file: string, name: string) => ({ file, namespace: "ns", name, hosts: [] as string[] });
  const m: GatewayProxyModel = {
    ...tlsModel(),
    ports: [
      { ...httpPort(443, [entry("", "/", "gw_web")]), protocol: "HTTPS", certs: [own("ns_one.pem", "one")] },
      { ...modePort(8443, ["Terminate"], [term("", "gw_one")], []), certs: [own("ns_two.pem", "two")] },
    ],
  };
  const r = renderGateway(m, templates);
  const pem = await pemFor(ca, ["example.com"]);
  const check = await checkRendered(r, { "ns_one.pem": pem });
  assert.ok(check.ok, check.output);
  assert.deepEqual(r.crtList.trim().split("\n"), ["ns_one.pem !*"]);
  assert.ok(!r.config.includes("strict-sni"));
  assert.deepEqual(r.maps["passthrough.map"].split("\n").filter(Boolean), ["t8443: be_ns_a_443_tcp"]);
});
