import assert from "node:assert/strict";
import { join } from "node:path";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render, type Rendered } from "../../lib/render/render.ts";
import {
  CHECK_LIMIT_BASE_BYTES,
  checkTimeLimit,
  crtListFiles,
  throwawayPem,
  validateConfig,
} from "../../lib/render/validate.ts";
import { ingress, service, tlsSecret } from "./fixtures.ts";
import { haproxyProcessesFor } from "../proxy/fixtures.ts";

const templates = await loadTemplates(null);
const tlsRendered: Rendered = render(
  buildModel({
    ingresses: [ingress({
      name: "x",
      tls: [{ hosts: ["a.example.com"], secretName: "a-tls" }],
      rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    })],
    lookup: lookupFromLists({ services: [service("web", [{ port: 80 }])], secrets: [tlsSecret("a-tls")] }),
  }).model,
  templates,
);

async function inTmp(fn: (parent: string) => Promise<void>): Promise<void> {
  const parent = await Deno.makeTempDir({ prefix: "ic-validate-test-" });
  try {
    await fn(parent);
    assert.deepEqual([...Deno.readDirSync(parent)].map((e) => e.name), [], "the temporary directory is removed");
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
}

async function fakeHaproxy(parent: string, script: string): Promise<string> {
  const path = join(parent, "..", `${parent.split("/").at(-1)}-fake-haproxy.sh`);
  await Deno.writeTextFile(path, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  return path;
}

Deno.test("a valid config with TLS passes haproxy -c and the temporary directory is removed", async () => {
  await inTmp(async (tmpDir) => {
    const res = await validateConfig(tlsRendered, { tmpDir, timeoutMs: 20_000 });
    assert.deepEqual(res.errors, []);
    assert.ok(res.ok);
  });
});

Deno.test("the built-in templates with the access log on draw no warning from haproxy -c; a log format without its logger does", async () => {
  assert.match(tlsRendered.config, /log-format /);
  await inTmp(async (tmpDir) => {
    const res = await validateConfig(tlsRendered, { tmpDir, timeoutMs: 20_000, reuse: false });
    assert.ok(res.ok);
    assert.deepEqual(res.warnings, []);
    const noLog = { ...tlsRendered, config: tlsRendered.config.replace(/^ {4}log stdout .*\n/m, "") };
    const warned = await validateConfig(noLog, { tmpDir, timeoutMs: 20_000, reuse: false });
    assert.ok(warned.ok);
    assert.equal(warned.warnings.length, 1, warned.warnings.join("\n"));
    assert.match(warned.warnings[0], /\[WARNING\].*log format ignored for frontend 'http'/);
  });
});

Deno.test("an invalid config fails with haproxy's ALERT lines, without the temporary path", async () => {
  await inTmp(async (tmpDir) => {
    const bad = { ...tlsRendered, config: tlsRendered.config.replace("    balance roundrobin", "    balance nosuch") };
    const res = await validateConfig(bad, { tmpDir, timeoutMs: 20_000 });
    assert.equal(res.ok, false);
    assert.ok(res.errors.length > 0);
    assert.ok(res.errors.every((l) => l.includes("[ALERT]")), res.errors.join("\n"));
    assert.ok(res.errors.some((l) => l.includes("balance only supports")), res.errors.join("\n"));
    assert.ok(res.errors.every((l) => !l.includes(tmpDir)));
  });
});

Deno.test("the check writes a throwaway PEM under every file the crt-list names; unsafe names are refused", async () => {
  await inTmp(async (tmpDir) => {
    const extra = { ...tlsRendered, crtList: tlsRendered.crtList + "default_other.pem b.example.com\n" };
    assert.deepEqual(crtListFiles(extra.crtList), ["default_a-tls.pem", "default_other.pem"]);
    assert.ok((await validateConfig(extra, { tmpDir, timeoutMs: 20_000 })).ok);
    const unsafe = { ...tlsRendered, crtList: "../../etc/passwd a.example.com\n" };
    const res = await validateConfig(unsafe, { tmpDir });
    assert.equal(res.ok, false);
    assert.match(res.errors[0], /unsafe file/);
  });
});

Deno.test("only throwaway certificates are written and the environment points into the temporary dir", async () => {
  await inTmp(async (tmpDir) => {
    const haproxy = await fakeHaproxy(
      tmpDir,
      'echo "dir=$IC_CERT_DIR sock=$IC_RUNTIME_SOCKET home=${HOME:-unset}"; cat "$IC_CERT_DIR/default_a-tls.pem"; exit 3',
    );
    try {
      const res = await validateConfig(tlsRendered, { haproxy, tmpDir });
      assert.equal(res.ok, false);
      assert.match(res.errors[0], /^dir=<tmp>\/certs sock=<tmp>\/runtime.sock home=unset$/);
      assert.equal(res.errors.slice(1).join("\n") + "\n", await throwawayPem());
    } finally {
      await Deno.remove(haproxy);
    }
  });
});

Deno.test("the check is killed when it exceeds its timeout", async () => {
  await inTmp(async (tmpDir) => {
    const haproxy = await fakeHaproxy(tmpDir, "exec sleep 30");
    try {
      const res = await validateConfig(tlsRendered, { haproxy, tmpDir, timeoutMs: 300 });
      assert.equal(res.ok, false);
      assert.match(res.errors[0], /did not finish within 300 ms/);
    } finally {
      await Deno.remove(haproxy);
    }
  });
});

Deno.test("a configuration haproxy -c cannot finish in time is refused as timed out, and haproxy is gone", async () => {
  // HAProxy runs crypt(3) on every userlist hash while it parses: bcrypt cost 31 takes days.
  const costly = {
    ...tlsRendered,
    config: `${tlsRendered.config}\nuserlist costly\n    user a password '$2b$31$${"a".repeat(53)}'\n`,
  };
  await inTmp(async (tmpDir) => {
    const res = await validateConfig(costly, { tmpDir, timeoutMs: 1_500, reuse: false });
    assert.deepEqual([res.ok, res.timedOut, res.errors], [false, true, ["haproxy -c did not finish within 1500 ms"]]);
    assert.deepEqual(await haproxyProcessesFor(tmpDir), [], "the check was killed");
    // the same configuration with a hash within the limits passes
    const cheap = { ...costly, config: costly.config.replace("$2b$31$", "$2b$05$") };
    const ok = await validateConfig(cheap, { tmpDir, timeoutMs: 20_000, reuse: false });
    assert.deepEqual([ok.ok, ok.timedOut], [true, false], ok.errors.join("\n"));
  });
});

Deno.test("a timed-out check kills what the binary started too: nothing holds the check open or outlives it", async () => {
  await inTmp(async (tmpDir) => {
    const base = join(tmpDir, "..", tmpDir.split("/").at(-1)!);
    const [pidFile, finished] = [`${base}-child.pid`, `${base}-child.finished`];
    // A wrapper whose child keeps stdout open: killing the wrapper alone would leave the check
    // waiting for the child, which would then finish and say so.
    const haproxy = await fakeHaproxy(tmpDir, `(sleep 20; echo yes > '${finished}') &\necho $! > '${pidFile}'\nwait`);
    try {
      const res = await validateConfig(tlsRendered, { haproxy, tmpDir, timeoutMs: 500, reuse: false });
      assert.deepEqual([res.ok, res.timedOut], [false, true]);
      await assert.rejects(Deno.stat(finished), Deno.errors.NotFound, "the child was killed, it did not finish");
      const child = Number(await Deno.readTextFile(pidFile));
      const state = await Deno.readTextFile(`/proc/${child}/stat`).then((s) => s.split(") ")[1][0]).catch(() => "gone");
      assert.ok(state === "gone" || state === "Z", `the wrapper's child ${child} is ${state}`);
    } finally {
      await Deno.remove(haproxy);
      for (const f of [pidFile, finished]) await Deno.remove(f).catch(() => {});
    }
  });
});

Deno.test("a missing haproxy binary is reported, not thrown", async () => {
  await inTmp(async (tmpDir) => {
    const res = await validateConfig(tlsRendered, { haproxy: "/nonexistent/haproxy", tmpDir });
    assert.equal(res.ok, false);
    assert.match(res.errors[0], /not found/);
  });
});

/** `fn` with a haproxy that counts its runs (`runs()`), and a temporary dir `parent` for the checks. */
async function withCountingHaproxy(
  fn: (wrapper: string, runs: () => Promise<number>, parent: string) => Promise<void>,
): Promise<void> {
  const bin = await Deno.makeTempDir({ prefix: "ic-validate-bin-" });
  await inTmp(async (parent) => {
    const counter = join(bin, "runs");
    const wrapper = join(bin, "haproxy-counting");
    await Deno.writeTextFile(wrapper, `#!/bin/sh\necho run >> '${counter}'\nexec haproxy "$@"\n`, { mode: 0o755 });
    await fn(wrapper, async () => (await Deno.readTextFile(counter).catch(() => "")).split("\n").length - 1, parent);
  }).finally(() => Deno.remove(bin, { recursive: true }));
}

Deno.test("a route-only or endpoint-only change of a configuration that passed is not checked again", async () => {
  await withCountingHaproxy(async (wrapper, runs, parent) => {
    const at = (rules: Parameters<typeof ingress>[0]["rules"]) =>
      render(
        buildModel({
          ingresses: [ingress({ name: "x", rules })],
          lookup: lookupFromLists({ services: [service("web", [{ port: 80 }]), service("api", [{ port: 80 }])] }),
        }).model,
        templates,
      );
    const opts = { haproxy: wrapper, tmpDir: parent };
    const web = (path: string) => ({ path, service: "web", port: 80 });
    const api = (path: string) => ({ path, service: "api", port: 80 });
    const first = at([{ host: "a.example.com", paths: [web("/"), api("/api")] }]);
    assert.ok((await validateConfig(first, opts)).ok);
    assert.equal(await runs(), 1);
    const routesMoved = at([{ host: "b.example.com", paths: [api("/"), web("/web")] }]);
    assert.equal(routesMoved.config, first.config);
    assert.ok((await validateConfig(routesMoved, opts)).ok);
    assert.equal(await runs(), 1, "same structure: not checked again");
    const apiGone = at([{ host: "a.example.com", paths: [web("/")] }]);
    assert.ok((await validateConfig(apiGone, opts)).ok);
    assert.equal(await runs(), 1, "a backend dropped that nothing names: not checked again");
    const other = (path: string) => ({ path, service: "other", port: 80 });
    const structural = render(
      buildModel({
        ingresses: [ingress({ name: "x", rules: [{ host: "a.example.com", paths: [web("/"), other("/o")] }] })],
        lookup: lookupFromLists({ services: [service("web", [{ port: 80 }]), service("other", [{ port: 80 }])] }),
      }).model,
      templates,
    );
    assert.ok((await validateConfig(structural, opts)).ok);
    assert.equal(await runs(), 2, "a backend added");
    assert.ok((await validateConfig(first, { ...opts, reuse: false })).ok);
    assert.equal(await runs(), 3);
  });
});

Deno.test('slots "first" checks each backend with its first slot line; the rest of the configuration is checked as ever', async () => {
  // balance source: 4 slots (a growable backend without endpoints has one)
  const sourceRendered = render(
    buildModel({
      ingresses: [ingress({
        name: "x",
        annotations: { "ingress-controller.io/load-balance": "source" },
        rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      })],
      lookup: lookupFromLists({ services: [service("web", [{ port: 80 }])] }),
    }).model,
    templates,
  );
  await inTmp(async (tmpDir) => {
    const haproxy = await fakeHaproxy(tmpDir, 'grep -c "^    server s" "$3"; exit 3');
    try {
      const all = await validateConfig(sourceRendered, { haproxy, tmpDir, reuse: false });
      const first = await validateConfig(sourceRendered, { haproxy, tmpDir, reuse: false, slots: "first" });
      const backends = sourceRendered.config.split("\n").filter((l) => /^backend /.test(l) && l.includes("web")).length;
      assert.equal(backends, 1);
      assert.deepEqual([all.errors, first.errors], [["4"], ["1"]]);
    } finally {
      await Deno.remove(haproxy);
    }
    assert.ok((await validateConfig(tlsRendered, { tmpDir, reuse: false, slots: "first" })).ok);
    const bad = { ...tlsRendered, config: tlsRendered.config.replace("    balance roundrobin", "    balance nosuch") };
    const res = await validateConfig(bad, { tmpDir, reuse: false, slots: "first" });
    assert.equal(res.ok, false);
    assert.ok(res.errors.some((l) => l.includes("balance only supports")), res.errors.join("\n"));
  });
});

Deno.test("a configuration that passed minus backends nothing names is not checked again; one that still names one is", async () => {
  await withCountingHaproxy(async (wrapper, runs, parent) => {
    const names = ["a", "b", "c", "d"];
    const services = names.map((n) => service(n, [{ port: 80 }]));
    const at = (routes: Record<string, string>) =>
      render(
        buildModel({
          ingresses: [ingress({
            name: "x",
            rules: Object.entries(routes).map(([host, svc]) => ({
              host,
              paths: [{ path: "/", service: svc, port: 80 }],
            })),
          })],
          lookup: lookupFromLists({ services }),
        }).model,
        templates,
      );
    const opts = { haproxy: wrapper, tmpDir: parent, slots: "first" as const };
    const all = at({ "a.test": "a", "b.test": "b", "c.test": "c", "d.test": "d" });
    const backendNames = (r: Rendered) =>
      r.config.split("\n").filter((l) => l.startsWith("backend ")).map((l) => l.slice(8));
    assert.ok((await validateConfig(all, opts)).ok);
    assert.equal(await runs(), 1);

    // b.test moved to c's backend: b's backend goes, nothing names it
    const bGone = at({ "a.test": "a", "b.test": "c", "c.test": "c", "d.test": "d" });
    assert.equal(backendNames(bGone).length, backendNames(all).length - 1);
    assert.ok((await validateConfig(bGone, opts)).ok);
    assert.equal(await runs(), 1, "b's backend dropped: not checked");
    // and from there, d's too (a configuration reused this way is a base as well)
    const dGone = at({ "a.test": "a", "b.test": "c", "c.test": "c", "d.test": "a" });
    assert.ok((await validateConfig(dGone, opts)).ok);
    assert.equal(await runs(), 1, "d's backend dropped: not checked");

    // a's backend left out while the maps still route to it: checked
    const aName = backendNames(all).find((n) => n.includes("_a_"))!;
    assert.ok(aName, backendNames(all).join(" "));
    const withoutA = (r: Rendered) => r.config.replace(new RegExp(`backend ${aName}\n(    .*\n)*\n`), "");
    const aStillRouted = { ...dGone, config: withoutA(dGone) };
    assert.notEqual(aStillRouted.config, dGone.config);
    assert.ok(Object.values(aStillRouted.maps).some((m) => m.includes(` ${aName}\n`)));
    await validateConfig(aStillRouted, opts);
    assert.equal(await runs(), 2, "a map names the dropped backend: checked");
    // a's backend left out while a line of the configuration names it: checked, and refused
    const named = {
      ...aStillRouted,
      config: aStillRouted.config.replace(/^(frontend http\n)/m, `$1    use_backend ${aName} if { path /a }\n`),
      maps: at({ "c.test": "c" }).maps,
    };
    assert.notEqual(named.config, aStillRouted.config);
    const refused = await validateConfig(named, opts);
    assert.equal(await runs(), 3, "the configuration names the dropped backend: checked");
    assert.equal(refused.ok, false);
    assert.ok(refused.errors.some((l) => l.includes(aName)), refused.errors.join("\n"));
  });
});

Deno.test("checkTimeLimit: the base limit up to the base size, then in proportion to the configuration's size", () => {
  assert.equal(checkTimeLimit(10_000, 0), 10_000);
  assert.equal(checkTimeLimit(10_000, CHECK_LIMIT_BASE_BYTES), 10_000);
  assert.equal(checkTimeLimit(10_000, 10 * CHECK_LIMIT_BASE_BYTES), 100_000);
  assert.equal(checkTimeLimit(1_500, 3 * CHECK_LIMIT_BASE_BYTES), 4_500);
});

Deno.test('slots "first" checks one backend of each shape; a backend unlike the others is checked and refused', async () => {
  const n = 40;
  const many = render(
    buildModel({
      ingresses: Array.from({ length: n }, (_, i) =>
        ingress({
          name: `i${i}`,
          rules: [{ host: `h${i}.example.com`, paths: [{ path: "/", service: `web${i}`, port: 80 }] }],
        })),
      lookup: lookupFromLists({ services: Array.from({ length: n }, (_, i) => service(`web${i}`, [{ port: 80 }])) }),
    }).model,
    templates,
  );
  await inTmp(async (tmpDir) => {
    const haproxy = await fakeHaproxy(tmpDir, 'grep -c "^backend .*_web" "$3"; exit 3');
    try {
      const all = await validateConfig(many, { haproxy, tmpDir, reuse: false });
      const first = await validateConfig(many, { haproxy, tmpDir, reuse: false, slots: "first" });
      assert.deepEqual([all.errors, first.errors], [[`${n}`], ["1"]]);
    } finally {
      await Deno.remove(haproxy);
    }
    // The real haproxy: the checked form passes; one backend (the 30th) with a line of its own is refused.
    assert.ok((await validateConfig(many, { tmpDir, reuse: false, slots: "first" })).ok);
    const sections = many.config.split("\nbackend ");
    const i = sections.findIndex((s) => s.startsWith("default_web29_80") || /^\S+_web29_80\n/.test(s));
    assert.ok(i > 0, "the 30th backend is in the configuration");
    sections[i] = sections[i].replace("    balance roundrobin", "    balance nosuch");
    const bad = { ...many, config: sections.join("\nbackend ") };
    const res = await validateConfig(bad, { tmpDir, reuse: false, slots: "first" });
    assert.equal(res.ok, false);
    assert.ok(res.errors.some((l) => l.includes("balance only supports")), res.errors.join("\n"));
  });
});
