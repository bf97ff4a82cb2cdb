/**
 * @module controller/short_hash
 * The short stable hash the controller puts in names and labels that would otherwise be too long
 * or not valid (proxy object names, the Lease name, the controller label) and in the content hash
 * of its objects.
 */
import { createHash } from "node:crypto";

/** The first `len` hex digits of the sha256 of `s`. */
export function shortHash(s: string, len = 10): string {
  return createHash("sha256").update(s).digest("hex").slice(0, len);
}
