/**
 * A GRPCRouteMatch as the proxy compares it (lib/gateway/grpc_matches.ts), from the GRPCRoute
 * reference: a gRPC call is a POST to `/<service>/<method>`; Exact matches the service and the
 * method exactly and case-sensitively, an omitted one matches any; names follow the CRD's grammar;
 * RegularExpression is implementation-specific (here: the regex subset, within one segment);
 * header names are case-insensitive and only the first of equal names counts.
 */
import assert from "node:assert/strict";
import { readGrpcMatch } from "../../lib/gateway/grpc_matches.ts";
import type { GRPCRouteMatch } from "../../lib/gateway/api.ts";
import { pathMatches } from "./serve.ts";

const SVC = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";

function read(m: GRPCRouteMatch) {
  const r = readGrpcMatch(m, "spec.rules[0].matches[0]");
  if (!r.ok) throw new Error(r.message);
  return r;
}

function refused(m: GRPCRouteMatch): string {
  const r = readGrpcMatch(m, "spec.rules[0].matches[0]");
  assert.equal(r.ok, false, JSON.stringify(m));
  return (r as { message: string }).message;
}

Deno.test("Exact service and method: exactly that call, case-sensitive", () => {
  const r = read({ method: { service: SVC, method: "Echo" } });
  assert.deepEqual(r.match.path, { type: "Exact", value: `/${SVC}/Echo` });
  assert.ok(pathMatches(r.match.path, `/${SVC}/Echo`));
  for (const other of [`/${SVC}/EchoTwo`, `/${SVC}/echo`, `/${SVC}.X/Echo`, `/x/Echo`]) {
    assert.ok(!pathMatches(r.match.path, other), other);
  }
  assert.deepEqual(r.rank, { service: SVC.length, method: 4 });
});

Deno.test("service only: every method of that service, not of a service whose name starts the same", () => {
  const r = read({ method: { type: "Exact", service: SVC } });
  for (const p of [`/${SVC}/Echo`, `/${SVC}/EchoTwo`]) assert.ok(pathMatches(r.match.path, p), p);
  for (const p of [`/${SVC}Two/Echo`, `/${SVC}.Sub/Echo`, "/other.Svc/Echo"]) {
    assert.ok(!pathMatches(r.match.path, p), p);
  }
  assert.deepEqual(r.rank, { service: SVC.length, method: 0 });
});

Deno.test("method only: that method of any service, nothing else", () => {
  const r = read({ method: { method: "Echo" } });
  for (const p of [`/${SVC}/Echo`, "/a.B/Echo"]) assert.ok(pathMatches(r.match.path, p), p);
  for (const p of [`/${SVC}/EchoTwo`, `/${SVC}/echo`, "/Echo", "/a/b/Echo"]) {
    assert.ok(!pathMatches(r.match.path, p), p);
  }
});

Deno.test("no method match: every call", () => {
  for (const m of [{}, { headers: [] }]) {
    const r = read(m);
    assert.deepEqual(r.match.path, { type: "PathPrefix", value: "/" });
    assert.deepEqual(r.rank, { service: 0, method: 0 });
  }
});

Deno.test("RegularExpression: service and method each within their segment, an omitted one any", () => {
  const r = read({ method: { type: "RegularExpression", service: "pkg\\.v[0-9]+\\.Svc", method: "Get.*" } });
  assert.ok(pathMatches(r.match.path, "/pkg.v2.Svc/GetThing"));
  assert.ok(!pathMatches(r.match.path, "/pkg.v2.Svc/PutThing"));
  assert.ok(!pathMatches(r.match.path, "/pkg.vx.Svc/GetThing"));
  const any = read({ method: { type: "RegularExpression", method: "Echo(Two)?" } });
  assert.ok(pathMatches(any.match.path, `/${SVC}/EchoTwo`));
  assert.ok(!pathMatches(any.match.path, `/${SVC}/EchoThree`));
  assert.match(refused({ method: { type: "RegularExpression", service: "a/b" } }), /service: .*contains \//);
  assert.match(refused({ method: { type: "RegularExpression", method: "(?=x)" } }), /method: the regular expression/);
});

Deno.test("names outside the CRD's grammar, an empty match and unknown types are refused, naming the field", () => {
  assert.match(
    refused({ method: { service: "a/b", method: "M" } }),
    /matches\[0\]\.method\.service "a\/b" is not a gRPC service/,
  );
  assert.match(refused({ method: { service: "a..b" } }), /not a gRPC service/);
  assert.match(refused({ method: { service: "1pkg.Svc" } }), /not a gRPC service/);
  assert.match(refused({ method: { service: "a.B", method: "Get-It" } }), /method "Get-It" is not a gRPC method/);
  assert.match(refused({ method: { service: "a.B", method: "x y" } }), /not a gRPC method/);
  assert.match(refused({ method: { service: "a.B", method: "M\n" } }), /not a gRPC method/);
  assert.match(refused({ method: {} }), /one or both of service and method/);
  assert.match(refused({ method: { type: "Prefix" as "Exact", service: "a.B" } }), /type "Prefix" is not supported/);
  // the grammar's leading dot (a protobuf full name) and case-insensitive letters are accepted
  assert.deepEqual(read({ method: { service: ".Pkg.Svc", method: "_m1" } }).match.path, {
    type: "Exact",
    value: "/.Pkg.Svc/_m1",
  });
});

Deno.test("headers: names case-insensitive, the first of equal names counts; values checked as HTTPRoute's", () => {
  const r = read({
    headers: [{ name: "Version", value: "one" }, { name: "version", value: "two" }, {
      name: "color",
      type: "RegularExpression",
      value: "bl.*",
    }],
  });
  assert.deepEqual(r.match.headers, [
    { name: "version", type: "Exact", value: "one" },
    { name: "color", type: "RegularExpression", value: "bl.*" },
  ]);
  assert.match(refused({ headers: [{ name: "bad name", value: "x" }] }), /headers\[0\]\.name/);
  assert.match(refused({ headers: [{ name: "x", value: "a'b" }] }), /headers\[0\]/);
});
