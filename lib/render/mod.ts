/**
 * @module render
 * Public API of the renderer: cluster objects → Model → `haproxy.cfg` + `crt-list` + Secret list,
 * checked with `haproxy -c`. See render/model.ts for what happens to invalid objects.
 *
 * ```ts
 * const templates = await loadTemplates(config.get("custom-templates"));   // once, at start-up
 * const { model, problems } = buildModel({ ingresses, lookup });
 * const rendered = render(model, templates);
 * const check = await validateConfig(rendered, { haproxy: "haproxy", timeoutMs: 10_000 });
 * ```
 */
export {
  ANNOTATION_PREFIX,
  type Backend,
  BALANCE_ANNOTATION,
  buildModel,
  type BuildResult,
  type ClusterLookup,
  compareIngresses,
  lookupFromLists,
  type Model,
  type ModelInput,
  ModelMemo,
  type Problem,
  readFragments,
  type Route,
  type Server,
  SERVICE_NAME_LABEL,
  SSL_REDIRECT_ANNOTATION,
  TIMEOUT_ANNOTATION,
  type TlsCert,
} from "./model.ts";
export {
  BUILTIN_DEFAULT_BACKEND,
  configMapData,
  loadTemplates,
  render,
  type Rendered,
  RenderMemo,
  type SecretFile,
  type View,
} from "./render.ts";
export { TEMPLATE_NAMES, TemplateError, type Templates } from "./templates.ts";
export { type SecretLike, summarizedSecret, type TlsSecretSummary, tlsSummaryOf } from "./tls_secret.ts";
export { skeleton, SLOT_LINE, slotCount, slotLines } from "./slots.ts";
export { checkTimeLimit, validateConfig, type ValidateOptions, type ValidationResult } from "./validate.ts";
