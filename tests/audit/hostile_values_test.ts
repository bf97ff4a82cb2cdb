/**
 * Hostile values in audited requests, written to real log files by the log backend: header values
 * with control bytes, C1 controls and Unicode line separators stay in the event, escaped, and never
 * split a line (JSON or legacy); a client's Audit-ID is kept only when it is short printable ASCII.
 */
import assert from "node:assert/strict";
import { createAuditor, maxAuditIDLength } from "../../lib/audit/auditor.ts";
import { allRequestResponse, assertSafeLine, logSettings, request, settings, withDir, writePolicy } from "./helpers.ts";

/** A string as an HTTP server hands a header over: its UTF-8 bytes, one Latin-1 character each. */
function asReceived(text: string): string {
  return String.fromCharCode(...new TextEncoder().encode(text));
}

const hostileAgent = "kubectl/é\x01\x7f\u0085\u2028\u2029\t\x1b[31m";
const hostileBody = { note: "a\u2028b\u2029c\u0085d\x00e\x1bf" };

async function auditOne(
  path: string,
  format: "json" | "legacy",
  over: Parameters<typeof request>[0] = {},
): Promise<string> {
  const policyFile = await writePolicy(path.slice(0, path.lastIndexOf("/")), allRequestResponse);
  const auditor = await createAuditor(settings(policyFile, { log: logSettings(path, { format }) }));
  const h = auditor.begin(request({
    method: "POST",
    verb: "post",
    headers: new Headers({ "user-agent": asReceived(hostileAgent) }),
    ...over,
  }))!;
  h.annotate("authorization.k8s.io/reason", "because\u2028of\u0085this");
  h.requestBody(JSON.stringify(hostileBody));
  await h.complete(200, { kind: "Answer", text: "x\u2029y" });
  await auditor.shutdown();
  return h.auditID;
}

Deno.test("audit JSON lines: control bytes, C1 controls and U+2028/U+2029 are kept, escaped; no line splits", () =>
  withDir(async (dir) => {
    const path = `${dir}/audit.log`;
    await auditOne(path, "json");
    const text = await Deno.readTextFile(path);
    assert.ok(text.endsWith("\n"));
    const lines = text.slice(0, -1).split("\n");
    assert.equal(lines.length, 2, "RequestReceived and ResponseComplete");
    for (const line of lines) {
      assertSafeLine(line);
    }
    const [received, complete] = lines.map((l) => JSON.parse(l));
    assert.equal(received.userAgent, hostileAgent, "the user agent is kept, decoded from UTF-8");
    assert.equal(complete.userAgent, hostileAgent);
    assert.deepEqual(complete.requestObject, hostileBody);
    assert.equal(complete.responseObject.text, "x\u2029y");
    assert.equal(complete.annotations["authorization.k8s.io/reason"], "because\u2028of\u0085this");
    assert.match(lines[0], /"userAgent":"kubectl\/é\\u0001\\u007f\\u0085\\u2028\\u2029\\t\\u001b\[31m"/);
  }));

Deno.test("audit legacy lines: the same values are quoted as Go's %q does and never split a line", () =>
  withDir(async (dir) => {
    const path = `${dir}/audit.log`;
    await auditOne(path, "legacy", { requestURI: "/healthz?q=\u2028" });
    const text = await Deno.readTextFile(path);
    const lines = text.slice(0, -1).split("\n");
    assert.equal(lines.length, 2);
    for (const line of lines) {
      assertSafeLine(line);
      assert.ok(
        line.includes(String.raw` user-agent="kubectl/é\x01\x7f\u0085\u2028\u2029\t\x1b[31m" `),
        line,
      );
      assert.ok(line.includes(String.raw` uri="/healthz?q=\u2028" `), line);
    }
  }));

Deno.test("Audit-ID: a client's ID is kept up to 128 printable ASCII characters, else a fresh one is generated", () =>
  withDir(async (dir) => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const longest = "a".repeat(maxAuditIDLength - 2) + "~!";
    const cases: [string, (id: string) => boolean][] = [
      ["kept-id 1", (id) => id === "kept-id 1"],
      [longest, (id) => id === longest],
      ["a".repeat(maxAuditIDLength + 1), (id) => uuid.test(id)],
      ["x".repeat(100_000), (id) => uuid.test(id)],
      ["id\x01with-control", (id) => uuid.test(id)],
      ["id\x7f", (id) => uuid.test(id)],
      [asReceived("idé"), (id) => uuid.test(id)],
    ];
    for (const [i, [asked, ok]] of cases.entries()) {
      // serving passes the header's value as `auditID`; a bare Headers copy works the same
      for (const via of ["auditID", "header"] as const) {
        const path = `${dir}/audit-${i}-${via}.log`;
        const id = await auditOne(
          path,
          "json",
          via === "auditID" ? { auditID: asked } : { headers: new Headers([["audit-id", asked]]) },
        );
        assert.ok(ok(id), `${via} ${JSON.stringify(asked.slice(0, 40))} became ${JSON.stringify(id)}`);
        const events = (await Deno.readTextFile(path)).split("\n").filter(Boolean).map((l) => JSON.parse(l));
        assert.deepEqual(events.map((e) => e.auditID), [id, id], "the events carry the ID the response echoes");
      }
    }
  }));
