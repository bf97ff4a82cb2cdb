/**
 * @module controller/group_build
 * The configuration of one proxy group: its members, as its route source gives them to the model
 * (lib/controller/route_source.ts), merged into one model (oldest wins conflicts, host ownership:
 * lib/render/model.ts) with the group's settings (lib/controller/group_settings.ts), then rendered.
 * What the model and the renderer keep between builds (ingress fragments, rendered sections) is kept
 * per group. The model's problems become Warning Events on the members they concern.
 */
import type { KubeObject } from "../cluster/resources.ts";
import type { V1Ingress } from "@kubernetes/client-node";
import {
  buildModel,
  type BuildResult,
  type ClusterLookup,
  type Model,
  type ModelInput,
  ModelMemo,
  type Problem,
  readFragments,
  render,
  type Rendered,
  RenderMemo,
  type Templates,
} from "../render/mod.ts";
import type { EventRecorder } from "./events.ts";
import type { GroupKey } from "./groups.ts";
import { renders, type WorkCounts } from "./metrics.ts";
import type { RouteSource } from "./route_source.ts";
import type { GroupSettings } from "./group_settings.ts";

/** How many Ingresses' fragments `GroupBuild.readAhead` reads between two turns of the event loop (~0.1 s of CPU). */
const READ_SLICE = 2_000;

/** Members of a group and the configuration they make. */
export interface GroupConfig {
  members: readonly KubeObject[];
  built: BuildResult;
  rendered: Rendered;
}

interface BuildDeps {
  templates: Templates;
  lookup: ClusterLookup;
  /** `--restrict-to-operator-namespace`: the one namespace backends may be in; else null. */
  namespace: string | null;
  events: EventRecorder;
  counts: WorkCounts;
}

/** Builds the groups' configurations; keeps what the model and the renderer keep between builds, per group. */
export class GroupBuilder {
  /** Per group: the Ingress fragments kept between models (lib/render/ingress_reading.ts). */
  readonly #memos = new Map<GroupKey, ModelMemo>();
  /** Per group: what render keeps between renders (lib/render/render.ts). */
  readonly #renderMemos = new Map<GroupKey, RenderMemo>();

  constructor(readonly deps: BuildDeps) {}

  /** A build of `group` (from `source`) with its settings, for one reconcile. */
  start(group: GroupKey, source: RouteSource, settings: GroupSettings): GroupBuild {
    return new GroupBuild(group, source, settings, this.deps, () => {
      let memo = this.#memos.get(group);
      if (!memo) this.#memos.set(group, memo = new ModelMemo());
      return memo;
    }, () => {
      let memo = this.#renderMemos.get(group);
      if (!memo) this.#renderMemos.set(group, memo = new RenderMemo());
      return memo;
    });
  }

  /**
   * `member` of `group` replaced its last object with only its status changed (ModelMemo.adopt):
   * true when the group has a model the next build may start from.
   */
  adopt(group: GroupKey, member: KubeObject): boolean {
    const memo = this.#memos.get(group);
    memo?.adopt(member as V1Ingress);
    return memo?.merge != null;
  }

  /** The group is gone: nothing is kept for it. */
  forget(group: GroupKey): void {
    this.#memos.delete(group);
    this.#renderMemos.delete(group);
  }
}

/** The builds of one group with one set of settings (the group's and its members alone). */
export class GroupBuild {
  constructor(
    readonly group: GroupKey,
    readonly source: RouteSource,
    readonly settings: GroupSettings,
    readonly deps: BuildDeps,
    readonly modelMemo: () => ModelMemo,
    readonly renderMemo: () => RenderMemo,
  ) {}

  keyOf(member: KubeObject): string {
    return this.source.keyOf(member);
  }

