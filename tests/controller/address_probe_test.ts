import { strict as assert } from "node:assert";
import { AddressProbes, type Dial, GIVE_UP_MS, tcpDial } from "../../lib/controller/address_probe.ts";

Deno.test("tcpDial: a listening loopback port answers, a closed one does not", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepted = (async () => {
    const conn = await listener.accept();
    conn.close();
  })();
  try {
    assert.equal(await tcpDial("127.0.0.1", port, 1_000), true);
    await accepted;
  } finally {
    listener.close();
  }
  assert.equal(await tcpDial("127.0.0.1", port, 1_000), false, "nothing listens there any more");
});

Deno.test("AddressProbes: waiting until the address answers, then answers; the caller is told once", async () => {
  let up = false;
  const dials: string[] = [];
  const dial: Dial = (host, port) => {
    dials.push(`${host}:${port}`);
    return Promise.resolve(up);
  };
  const settled: string[] = [];
  const probes = new AddressProbes(dial, (k) => settled.push(k));
  assert.equal(probes.verdict("g", "10.0.0.9", 443), "waiting");
  await Promise.resolve();
  assert.deepEqual(settled, [], "a refusal does not call back: the caller's recheck asks again");
  up = true;
  assert.equal(probes.verdict("g", "10.0.0.9", 443), "waiting");
  await Promise.resolve();
  assert.deepEqual(settled, ["g"]);
  assert.equal(probes.verdict("g", "10.0.0.9", 443), "answers");
  assert.deepEqual(dials, ["10.0.0.9:443", "10.0.0.9:443"]);
  assert.equal(probes.verdict("g", "10.0.0.10", 443), "waiting", "another address is probed afresh");
});

Deno.test("AddressProbes: one dial at a time, and given up on after GIVE_UP_MS", async () => {
  let now = 0;
  let release: (ok: boolean) => void = () => {};
  let dials = 0;
  const dial: Dial = () => {
    dials++;
    return new Promise((r) => release = r);
  };
  const probes = new AddressProbes(dial, () => {}, () => now);
  assert.equal(probes.verdict("g", "fd00::1", 80), "waiting");
  assert.equal(probes.verdict("g", "fd00::1", 80), "waiting");
  assert.equal(dials, 1, "no second dial while one runs");
  release(false);
  await Promise.resolve();
  now = GIVE_UP_MS;
  assert.equal(probes.verdict("g", "fd00::1", 80), "unknown", "a silent address no longer holds Programmed back");
  probes.forget("g");
  assert.equal(probes.verdict("g", "fd00::1", 80), "waiting", "forgotten: probed again");
});

Deno.test("AddressProbes: nothing probed outside a pod or without a cluster IP", () => {
  const probes = new AddressProbes(null, () => {});
  assert.equal(probes.verdict("g", "10.0.0.9", 443), "unknown");
  const inPod = new AddressProbes(() => Promise.resolve(true), () => {});
  assert.equal(inPod.verdict("g", "None", 443), "unknown", "a headless Service");
  assert.equal(inPod.verdict("g", undefined, 443), "unknown");
  assert.equal(inPod.verdict("g", "10.0.0.9", undefined), "unknown");
});
