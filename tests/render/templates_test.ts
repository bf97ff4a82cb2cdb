import assert from "node:assert/strict";
import { join } from "node:path";
import { SetupError } from "../../lib/common/errors.ts";
import { loadTemplates, render, sampleModel } from "../../lib/render/render.ts";
import { TEMPLATE_NAMES } from "../../lib/render/templates.ts";

async function withDir(files: Record<string, string>, fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ic-templates-test-" });
  try {
    for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("built-in templates: every one exists and renders", async () => {
  const t = await loadTemplates(null);
  assert.deepEqual(Object.keys(t.sources).sort(), [...TEMPLATE_NAMES].sort());
  const { config } = render(sampleModel(), t);
  for (const section of ["global", "defaults", "frontend stats", "frontend http", "frontend https", "backend "]) {
    assert.match(config, new RegExp(`^${section}`, "m"));
  }
});

Deno.test("a custom file named like a built-in replaces it; other custom files can be included", async () => {
  await withDir({
    "defaults.eta": 'defaults\n    mode http\n    timeout client 7s\n<%~ include("@extra", it) %>\n',
    "extra.eta": "    timeout server 9s\n    timeout connect 1s\n",
    "ignored.txt.orig": "not matched by the glob",
  }, async (dir) => {
    const t = await loadTemplates(join(dir, "*.eta"));
    assert.equal(t.sources["defaults"], join(dir, "defaults.eta"));
    assert.equal(t.sources["extra"], join(dir, "extra.eta"));
    const { config } = render(sampleModel(), t);
    assert.match(config, /^defaults\n {4}mode http\n {4}timeout client 7s\n {4}timeout server 9s\n/m);
    assert.doesNotMatch(config, /timeout client 60s/);
    assert.match(config, /^global$/m, "the other built-ins stay");
  });
});

Deno.test("a custom template that does not compile is a SetupError naming the file", async () => {
  await withDir({ "global.eta": "global\n<% if (it.hasTls { %>\n" }, async (dir) => {
    await assert.rejects(
      () => loadTemplates(join(dir, "*.eta")),
      (err: unknown) => {
        assert.ok(err instanceof SetupError);
        assert.ok(err.message.includes(join(dir, "global.eta")), err.message);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      },
    );
  });
});

Deno.test("a custom template that fails at run time is a SetupError naming the file", async () => {
  await withDir({
    "backends.eta": '<%~ include("@broken", it) %>',
    "broken.eta": "<%= it.nosuch.field %>",
  }, async (dir) => {
    await assert.rejects(
      () => loadTemplates(join(dir, "*.eta")),
      (err: unknown) => {
        assert.ok(err instanceof SetupError);
        assert.ok(err.message.includes(join(dir, "broken.eta")), err.message);
        assert.match(err.message, /nosuch|undefined/);
        return true;
      },
    );
  });
});

Deno.test("two custom files defining the same template are refused", async () => {
  await withDir({ "stats.eta": "frontend stats\n", "stats": "frontend stats\n" }, async (dir) => {
    await assert.rejects(() => loadTemplates(join(dir, "*")), SetupError);
  });
});

Deno.test("a glob that matches nothing keeps the built-in templates", async () => {
  const t = await loadTemplates("/nonexistent-dir-for-test/*.eta");
  assert.ok(t.sources["global"].endsWith("templates/global.eta"));
});
