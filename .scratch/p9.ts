import { leaveOut } from "../lib/proxy/left_out.ts";
import { CA_FILE } from "../lib/proxy/files.ts";
console.log(CA_FILE, CA_FILE.test("proxy-left-out_b-ca_ca.pem"));
const out = leaveOut({ config: "", crtList: "proxy-left-out_a-tls.pem a.test\nproxy-left-out_b-tls.pem b.test\n", pems: new Map([["proxy-left-out_a-tls.pem", "x"]]) }, new Set(["proxy-left-out_b-ca_ca.pem", "proxy-left-out_b-tls.pem"]), { certificate: "C", ca: "CA" });
console.log(out);
