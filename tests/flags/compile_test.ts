/**
 * compile.sh builds the standalone binary with `deno compile`, which needs Deno's runtime binary
 * (denort): from DENORT_BIN, or downloaded from dl.deno.land. The build runs once, when this file
 * loads. When compile.sh reports that denort cannot be had (no DENORT_BIN and no network), the
 * test that runs the binary is ignored, with compile.sh's reason in its name and on stderr: it
 * never passes without having built and run the binary.
 */
import assert from "node:assert/strict";

const root = new URL("../../", import.meta.url).pathname;
const main = `${root}main.ts`;
const denortMissing =
  "compile.sh: deno compile could not download its runtime binary (denort) because this machine cannot reach dl.deno.land; set DENORT_BIN to a local denort 2.9.6 binary and rerun\n";

async function compile(env: Record<string, string>, out: string) {
  const r = await new Deno.Command("bash", {
    args: ["compile.sh"],
    cwd: root,
    env: { ...env, OUT: out },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  return { code: r.code, text: new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr) };
}

async function output(cmd: string, args: string[]): Promise<{ code: number; stdout: string }> {
  const r = await new Deno.Command(cmd, { args, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  return { code: r.code, stdout: new TextDecoder().decode(r.stdout) };
}

// The real build, with the environment the suite runs in (DENORT_BIN if set).
const buildDir = Deno.makeTempDirSync({ prefix: "ic-compile-" });
const binary = `${buildDir}/ingress-controller`;
const build = await compile({}, binary);
const unavailable = build.code !== 0 && build.text === denortMissing ? build.text.trim() : null;
if (unavailable) {
  Deno.removeSync(buildDir, { recursive: true });
  console.error(`compile_test: building and running the binary is ignored: ${unavailable}`);
}

Deno.test("compile.sh: a DENORT_BIN that is not an executable is named in one line", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const r = await compile({ DENORT_BIN: "/nonexistent/denort" }, `${dir}/ingress-controller`);
    assert.notEqual(r.code, 0);
    assert.equal(
      r.text,
      "compile.sh: DENORT_BIN=/nonexistent/denort is not an executable file; point it at denort 2.9.6 for this platform\n",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test({
  name: unavailable
    ? `compile.sh builds a binary that runs (ignored: ${unavailable.replace(/^compile\.sh: /, "")})`
    : "compile.sh builds a binary that runs",
  ignore: unavailable !== null,
  fn: async () => {
    try {
      assert.equal(build.code, 0, build.text);
      assert.match(build.text, /compile\.sh: built /);
      assert.ok((await Deno.stat(binary)).mode! & 0o111, "the binary is executable");
      // The binary answers as `deno run main.ts` does, including a command loaded at run time.
      for (const args of [["version"], ["--release", "C", "version"], ["proxy", "--help"]]) {
        const compiled = await output(binary, args);
        const interpreted = await output(Deno.execPath(), ["run", "-A", main, ...args]);
        assert.equal(compiled.code, 0, `${args.join(" ")}: exit ${compiled.code}`);
        assert.equal(compiled.stdout, interpreted.stdout, args.join(" "));
      }
    } finally {
      Deno.removeSync(buildDir, { recursive: true });
    }
  },
});
