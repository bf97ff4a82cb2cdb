/**
 * @module lib/dev/localenv/dns
 * A DNS server for tests in the private network namespace (lib/dev/localenv/netns.ts, with `resolver`,
 * whose resolv.conf names {@link dnsAddress}): it answers A and AAAA questions over UDP from a table
 * the test sets and may change (an answer can also be a list taken in turn, one per question, to
 * play a name whose address changes between two lookups); an unknown name is NXDOMAIN. Packets are
 * read and written by `dns-packet`.
 */
import dgram from "node:dgram";
import { isIPv6 } from "node:net";
// @deno-types="@types/dns-packet"
import packet from "dns-packet";
import { dnsAddress } from "./netns.ts";

/** A name's answers: its addresses, or (`rotate`) one address per question, in turn. */
export type Records = Record<string, string[] | { rotate: string[] }>;

export interface DnsServer extends AsyncDisposable {
  /** Replaces the answers for `name` (lower case, no trailing dot). */
  set(name: string, answer: string[] | { rotate: string[] }): void;
  /** The questions asked so far, as `name TYPE`. */
  readonly asked: string[];
  close(): Promise<void>;
}

const NXDOMAIN = 3;

/** Starts the server on `address`:`port` (the namespace's resolver by default). */
export function startDnsServer(records: Records = {}, address = dnsAddress, port = 53): Promise<DnsServer> {
  const table = new Map(Object.entries(records));
  const turns = new Map<string, number>();
  const asked: string[] = [];
  const socket = dgram.createSocket(isIPv6(address) ? "udp6" : "udp4");
  const answerFor = (name: string, type: string): string[] | null => {
    const entry = table.get(name.toLowerCase());
    if (entry === undefined) return null;
    let addresses = entry as string[];
    if (!Array.isArray(entry)) {
      const turn = turns.get(name) ?? 0;
      turns.set(name, turn + 1);
      addresses = [entry.rotate[turn % entry.rotate.length]];
    }
    return addresses.filter((a) => isIPv6(a) === (type === "AAAA"));
  };
  socket.on("message", (msg, from) => {
    let query: packet.Packet;
    try {
      query = packet.decode(msg);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    asked.push(`${question.name} ${question.type}`);
    const found = question.type === "A" || question.type === "AAAA" ? answerFor(question.name, question.type) : [];
    const reply = packet.encode({
      id: query.id,
      type: "response",
      flags: packet.AUTHORITATIVE_ANSWER | (found === null ? NXDOMAIN : 0),
      questions: query.questions,
      answers: (found ?? []).map((data) => ({
        type: question.type as "A" | "AAAA",
        name: question.name,
        ttl: 1,
        data,
      })),
    });
    socket.send(reply, from.port, from.address);
  });
  const close = () => new Promise<void>((resolve) => socket.close(() => resolve()));
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, address, () => {
      socket.off("error", reject);
      resolve({
        set: (name, answer) => {
          table.set(name, answer);
          turns.delete(name);
        },
        asked,
        close,
        [Symbol.asyncDispose]: close,
      });
    });
  });
}
