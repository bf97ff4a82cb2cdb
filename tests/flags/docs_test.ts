import assert from "node:assert/strict";
import { BEGIN, END, optionsReference, withReference } from "../../lib/flags/docs.ts";
import { type OptionSpec, runTable } from "../../lib/flags/table.ts";

Deno.test("README's option reference is current (run `deno task docs` when this fails)", () => {
  const readme = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
  assert.equal(withReference(readme), readme);
});

Deno.test("the reference has one row per option with every release's default", () => {
  const ref = optionsReference();
  const table: Record<string, OptionSpec> = runTable;
  for (const name of Object.keys(table)) {
    assert.match(ref, new RegExp("^\\| `--" + name.replace(".", "\\.") + "`", "m"));
  }
  assert.match(ref, /^\| `--audit-log-batch-max-size` \| int \| `1` \| `400` \| — \|/m);
  assert.match(ref, /^\| `--ops-address` \| string \| — \| `:56790` \| — \|/m);
  assert.match(ref, /^\| `--requestheader-group-headers` \| strings \/ stringSlice \| `\[x-remote-group\]`/m);
});

Deno.test("withReference replaces only the marked section", () => {
  const text = `# T\n\nbefore\n${BEGIN}\nold\n${END}\nafter\n`;
  const out = withReference(text);
  assert.ok(out.startsWith(`# T\n\nbefore\n${BEGIN}\n### Options`));
  assert.ok(out.endsWith(`${END}\nafter\n`));
  assert.ok(!out.includes("\nold\n"));
  assert.throws(() => withReference("# no markers\n"), /options:begin/);
});
