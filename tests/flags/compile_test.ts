import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;

async function compile(env: Record<string, string>) {
  const dir = Deno.makeTempDirSync();
  try {
    const out = await new Deno.Command("bash", {
      args: ["compile.sh"],
      cwd: root,
      env: { ...env, OUT: `${dir}/ingress-controller` },
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    return { code: out.code, text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr) };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("compile.sh: a DENORT_BIN that is not an executable is named in one line", async () => {
  const r = await compile({ DENORT_BIN: "/nonexistent/denort" });
  assert.notEqual(r.code, 0);
  assert.equal(
    r.text,
    "compile.sh: DENORT_BIN=/nonexistent/denort is not an executable file; point it at denort 2.9.6 for this platform\n",
  );
});

Deno.test("compile.sh: builds the real binary, or says in one line that denort could not be downloaded", async () => {
  const r = await compile({});
  if (r.code === 0) {
    assert.match(r.text, /compile\.sh: built /);
  } else {
    assert.equal(
      r.text,
      "compile.sh: deno compile could not download its runtime binary (denort) because this machine cannot reach dl.deno.land; set DENORT_BIN to a local denort 2.9.6 binary and rerun\n",
    );
  }
});
