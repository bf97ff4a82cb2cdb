/**
 * @module render/lua
 * The Lua files a rendered configuration may load (`lua-load-per-thread "${IC_LUA_DIR}/<file>"`):
 * written by us, shipped in `templates/` (so `deno compile --include templates` and the images
 * carry them) and written into `IC_LUA_DIR` by whoever runs HAProxy on a rendered configuration:
 * the proxy (a directory of its writable work dir), the controller's `haproxy -c` and the tests.
 * They never travel in the ConfigMap: what the proxy runs is the code of its own image. This module
 * imports only node built-ins, so the proxy writes the files without loading the renderer.
 */
import { join } from "node:path";

/** Helpers of the other files (the table `IC`), loaded before them. */
export const COMMON_LUA = "ic_common.lua";

/** External authentication (lib/render/features/ext_auth.ts): the action `lua.ic_auth_request`. */
export const EXT_AUTH_LUA = "ic_ext_auth.lua";

/** Custom error pages (lib/render/features/error_pages.ts): the action `lua.ic_error_page`. */
export const ERROR_PAGES_LUA = "ic_error_pages.lua";

/** Every Lua file of ours, by name. */
export const LUA_FILES = [COMMON_LUA, EXT_AUTH_LUA, ERROR_PAGES_LUA] as const;

/** What `global` loads for these actions, in order (the common helpers first); empty: none. */
export function luaLoads(extAuth: boolean, errorPages: boolean): string[] {
  const files = [...(extAuth ? [EXT_AUTH_LUA] : []), ...(errorPages ? [ERROR_PAGES_LUA] : [])];
  return files.length > 0 ? [COMMON_LUA, ...files] : [];
}

/** The directory of a work dir the Lua files go to (`IC_LUA_DIR`). */
export function luaDirOf(workDir: string): string {
  return join(workDir, "lua");
}

let sources: Promise<Map<string, string>> | null = null;

/** The files' text, read once from `templates/`. */
export function luaSources(): Promise<Map<string, string>> {
  sources ??= Promise.all(
    LUA_FILES.map(async (f) => [f, await Deno.readTextFile(new URL(`../../templates/${f}`, import.meta.url))] as const),
  ).then((entries) => new Map(entries));
  return sources;
}

/** Writes every Lua file into `dir` (created if needed), replacing files that differ. */
export async function writeLuaFiles(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o755 });
  for (const [file, text] of await luaSources()) {
    const path = join(dir, file);
    const old = await Deno.readTextFile(path).catch(() => null);
    if (old === text) continue;
    // Written aside and renamed: an HAProxy starting or reloading meanwhile reads the old or the new file.
    const tmp = `${path}.tmp-${crypto.randomUUID()}`;
    await Deno.writeTextFile(tmp, text, { mode: 0o644 });
    await Deno.rename(tmp, path);
  }
}
