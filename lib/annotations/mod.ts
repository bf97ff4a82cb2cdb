/**
 * @module annotations/mod
 * The controller's annotations: the table (table.ts), its value parsers (values.ts), reading,
 * validation and precedence (resolve.ts). `validateAnnotations` is what the webhook refuses and
 * what the controller turns into Warning Events.
 */
export { annotationName, ANNOTATIONS, PREFIX, RISKS, specOf, specOfAnnotation } from "./table.ts";
export type { AnnotationSpec, Risk, Scope, Status } from "./table.ts";
export {
  LAYERS,
  layersOf,
  readAnnotation,
  resolveSetting,
  riskDisabled,
  showValue,
  validateAnnotations,
  valueMessage,
} from "./resolve.ts";
export type { AnnotationProblem, Layer, LayerValues, Read, Resolved, ValidateOptions } from "./resolve.ts";
export type { Parsed, ValueKind } from "./values.ts";
