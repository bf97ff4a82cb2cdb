import assert from "node:assert/strict";
import { buildSniTable, selectSni } from "../../lib/serving/sni.ts";

Deno.test("sni: exact beats wildcard, wildcard matches one label", () => {
  const t = buildSniTable([
    { explicit: ["*.example.com"], extracted: [] },
    { explicit: ["www.example.com"], extracted: [] },
  ]);
  assert.equal(selectSni(t, "www.example.com"), 1);
  assert.equal(selectSni(t, "api.example.com"), 0);
  assert.equal(selectSni(t, "a.b.example.com"), null);
  assert.equal(selectSni(t, "example.com"), null);
});

Deno.test("sni: explicit names beat extracted names regardless of order", () => {
  const t = buildSniTable([
    { explicit: [], extracted: ["shared.example.com", "first.example.com"] },
    { explicit: ["shared.example.com"], extracted: ["ignored.example.com"] },
  ]);
  assert.equal(selectSni(t, "shared.example.com"), 1);
  assert.equal(selectSni(t, "first.example.com"), 0);
  // Extracted names of an entry with explicit names are not used.
  assert.equal(selectSni(t, "ignored.example.com"), null);
});

Deno.test("sni: earlier flags beat later ones", () => {
  const t = buildSniTable([
    { explicit: ["a.example.com"], extracted: [] },
    { explicit: ["a.example.com"], extracted: [] },
    { explicit: [], extracted: ["b.example.com"] },
    { explicit: [], extracted: ["b.example.com"] },
  ]);
  assert.equal(selectSni(t, "a.example.com"), 0);
  assert.equal(selectSni(t, "b.example.com"), 2);
});

Deno.test("sni: case-insensitive, trailing dot ignored, no name gets the default", () => {
  const t = buildSniTable([{ explicit: ["Foo.Example.COM."], extracted: [] }]);
  assert.equal(selectSni(t, "foo.example.com"), 0);
  assert.equal(selectSni(t, "FOO.EXAMPLE.COM."), 0);
  assert.equal(selectSni(t, ""), null);
  assert.equal(selectSni(t, undefined), null);
  assert.equal(selectSni(t, "other.example.com"), null);
});
