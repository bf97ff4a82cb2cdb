/**
 * @module pki/pem
 * PEM blocks (RFC 7468, with RFC 1421's `Key: value` headers) read and written exactly as
 * @peculiar/x509's PemConverter does (2.2.0: the same patterns, header folding and base64 check),
 * for the code that only splits PEM text: loading that library and the polyfill it needs cost every
 * controller and proxy process about 7 MB of memory (2.4 MB of the runtime's pages, 5 MB of heap
 * and compiled code) for these two functions. Certificates are still made with it (lib/pki/certs.ts).
 * tests/pki/pem_test.ts compares both on the same texts.
 */
import { Buffer } from "node:buffer";

/** One block: its label (`CERTIFICATE`, `PRIVATE KEY`, …), its headers and its decoded body. */
export interface PemBlock {
  readonly type: string;
  readonly headers: readonly { key: string; value: string }[];
  readonly der: Uint8Array;
}

// PemConverter's pattern, piece by piece (line ends are `\n`; `\r` is removed first).
const BEGIN = "-{5}BEGIN ([^\\n]+(?=-{5}))-{5}";
const END = "-{5}END \\1-{5}";
const HEADER_KEY = "[^:\\n]+";
const HEADER_VALUE = "(?:[^\\n]+\\n(?: +[^\\n]+\\n)*)";
const BASE64_LINES = "(?:[a-zA-Z0-9=+/]+\\n)+";
const PEM = `${BEGIN}\\n(?:((?:${HEADER_KEY}: ${HEADER_VALUE})+))?\\n?(${BASE64_LINES})${END}`;
const BASE64_TEXT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The blocks of `text`, in order. A block whose body does not match the pattern is skipped (as
 * PemConverter skips it: callers compare with the number of BEGIN lines); a body that matches but is
 * not base64, or a header continuation without a header before it, throws.
 */
export function pemDecode(text: string): PemBlock[] {
  const pem = text.replace(/\r/g, "");
  const pattern = new RegExp(PEM, "g");
  const blocks: PemBlock[] = [];
  for (let m = pattern.exec(pem); m !== null; m = pattern.exec(pem)) {
    const headers: { key: string; value: string }[] = [];
    if (m[2]) {
      let last: { key: string; value: string } | null = null;
      for (const line of m[2].split(/\n/g)) {
        const [key, value] = line.split(/:(.*)/);
        if (value === undefined) {
          if (!last) throw new Error("Cannot parse PEM string. Incorrect header value");
          last.value += key.trim();
        } else {
          if (last) headers.push(last);
          last = { key, value: value.trim() };
        }
      }
      if (last) headers.push(last);
    }
    blocks.push({ type: m[1], headers, der: base64Bytes(m[3].replace(/\n+/g, "")) });
  }
  return blocks;
}

/** `der` as one PEM block labelled `type` (upper-cased), its base64 in lines of 64. */
export function pemEncode(der: Uint8Array, type: string): string {
  const label = type.toUpperCase();
  const base64 = Buffer.from(der.buffer, der.byteOffset, der.byteLength).toString("base64");
  const lines = [`-----BEGIN ${label}-----`];
  for (let i = 0; i < base64.length; i += 64) lines.push(base64.slice(i, i + 64));
  lines.push(`-----END ${label}-----`);
  return lines.join("\n");
}

function base64Bytes(text: string): Uint8Array {
  const formatted = text.replace(/[\n\r\t ]/g, "");
  if (!formatted) return new Uint8Array(0);
  if (!BASE64_TEXT.test(formatted)) throw new TypeError("Argument 'base64Text' is not Base64 encoded");
  return new Uint8Array(Buffer.from(formatted, "base64"));
}
