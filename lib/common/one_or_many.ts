/**
 * @module one_or_many
 * Map values of one member or several, for indexes where most keys have one (a Service's
 * EndpointSlice, a reference's Ingress): a lone member is held as itself, and only a key with
 * several gets a Set (~190 bytes each, 10,000 of them at 10,000 Ingresses otherwise).
 */
export type OneOrMany = string | Set<string>;

/** Adds `member` under `key` (nothing if it is there already). */
export function addMember(m: Map<string, OneOrMany>, key: string, member: string): void {
  const entry = m.get(key);
  if (entry === undefined) m.set(key, member);
  else if (typeof entry === "object") entry.add(member);
  else if (entry !== member) m.set(key, new Set([entry, member]));
}

/** Removes `member` from `key`; a key left with one member holds it as itself, one left with none is gone. */
export function removeMember(m: Map<string, OneOrMany>, key: string, member: string): void {
  const entry = m.get(key);
  if (entry === member) m.delete(key);
  else if (typeof entry === "object") {
    entry.delete(member);
    if (entry.size === 1) m.set(key, entry.values().next().value!);
  }
}

/** The members of an entry (none for undefined). */
export function membersOf(entry: OneOrMany | undefined): Iterable<string> {
  return entry === undefined ? [] : typeof entry === "string" ? [entry] : entry;
}
