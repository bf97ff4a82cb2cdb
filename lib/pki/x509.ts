/**
 * @module pki
 * Loads @peculiar/x509 with the reflect polyfill it needs and the runtime's WebCrypto.
 * Import x509 from here, never from "@peculiar/x509" directly.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(crypto);
export { x509 };
