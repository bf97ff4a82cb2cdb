/**
 * @module controller/group_validation
 * `haproxy -c` on a group's configuration before it is published (`--validate-proxy-config`), with
 * isolation: when the merged configuration is refused (or its check does not finish within its
 * limit), its halves are checked, the refused ones halved again down to single members, and the
 * members refused alone are left out with a
 * `ValidationFailed` Warning Event, so one member's bad or costly value never takes the others
 * down. A member refused alone is left out again without a check while its configuration alone
 * stays the same; a configuration that passed is not checked again.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { checkTimeLimit, type Rendered, validateConfig } from "../render/mod.ts";
import type { EventRecorder } from "./events.ts";
import type { GroupBuild, GroupConfig } from "./group_build.ts";
import { validationFailures, type WorkCounts } from "./metrics.ts";
import type { ControllerSettings } from "./settings.ts";

/** Parts of at most this many members are checked member by member when isolating a refusal. */
const BISECT_BELOW = 4;

/** Why a rendered configuration was refused; `timedOut`: the check did not finish within its limit. */
export interface ValidationProblem {
  readonly message: string;
  readonly timedOut: boolean;
}

/** Checks a rendered configuration; resolves with null when valid, else with the reason. */
export type Validator = (rendered: Rendered) => Promise<ValidationProblem | null>;

/** `haproxy -c` in an isolated directory (lib/render/validate.ts). */
export function defaultValidator(settings: ControllerSettings): Validator {
  return async (rendered) => {
    const r = await validateConfig(rendered, {
      haproxy: settings.haproxyBinary,
      // Larger configurations take longer to parse: the limit grows with the size (a class's, not a member's).
      timeoutMs: checkTimeLimit(settings.validateTimeoutMs, rendered.config.length),
      slots: settings.customTemplates ? "all" : "first",
    });
    // Once per new structure (a passed one is not checked again): custom templates' mistakes show here.
    if (r.warnings.length > 0) log.warn("haproxy -c warns about the generated configuration", { warnings: r.warnings });
    if (r.ok) return null;
    return { message: r.errors.join("; ").slice(0, 800) || "haproxy -c failed", timedOut: r.timedOut };
  };
}

/** What `haproxy -c` reads of a rendered configuration: the same form gets the same verdict. */
interface CheckedForm {
  config: string;
  crtList: string;
  /** The certificate and CA file names, space-separated. */
  files: string;
}

function formOf(r: Rendered): CheckedForm {
  return { config: r.config, crtList: r.crtList, files: r.secrets.map((s) => s.file).join(" ") };
}

function sameForm(a: CheckedForm, b: CheckedForm): boolean {
  return a.config === b.config && a.crtList === b.crtList && a.files === b.files;
}

/** How long a check that ran into its time limit is believed (then the configuration is checked again). */
const TIMED_OUT_KEPT_MS = 10 * 60_000;

export class GroupValidator {
  /** The configurations validated (per group, and per member alone when isolating a failure). */
  readonly #validated = new Map<string, CheckedForm>();
  /**
   * Members whose configuration alone `haproxy -c` refused (by key): left out again without a
   * check while that configuration stays the same, so a check that runs into its time limit costs
   * the other members of the group that wait once, not at every change. A timed-out verdict is
   * believed for {@link TIMED_OUT_KEPT_MS} only (a busy node may have caused it).
   */
  readonly #refusedAlone = new Map<string, CheckedForm & { problem: ValidationProblem; until: number }>();

  constructor(readonly validate: Validator, readonly events: EventRecorder, readonly counts: WorkCounts) {}

