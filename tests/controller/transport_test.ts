import assert from "node:assert/strict";
import { deflatedForm, inflatedText } from "../../lib/transport/part_encoding.ts";
import {
  carriedDigests,
  carriesDesired,
  configObjects,
  configReadRules,
  existingParts,
  partOfLabel,
} from "../../lib/controller/transport.ts";
import { CONFIG_SHA_ANNOTATION, configDigest, PART_SHA_ANNOTATION, PARTS_KEY } from "../../lib/transport/parts.ts";

const small = { inline: 256, fileInline: 64, targetPart: 128 };
const cfg = (n: number) => Array.from({ length: n }, (_, i) => `backend be_${i}\n    balance roundrobin\n`).join("");

Deno.test("a small configuration is one ConfigMap; a large one is its parts first, then the head", () => {
  const one = configObjects("p", { "haproxy.cfg": "global\n" });
  assert.deepEqual(one.map((o) => o.name), ["p"]);
  assert.deepEqual(one[0].body, { data: { "haproxy.cfg": "global\n" } });
  assert.equal(one[0].annotations?.[CONFIG_SHA_ANNOTATION], configDigest({ "haproxy.cfg": "global\n" }));

  const many = configObjects("p", { "haproxy.cfg": cfg(200) }, new Map(), small);
  assert.ok(many.length > 3);
  assert.equal(many.at(-1)!.name, "p", "the head is written last");
  assert.ok(PARTS_KEY in (many.at(-1)!.body.data as Record<string, string>));
  for (const part of many.slice(0, -1)) {
    assert.match(part.name, /^p-part-\d+$/);
    assert.equal(part.labels?.[partOfLabel], "p");
    assert.match(part.annotations?.[PART_SHA_ANNOTATION] ?? "", /^[0-9a-f]{64}$/);
  }
});

Deno.test("existing parts are read back from the owned cache; unchanged content keeps its part", () => {
  const first = configObjects("p", { "haproxy.cfg": cfg(200) }, new Map(), small);
  const cache = first.map((o) => ({ metadata: { name: o.name, annotations: o.annotations } }));
  cache.push({ metadata: { name: "p-part-x", annotations: { [PART_SHA_ANNOTATION]: "0".repeat(64) } } });
  cache.push({ metadata: { name: "other-part-1", annotations: { [PART_SHA_ANNOTATION]: "0".repeat(64) } } });
  const previous = existingParts("p", cache);
  assert.equal(previous.size, first.length - 1, "only p's own part slots");
  const again = configObjects("p", { "haproxy.cfg": cfg(200) }, previous, small);
  assert.deepEqual(again, first);
});

Deno.test("the proxy's Role names the head and the part slots in use, rounded up to a power of two (at least 8)", () => {
  assert.deepEqual(configReadRules("p"), [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["p"], verbs: ["get", "list", "watch"] },
  ]);
  const objects = configObjects("p", { "haproxy.cfg": cfg(400) }, new Map(), small);
  const used = objects.length - 1;
  const rules = configReadRules("p", objects);
  const names = rules[1].resourceNames as string[];
  assert.equal(names.length, Math.max(8, 2 ** Math.ceil(Math.log2(used))));
  for (const o of objects.slice(0, -1)) assert.ok(names.includes(o.name), o.name);
  assert.deepEqual(rules[1].verbs, ["get"]);
});

Deno.test("a carrier in the cluster carries what the controller wrote only with exactly its data", () => {
  const objects = configObjects("p", { "haproxy.cfg": cfg(200), "crt-list": "" }, new Map(), small);
  assert.ok(objects.some((o) => o.body.binaryData), "parts of backends are stored deflated");
  for (const o of objects) {
    const data = o.body.data as Record<string, string> | undefined;
    const binary = o.body.binaryData as Record<string, string> | undefined;
    assert.ok(carriesDesired(o.annotations, carriedDigests(data, binary)), o.name);
    assert.ok(!carriesDesired(o.annotations, carriedDigests({ ...data, extra: "" }, binary)), `${o.name} + a key`);
    assert.ok(
      !carriesDesired(o.annotations, carriedDigests(data, { ...binary, extra: "" })),
      `${o.name} + a binary key`,
    );
    const [field, values] = data ? ["data", data] : ["binaryData", binary!];
    const [key] = Object.keys(values);
    // An edit: a character more in the text, deflated again or not.
    const edited = field === "data" ? `${values[key]}#` : deflatedForm(`${inflatedText(values[key])}#`)!;
    const body = { data, binaryData: binary, [field]: { ...values, [key]: edited } };
    assert.ok(!carriesDesired(o.annotations, carriedDigests(body.data, body.binaryData)), `${o.name} edited`);
  }
});
