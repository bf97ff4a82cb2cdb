/**
 * The annotation table's timeout defaults say what the rendered `defaults` section does: a key at its
 * default renders nothing (docs/annotations-rendering.md), so a table default other than the
 * section's value would be a lie in the README and would make that value impossible to set.
 */
import assert from "node:assert/strict";
import { specOf } from "../../lib/annotations/table.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";

Deno.test("timeout keys: the table's defaults (and timeout-server's docs) match the defaults section", async () => {
  const { model } = buildModel({ ingresses: [], lookup: lookupFromLists({}) });
  const config = render(model, await loadTemplates(null)).config;
  const section = config.slice(config.indexOf("\ndefaults\n"), config.indexOf("\n\n", config.indexOf("\ndefaults\n")));
  const rendered = Object.fromEntries([...section.matchAll(/^ {4}timeout (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
  for (const name of ["connect", "client", "http-request", "queue", "tunnel"]) {
    assert.equal(specOf(`timeout-${name}`)!.default, rendered[name], `timeout-${name}`);
  }
  assert.equal(specOf("timeout-server")!.default, null);
  assert.match(specOf("timeout-server")!.docs, new RegExp(`proxy's default, ${rendered.server}\\)`));
});
