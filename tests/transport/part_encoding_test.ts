import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { deflateRawSync } from "node:zlib";
import {
  deflatedForm,
  inflatedText,
  MAX_INFLATED_BYTES,
  MAX_PART_BYTES,
  PART_DATA_KEY,
  PART_DEFLATE_KEY,
  storedPartText,
} from "../../lib/transport/part_encoding.ts";
import { configDigest } from "../../lib/transport/parts.ts";

const backends = Array.from(
  { length: 500 },
  (_, i) => `backend be_${i}\n    server s1 10.0.${i >> 8}.${i & 255}:80\n\n`,
)
  .join("");

Deno.test("a part's text comes back byte for byte from its deflated form, non-ASCII too", () => {
  for (const text of [backends, `h.example be_1\n${"é😀".repeat(5000)}\n`]) {
    const form = deflatedForm(text);
    assert.ok(form !== null && form.length < text.length / 3, `${form?.length} stored for ${text.length}`);
    assert.equal(inflatedText(form), text);
    assert.equal(storedPartText({}, { [PART_DEFLATE_KEY]: form }), text);
  }
});

Deno.test("text that deflate does not shrink is stored as text", () => {
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(3000))).toString("base64");
  assert.equal(deflatedForm(random), null);
  assert.equal(deflatedForm("a"), null);
  assert.equal(storedPartText({ [PART_DATA_KEY]: random }, undefined), random);
});

Deno.test("the largest part fits the inflate bound; a form inflating past it is refused, not read", () => {
  assert.ok(MAX_INFLATED_BYTES >= 3 * MAX_PART_BYTES, "every part of MAX_PART_BYTES code units fits");
  const largest = "\u20ac".repeat(MAX_PART_BYTES); // 3 bytes of UTF-8 each
  assert.equal(inflatedText(deflatedForm(largest)!), largest);
  // A tenant who can write its dedicated proxy's parts: 1 KB that inflates to 100 MB.
  const bomb = deflateRawSync(Buffer.alloc(100_000_000, 0x61)).toString("base64");
  assert.ok(bomb.length < 200_000);
  assert.throws(() => inflatedText(bomb));
  assert.equal(storedPartText({}, { [PART_DEFLATE_KEY]: bomb }), null);
});

Deno.test("a stored part is its one key: anything else, bad deflate or bad UTF-8 reads as no part", () => {
  const form = deflatedForm(backends)!;
  assert.equal(storedPartText({ [PART_DATA_KEY]: "x" }, { [PART_DEFLATE_KEY]: form }), null, "two keys");
  assert.equal(storedPartText({ other: "x" }, undefined), null);
  assert.equal(storedPartText({}, { other: form }), null);
  assert.equal(storedPartText({}, { [PART_DEFLATE_KEY]: "bm90IGRlZmxhdGU=" }), null, "not deflate");
  const latin1 = deflateRawSync(Buffer.from([0x68, 0xe9, 0x0a])).toString("base64");
  assert.equal(storedPartText({}, { [PART_DEFLATE_KEY]: latin1 }), null, "not UTF-8");
  assert.equal(storedPartText(undefined, undefined), null);
  assert.equal(storedPartText({ [PART_DATA_KEY]: 5 }, undefined), null);
});

Deno.test("a head's digest covers its binaryData, and is the data's alone without any", () => {
  const data = { "parts.json": "{}", "crt-list": "" };
  assert.equal(configDigest(data, {}), configDigest(data));
  assert.equal(configDigest(data, undefined), configDigest(data));
  const withBinary = configDigest(data, { "carried.x.deflate": "AAAA" });
  assert.notEqual(withBinary, configDigest(data));
  assert.notEqual(configDigest(data, { "carried.x.deflate": "AAAB" }), withBinary);
  assert.notEqual(configDigest(data, { "carried.y.deflate": "AAAA" }), withBinary);
  // the same pairs moved from binaryData to data give another digest
  assert.notEqual(configDigest({ ...data, "carried.x.deflate": "AAAA" }), withBinary);
});