  /**
   * The model of `members` (all of the group, or some of them) that may be published: the group's
   * next build starts from it, and its host owners are kept (sticky) from then on.
   */
  model(members: readonly KubeObject[]): BuildResult {
    const memo = this.modelMemo();
    const [deltas, inPlace] = [memo.deltas, memo.inPlaceDeltas];
    const built = buildModel(this.#input(members));
    this.modelKind = memo.inPlaceDeltas > inPlace ? "in place" : memo.deltas > deltas ? "delta" : "full";
    return built;
  }

  /** How the last `model` was built: from all members, or as a change of the last model (lib/render/model_delta.ts). */
  modelKind: "full" | "delta" | "in place" | null = null;

  /**
   * The model of some members only to check them (a member alone, half of a group): the group's
   * last build and host owners are left as they were (ModelInput.trial).
   */
  trialModel(members: readonly KubeObject[]): BuildResult {
    return buildModel({ ...this.#input(members), trial: true });
  }

  /**
   * Before the model of `members`, when many of them have no fragment kept yet (a first build, a
   * resync after the caches were replaced): their fragments are read {@link READ_SLICE} at a time,
   * with the event loop free between slices. Reading 100,000 Ingresses at once held it for seconds
   * of CPU, and a busy node stretched that past the leader's renew deadline (10 s), which ended the
   * term. The model that follows takes the fragments as kept.
   */
  async readAhead(members: readonly KubeObject[]): Promise<void> {
    const memo = this.modelMemo();
    if (members.length < memo.latest.size + READ_SLICE) return;
    const input = this.#input(members);
    for (let i = 0; i < input.ingresses.length; i += READ_SLICE) {
      readFragments(input, i, Math.min(input.ingresses.length, i + READ_SLICE));
      await new Promise((r) => setTimeout(r, 0));
    }
  }

  #input(members: readonly KubeObject[]): ModelInput {
    const gs = this.settings;
    return {
      memo: this.modelMemo(),
      ingresses: this.source.modelInputs(this.group, members, gs.nginxCompat),
      lookup: this.deps.lookup,
      namespace: this.deps.namespace,
      layers: { global: gs.global.annotations, class: gs.classValues },
      disableRiskAtOrAbove: gs.global.annotationRiskLimit,
      ownership: gs.ownership,
    };
  }

  /**
   * Whether anything of `built` can be routed. Its problems become Warning Events on the members
   * they concern; when nothing can, every member is told so.
   */
  servable(built: BuildResult, members: readonly KubeObject[]): boolean {
    this.#report(built.problems, members);
    if (built.servable) return true;
    for (const m of members) {
      this.deps.events.record(
        m,
        "Warning",
        "NotServable",
        "nothing in this ingress can be routed; the last good configuration keeps serving",
      );
    }
    return false;
  }

  /** The group's configuration, rendered with what the group's renders keep between them (counted). */
  renderKept(model: Model): Rendered {
    const rendered = render(model, this.deps.templates, this.settings.proxy, this.renderMemo());
    this.deps.counts.renders++;
    renders.inc();
    return rendered;
  }

  /** A configuration rendered on its own: some members of the group only (isolating a failure, a narrowed group). */
  render(model: Model): Rendered {
    return render(model, this.deps.templates, this.settings.proxy);
  }

  /** Records the model's problems as Events on the members they concern. */
  #report(problems: readonly Problem[], members: readonly KubeObject[]): void {
    if (problems.length === 0) return;
    const events = this.deps.events;
    const byKey = new Map(members.map((m) => [this.keyOf(m), m]));
    for (const p of problems) {
      if (p.kind === "Ingress") {
        const m = byKey.get(p.object);
        if (m) events.record(m, "Warning", p.reason, p.message);
        continue;
      }
      // A problem of a Service, EndpointSlice or Secret: on the members of its namespace.
      const ns = p.object.slice(0, p.object.indexOf("/"));
      for (const m of members) {
        if (m.metadata.namespace === ns) events.record(m, "Warning", p.reason, `${p.kind} ${p.object}: ${p.message}`);
      }
    }
  }
}
