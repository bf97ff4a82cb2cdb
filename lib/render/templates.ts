/**
 * @module render/templates
 * Loads and compiles the eta templates once at start-up: the built-in ones from `templates/`,
 * then the files matching `--custom-templates`. A custom file whose base name (without `.eta`)
 * equals a built-in template's replaces it; any other custom file becomes a template of its own
 * that templates include as `include("@<base name>", it)`. Every template is compiled and the
 * whole set is rendered once with a sample model, so a broken custom template is a SetupError at
 * start-up naming the file, not a failure at the first ingress.
 */
import { Eta, type TemplateFunction } from "eta";
import { globSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { oneLine, SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";

/** The built-in templates; `haproxy.cfg` is the configuration, `tls` the crt-list. */
export const TEMPLATE_NAMES = [
  "haproxy.cfg",
  "global",
  "defaults",
  "access_log",
  "stats",
  "frontend_http",
  "frontend_https",
  "request_path",
  "server_header",
  "routes",
  "backends",
  "default_backend",
  "error_pages",
  "tls",
  // the proxy of a Gateway (lib/gateway/render.ts)
  "gateway/haproxy.cfg",
  "gateway/frontend",
  "gateway/frontend_tls",
] as const;

export const BUILTIN_TEMPLATE_DIR = fileURLToPath(new URL("../../templates/", import.meta.url));

export interface Templates {
  readonly eta: Eta;
  /** Template name → the file it was compiled from (built-in or custom). */
  readonly sources: Readonly<Record<string, string>>;
  /** Some template comes from --custom-templates (it may read anything of the model). */
  readonly custom?: boolean;
}

/** Thrown by `render` when a template fails at run time; names the template file. */
export class TemplateError extends Error {
  override name = "TemplateError";
  constructor(readonly file: string, cause: unknown) {
    super(`template ${file}: ${etaReason(cause)}`);
  }
}

function etaReason(err: unknown): string {
  // eta appends the whole generated function after a line of "="; the reason comes before it
  return oneLine((err instanceof Error ? err.message : String(err)).split(/\n={4,}/)[0]);
}

function templateName(file: string): string {
  const b = basename(file);
  return b.endsWith(".eta") ? b.slice(0, -4) : b;
}

/**
 * Compiles the built-in templates and those matching `customGlob` (relative globs are resolved
 * against the working directory). Each of `sampleViews` is rendered once to catch run-time errors.
 */
export async function compileTemplates(
  customGlob: string | null,
  sampleViews: readonly object[] = [],
): Promise<Templates> {
  const eta = new Eta({ autoEscape: false, autoTrim: false, views: BUILTIN_TEMPLATE_DIR, cache: true });
  const files = new Map<string, string>();
  for (const name of TEMPLATE_NAMES) files.set(name, join(BUILTIN_TEMPLATE_DIR, `${name}.eta`));

  if (customGlob) {
    const pattern = isAbsolute(customGlob) ? customGlob : resolve(customGlob);
    const matched = globSync(pattern).sort();
    if (matched.length === 0) {
      log.warn("--custom-templates matches no file; using the built-in templates", { glob: customGlob });
    }
    const custom = new Map<string, string>();
    for (const file of matched) {
      const info = await Deno.stat(file).catch(() => null);
      if (!info?.isFile) continue;
      const name = templateName(file);
      const other = custom.get(name);
      if (other) {
        throw new SetupError(
          `--custom-templates: ${other} and ${file} both define template "${name}"; keep one of them`,
        );
      }
      custom.set(name, file);
      files.set(name, file);
      log.info("custom template loaded", {
        name,
        file,
        replaces: (TEMPLATE_NAMES as readonly string[]).includes(name),
      });
    }
  }

  const sources: Record<string, string> = {};
  for (const [name, file] of [...files].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (err) {
      throw new SetupError(`cannot read template ${file}: ${etaReason(err)}; check --custom-templates`);
    }
    let fn: TemplateFunction;
    try {
      fn = eta.compile(text);
    } catch (err) {
      throw new SetupError(
        `template ${file} does not compile: ${etaReason(err)}; fix it or drop it from --custom-templates`,
      );
    }
    eta.loadTemplate(`@${name}`, tagErrors(fn, file));
    sources[name] = file;
  }
  const custom = Object.values(sources).some((f) => !f.startsWith(BUILTIN_TEMPLATE_DIR));
  const templates: Templates = { eta, sources, custom };
  for (const view of sampleViews) {
    for (const root of ["haproxy.cfg", "tls"]) {
      try {
        eta.render(`@${root}`, view);
      } catch (err) {
        const file = err instanceof TemplateError ? err.file : sources[root];
        const cause = err instanceof TemplateError ? (err.cause ?? err) : err;
        throw new SetupError(
          `template ${file} fails to render: ${etaReason(cause)}; fix it or drop it from --custom-templates`,
        );
      }
    }
  }
  return templates;
}

/** Wraps a compiled template so that an error thrown inside it names the file it came from. */
function tagErrors(fn: TemplateFunction, file: string): TemplateFunction {
  return function (this: ThisParameterType<TemplateFunction>, ...args: Parameters<TemplateFunction>) {
    try {
      return fn.apply(this, args);
    } catch (err) {
      if (err instanceof TemplateError) throw err;
      const e = new TemplateError(file, err);
      e.cause = err;
      throw e;
    }
  };
}
