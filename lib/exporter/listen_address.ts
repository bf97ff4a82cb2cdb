/**
 * @module exporter/listen_address
 * `--listen-address` as Go's net.Listen takes it: `host:port`, `:port` (every interface),
 * `[v6]:port`. Kept apart from lib/serving so the sidecar does not load the serving stack.
 */

import { UsageError } from "../common/errors.ts";

export interface ListenAddress {
  /** "" = every interface. */
  readonly host: string;
  readonly port: number;
}

export function parseListenAddress(value: string, option = "--listen-address"): ListenAddress {
  const m = /^(?:\[(?<v6>[0-9a-fA-F:.]+)\]|(?<host>[^\s:[\]]*)):(?<port>\d{1,5})$/.exec(value);
  const port = Number(m?.groups?.port);
  if (!m || port > 65535) {
    throw new UsageError(
      `invalid value ${JSON.stringify(value)} for ${option}: give host:port (e.g. :56790 or 127.0.0.1:56790)`,
    );
  }
  return { host: m.groups!.v6 ?? m.groups!.host, port };
}
