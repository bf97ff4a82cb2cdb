/**
 * @module lib/dev/images/rootfs
 * Filling an image's root file system from the machine's own files: a binary together with the
 * shared libraries `ldd` names (each copied with the symlinks that lead to it, so the dynamic
 * loader finds it under the name the binary asks for), and the top-level directory links of a
 * merged-/usr Debian (`/lib → usr/lib`). Only what the programs need goes in.
 */
import { dirname, join, resolve } from "node:path";

/** The shared objects (and the dynamic loader) a dynamically linked binary needs, per `ldd`. */
export async function sharedLibraries(binary: string): Promise<string[]> {
  const out = await new Deno.Command("ldd", { args: [binary], stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    // A static binary is fine: it needs nothing.
    if (/not a dynamic executable/.test(text + new TextDecoder().decode(out.stderr))) return [];
    throw new Error(`ldd ${binary} failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  const libs: string[] = [];
  for (const line of text.split("\n")) {
    if (/=> not found/.test(line)) throw new Error(`${binary} needs a library that is missing here: ${line.trim()}`);
    const m = line.match(/=>\s+(\/\S+)/) ?? line.match(/^\s*(\/\S+)\s+\(/);
    if (m) libs.push(m[1]);
  }
  return libs;
}

/** Copies the host's top-level links of a merged /usr (`/lib`, `/lib64`, `/bin`, `/sbin`) into `root`. */
export async function copyTopLevelLinks(root: string): Promise<void> {
  for (const name of ["bin", "sbin", "lib", "lib64"]) {
    const st = await Deno.lstat(`/${name}`).catch(() => null);
    if (st?.isSymlink) await symlinkOnce(await Deno.readLink(`/${name}`), join(root, name));
  }
}

/**
 * Copies the host file `path` to the same place under `root`, following symlinks: each link on
 * the way is recreated as a link, and the file it finally names is copied (mode kept).
 */
export async function copyFromHost(root: string, path: string): Promise<void> {
  for (let hops = 0; hops < 16; hops++) {
    // Resolve the directory (it may cross /lib → usr/lib), keep the last component as it is.
    const dir = await Deno.realPath(dirname(path));
    const here = join(dir, path.slice(path.lastIndexOf("/") + 1));
    const st = await Deno.lstat(here);
    const dest = join(root, here);
    await Deno.mkdir(dirname(dest), { recursive: true });
    if (!st.isSymlink) {
      if (await exists(dest)) return;
      await Deno.copyFile(here, dest);
      await Deno.chmod(dest, (st.mode ?? 0o755) & 0o7777);
      return;
    }
    const target = await Deno.readLink(here);
    await symlinkOnce(target, dest);
    path = resolve(dir, target);
  }
  throw new Error(`${path}: too many symbolic links`);
}

/** Copies `binary` to `dest` (an absolute path inside the image) and the libraries it needs to their places. */
export async function installBinary(root: string, binary: string, dest: string): Promise<void> {
  const target = join(root, dest);
  await Deno.mkdir(dirname(target), { recursive: true });
  await Deno.copyFile(await Deno.realPath(binary), target);
  await Deno.chmod(target, 0o755);
  for (const lib of await sharedLibraries(binary)) await copyFromHost(root, lib);
}

/** The minimal /etc and /tmp a program expects (root and nobody users, name lookup order). */
export async function writeSystemFiles(root: string): Promise<void> {
  await Deno.mkdir(join(root, "etc"), { recursive: true });
  await Deno.mkdir(join(root, "tmp"), { recursive: true });
  await Deno.chmod(join(root, "tmp"), 0o1777);
  await Deno.writeTextFile(
    join(root, "etc/passwd"),
    "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
  );
  await Deno.writeTextFile(join(root, "etc/group"), "root:x:0:\nnogroup:x:65534:\n");
  await Deno.writeTextFile(join(root, "etc/nsswitch.conf"), "hosts: files dns\n");
}

async function symlinkOnce(target: string, path: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  if (await exists(path)) return;
  await Deno.symlink(target, path);
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}
