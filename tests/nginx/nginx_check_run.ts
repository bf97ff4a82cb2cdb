/**
 * `ingress-controller nginx-check` through main.ts as a subprocess, as a platform team runs it
 * (no in-cluster environment), for the command's tests.
 */
const main = new URL("../../main.ts", import.meta.url).pathname;

export async function nginxCheck(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Deno.env.toObject();
  delete env.KUBERNETES_SERVICE_HOST;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", main, "nginx-check", ...args],
    env,
    clearEnv: true,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