  /**
   * `config` as far as `haproxy -c` accepts it: the same configuration, or one without the members
   * refused alone (a member refused alone before, with the same configuration alone, is left out
   * before the merged check). Null: nothing valid to publish.
   */
  async check(build: GroupBuild, config: GroupConfig): Promise<GroupConfig | null> {
    const check = async (id: string, form: CheckedForm, r: Rendered): Promise<ValidationProblem | null> => {
      // What `haproxy -c` can refuse: haproxy.cfg, the crt-list and the certificate files it names.
      // Map lines were checked when rendered, so a route-only change (same haproxy.cfg) skips the
      // check without hashing 2 MB of configuration (the texts are compared as they are).
      const seen = this.#validated.get(id);
      if (seen && sameForm(seen, form)) return null;
      this.counts.validations++;
      const problem = await this.validate(r);
      if (problem === null) this.#validated.set(id, form);
      else validationFailures.inc();
      return problem;
    };
    const refused = (m: KubeObject, problem: ValidationProblem) =>
      this.events.record(
        m,
        "Warning",
        "ValidationFailed",
        problem.timedOut
          ? `haproxy -c timed out on the rendered configuration and it is treated as refused; the last good one ` +
            `keeps serving: ${problem.message}`
          : `haproxy -c refused the rendered configuration; the last good one keeps serving: ${problem.message}`,
      );
    const alone = (m: KubeObject): Rendered | null => {
      const model = build.trialModel([m]);
      return model.servable ? build.render(model.model) : null;
    };
    let { members, built, rendered } = config;
    const now = performance.now();
    const known: KubeObject[] = [];
    // Only while some member was refused alone: a walk over 100,000 members at every change otherwise.
    for (const m of this.#refusedAlone.size > 0 ? members : []) {
      const before = this.#refusedAlone.get(build.keyOf(m));
      if (!before) continue;
      const r = before.until > now ? alone(m) : null;
      if (r !== null && sameForm(before, formOf(r))) {
        known.push(m);
        refused(m, before.problem);
      } else this.#refusedAlone.delete(build.keyOf(m));
    }
    if (known.length > 0) {
      members = members.filter((m) => !known.includes(m));
      if (members.length === 0) return null;
      built = build.model(members);
      if (!built.servable) return null;
      rendered = build.render(built.model);
    }
    const whole = await check(build.group, formOf(rendered), rendered);
    if (whole === null) return members === config.members ? config : { members, built, rendered };
    if (members.length === 1) {
      this.#rememberRefused(build.keyOf(members[0]), formOf(rendered), whole);
      refused(members[0], whole);
      return null;
    }
    const single = async (m: KubeObject): Promise<KubeObject[]> => {
      const r = alone(m);
      const form = r && formOf(r);
      const problem = r ? await check(`member:${build.keyOf(m)}`, form!, r) : null;
      if (problem === null) return [m];
      this.#rememberRefused(build.keyOf(m), form!, problem);
      refused(m, problem);
      return [];
    };
    // Halves that pass are kept whole, refused ones halved again down to single members: one bad
    // member of n costs about 2·log2(n) checks instead of n (100,000 checks of ~50 ms each before).
    const isolate = async (part: readonly KubeObject[]): Promise<readonly KubeObject[]> => {
      if (part.length <= BISECT_BELOW) {
        const out: KubeObject[] = [];
        for (const m of part) out.push(...await single(m));
        return out;
      }
      // A large part's model and render hold the loop: timers (the leader's renewal) run first.
      await new Promise((r) => setTimeout(r, 0));
      const model = build.trialModel(part);
      if (model.servable) {
        const r = build.render(model.model);
        this.counts.validations++;
        const problem = await this.validate(r);
        if (problem === null) return part;
        validationFailures.inc();
      }
      const half = Math.ceil(part.length / 2);
      return [...await isolate(part.slice(0, half)), ...await isolate(part.slice(half))];
    };
    const half = Math.ceil(members.length / 2);
    const kept = members.length <= BISECT_BELOW
      ? await isolate(members)
      : [...await isolate(members.slice(0, half)), ...await isolate(members.slice(half))];
    if (kept.length === 0 || kept.length === members.length) {
      if (kept.length === members.length) { for (const m of members) refused(m, whole); }
      return null;
    }
    const keptModel = build.model(kept);
    if (!keptModel.servable) return null;
    const again = build.render(keptModel.model);
    const problem = await check(build.group, formOf(again), again);
    if (problem !== null) {
      for (const m of kept) refused(m, problem);
      return null;
    }
    return { members: kept, built: keptModel, rendered: again };
  }

  /** Notes that the configuration of the member `key` alone (`form`) was refused. */
  #rememberRefused(key: string, form: CheckedForm, problem: ValidationProblem): void {
    const until = problem.timedOut ? performance.now() + TIMED_OUT_KEPT_MS : Infinity;
    this.#refusedAlone.set(key, { ...form, problem, until });
  }

  /** The member `key` is not served any more: nothing is remembered of it. */
  forgetMember(key: string): void {
    this.#validated.delete(`member:${key}`);
    this.#refusedAlone.delete(key);
  }

  /** The group is gone: its configuration is checked anew if it comes back. */
  forgetGroup(group: string): void {
    this.#validated.delete(group);
  }
}
