import assert from "node:assert/strict";
import { x509 } from "../../lib/pki/x509.ts";
import { pemDecode, pemEncode } from "../../lib/pki/pem.ts";
import { encryptedKey, GARBAGE_CERT, goodPair, unservedKey } from "./materials.ts";

/** What PemConverter makes of `text`: its blocks, or the message it throws. */
function library(text: string): { type: string; headers: unknown; der: number[] }[] | string {
  try {
    return x509.PemConverter.decodeWithHeaders(text).map((b) => ({
      type: b.type,
      headers: b.headers,
      der: [...new Uint8Array(b.rawData)],
    }));
  } catch (err) {
    return (err as Error).message;
  }
}

function ours(text: string): { type: string; headers: unknown; der: number[] }[] | string {
  try {
    return pemDecode(text).map((b) => ({ type: b.type, headers: b.headers, der: [...b.der] }));
  } catch (err) {
    return (err as Error).message;
  }
}

Deno.test("pem: blocks are read as @peculiar/x509's PemConverter reads them", async () => {
  const pair = await goodPair("a.test", "RSA-2048");
  const pkcs1 = encryptedKey("pkcs1");
  const texts = [
    "",
    "no PEM here",
    pair.crt,
    pair.key,
    `${pair.crt}\n${pair.key}`,
    pair.crt.replace(/\n/g, "\r\n"),
    `subject=CN = a.test\n${pair.crt}Bag Attributes\n${pair.key}`,
    encryptedKey("pkcs8"),
    pkcs1,
    // a header folded over two lines, and a continuation with no header before it
    pkcs1.replace(/DEK-Info: ([^\n]+)\n/, "DEK-Info: $1\n extra\n"),
    pkcs1.replace(/Proc-Type: [^\n]+\n/, " orphan\n"),
    unservedKey("dsa"),
    GARBAGE_CERT,
    // a body that is not base64 (skipped), one that matches the pattern but is not base64 (throws)
    "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n",
    "-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----\n",
    "-----BEGIN X-----\nAAAA\n-----END Y-----\n-----BEGIN Z-----\nAAAA\n-----END Z-----\n",
    "-----BEGIN lower case-----\nAAAA\n-----END lower case-----",
  ];
  for (const text of texts) assert.deepEqual(ours(text), library(text), JSON.stringify(text.slice(0, 80)));
});

Deno.test("pem: a block is written as PemConverter writes it, and reads back the same", async () => {
  const pair = await goodPair("b.test", "RSA-2048");
  for (const block of pemDecode(`${pair.crt}\n${pair.key}`)) {
    const written = pemEncode(block.der, block.type);
    assert.equal(written, x509.PemConverter.encode(block.der.slice().buffer, block.type));
    assert.deepEqual(pemDecode(written)[0].der, block.der);
  }
  // a view into a larger buffer is written from its own bytes only
  const bytes = new Uint8Array([9, 1, 2, 3, 9]);
  assert.equal(pemEncode(bytes.subarray(1, 4), "data"), "-----BEGIN DATA-----\nAQID\n-----END DATA-----");
});
