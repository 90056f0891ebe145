/**
 * The plan: each step's id, kind and title, and for `--dry-run` every request in order, to which
 * instance, with its body. Nothing here sends anything; each step kind says what it would send.
 */
import type { Runbook, Step, StepKind } from "../runbook/types.js";
import { instancesOf, pluginStepKind } from "../runbook/types.js";
import { canWriteInstance } from "../runbook/can-write.js";
import { bindStep, traitsOf, type BoundStep, type PlannedRequest } from "../steps/index.js";
import { afterLastCommitStep, stopAgainBefore } from "../model/again.js";
import { ExitCode, UserError } from "../errors.js";
import { sameService } from "../instance-identity.js";
import { suggest } from "../suggest.js";

export type { PlannedRequest };

export interface PlannedStep {
  index: number;
  id: string;
  /** `plugin` for a step kind a plugin adds (`pluginKind` names it). */
  kind: StepKind | "plugin";
  pluginKind?: string;
  title: string;
  step: Step;
  /** The step bound to its kind's definition. */
  bound: BoundStep;
}

/** `pluginTitle` gives a plugin step its plugin's title (the runner passes the registry's). */
export function planSteps(runbook: Runbook, pluginTitle?: (kind: string, options: unknown) => string): PlannedStep[] {
  return runbook.steps.map((step, index) => {
    const bound = bindStep(step);
    const pluginKind = pluginStepKind(step);
    if (bound.kind === "plugin" && pluginKind) {
      const title =
        step.name ?? pluginTitle?.(pluginKind, (step as Record<string, unknown>)[pluginKind]) ?? bound.title();
      return { index, id: step.id ?? `${pluginKind}-${index + 1}`, kind: bound.kind, pluginKind, title, step, bound };
    }
    return {
      index,
      id: step.id ?? `${bound.kind}-${index + 1}`,
      kind: bound.kind,
      title: step.name ?? bound.title(),
      step,
      bound,
    };
  });
}

/** Every request of the plan, in order (progress polls summarized once per step). */
export function planRequests(
  runbook: Runbook,
  steps: readonly PlannedStep[],
  redact: (s: string) => string,
): PlannedRequest[] {
  const to = {
    instances: instancesOf(runbook).map((i) => redact(i.url)),
    verifier: runbook.verifier ? redact(runbook.verifier) : "(no verifier)",
    redact,
    serviceVersion: runbook.serviceVersion,
    canWriteFrom: canWriteInstance(runbook),
  };
  return steps.filter((s) => s.step.when !== false).flatMap((s) => s.bound.plan(to).map((r) => ({ step: s.id, ...r })));
}

/**
 * `--from ID` / `--to ID` as indexes (0-based; steps are numbered from 1 in every message). A
 * usage error (exit 2) for an id no step has, with "did you mean", or a range that is empty:
 * checked before anything is opened or sent, so a typo never leaves a journal behind.
 */
export function stepRange(
  steps: readonly Pick<PlannedStep, "id">[],
  from: string | undefined,
  to: string | undefined,
): { from: number; to: number } {
  const ids = steps.map((s) => s.id);
  const indexOf = (id: string | undefined, flag: string): number | undefined => {
    if (id === undefined) return undefined;
    const i = ids.indexOf(id);
    if (i < 0) {
      const near = suggest(id, ids);
      throw new UserError(`${flag} ${id}: no step has this id${near ? ` (did you mean \`${near}\`?)` : ""}`, {
        hint: `Step ids, in order: ${ids.map((x, k) => `${k + 1}. ${x}`).join(", ")}`,
        exitCode: ExitCode.usage,
      });
    }
    return i;
  };
  const f = indexOf(from, "--from") ?? 0;
  const t = indexOf(to, "--to") ?? steps.length - 1;
  if (t < f)
    throw new UserError(`--to ${to} (step ${t + 1}) comes before --from ${from} (step ${f + 1}): nothing would run`, {
      hint: "Give --to a step at or after --from.",
      exitCode: ExitCode.usage,
    });
  return { from: f, to: t };
}

/**
 * The `--only` a way on repeats: as typed, or, where it holds a secret (a password in an instance's
 * URL: every output redacts it, and pasted, `***` is no password and a glob to zsh), the instances
 * it named by name or place (`#2`), which `instanceTargets` reads alike.
 */
export function onlyAsOffered(
  runbook: Runbook,
  typed: string,
  only: readonly number[],
  redact: (text: string) => string,
): string {
  if (redact(typed) === typed) return typed;
  const list = instancesOf(runbook);
  // by name where the name reads back as that instance alone (`instanceTargets`), else by place:
  // a name with a comma, spaces at its ends, or another's, would name another instance, or none
  return only
    .map((k) => {
      const name = list[k]!.name;
      if (name === undefined) return `#${k + 1}`;
      // one part, itself (no comma, no spaces at its ends), naming this instance alone
      const readsBack = onlyParts([name])[0] === name && matching(list, name).join() === String(k);
      return readsBack ? name : `#${k + 1}`;
    })
    .join(",");
}

/** `--only`'s parts: each argument split at commas, trimmed, the empty ones dropped. */
function onlyParts(names: readonly string[]): string[] {
  return names
    .flatMap((n) => n.split(","))
    .map((n) => n.trim())
    .filter(Boolean);
}

/**
 * The instances one part of `--only` names: a place (`#2`) that one alone, whatever the names;
 * else by name or URL (any spelling of one service), all that answer to it.
 */
function matching(list: ReturnType<typeof instancesOf>, raw: string): number[] {
  if (/^#\d+$/.test(raw)) return list.flatMap((_, j) => (`#${j + 1}` === raw ? [j] : []));
  return list.flatMap((i, j) => (i.name === raw || sameService(i.url, raw) === "same" ? [j] : []));
}

/**
 * `--only a,b`: instance indexes by name, URL as written (userinfo aside) or place (`#2`). A usage
 * error (exit 2, before anything is opened) for an instance the runbook does not list, or
 * without `--from` (a targeted command completes one the others have: it never starts a run).
 */
export function instanceTargets(
  runbook: Runbook,
  names: readonly string[],
  from: string | undefined,
  to?: string,
): number[] {
  if (from === undefined)
    throw new UserError("--only sends a command to part of the fleet, so it goes with --from (the command's step)", {
      hint: "For example: syncbook run x.yaml --from commit --only shard-c (the other instances must already have the command).",
      exitCode: ExitCode.usage,
    });
  const list = instancesOf(runbook);
  const labels = list.map((i, k) => i.name ?? `#${k + 1}`);
  const out: number[] = [];
  for (const raw of onlyParts(names)) {
    const all = matching(list, raw);
    // two instances of one name, or a name spelled like another's place (lint's `instance-name`
    // warns of both): which one is meant is not known, and a command to the wrong one splits the fleet
    if (all.length > 1)
      throw new UserError(
        `--only ${raw}: ${all.length} instances answer to it (${all.map((j) => `#${j + 1}${list[j]!.name !== undefined ? ` "${list[j]!.name}"` : ""}`).join(", ")}): which one is meant is not known`,
        { hint: "Name each by its place: #1, #2… (the order of the runbook's `instances`).", exitCode: ExitCode.usage },
      );
    const k = all[0] ?? -1;
    if (k < 0) {
      const near = suggest(raw, labels);
      throw new UserError(
        `--only ${raw}: the runbook lists no such instance${near ? ` (did you mean \`${near}\`?)` : ""}`,
        {
          hint: `Instances: ${labels.join(", ")} (by name, URL or place #1, #2…)`,
          exitCode: ExitCode.usage,
        },
      );
    }
    if (!out.includes(k)) out.push(k);
  }
  if (out.length === list.length)
    throw new UserError("--only names every instance: that is the whole fleet", {
      hint: "Drop --only.",
      exitCode: ExitCode.usage,
    });
  // --only completes one command the others have. A second command step in its range would go to
  // the named instances only too, while the others never had it: a reverse after a completed
  // commit, sent to one instance, split the fleet on the reverse (an adversarial run). Steps its
  // `when` skips do not count (a `when` is read once, from this run's vars)
  const steps = planSteps(runbook);
  const at = steps.findIndex((s) => s.id === from);
  // an unknown --to ends the slice at 0, an unknown --from (-1) takes at most the last step: nothing
  // refused here, and the range's own check names the step
  const end = to === undefined ? steps.length : steps.findIndex((s) => s.id === to) + 1;
  const commands = steps.slice(at, end).filter((s) => s.bound.command && s.step.when !== false);
  if (commands.length > 1) {
    const [first, second] = commands as [PlannedStep, PlannedStep];
    const before = steps[second.index - 1]!;
    throw new UserError(
      `--only sends one command to part of the fleet: from ${from}${to === undefined ? " to the runbook's end" : ` to ${to}`} this run would send ${commands.map((s) => `${s.bound.command} (step ${s.index + 1} ${s.id})`).join(", ")}, and the ${second.bound.command} would reach the named instances only, while the others never had it`,
      {
        hint: `Complete the ${first.bound.command} alone, stopping before step ${second.index + 1}: add --to ${before.id}; then run the rest to the whole fleet: --from ${second.id} (without --only).`,
        exitCode: ExitCode.usage,
      },
    );
  }
  return out;
}

/**
 * The step `id` comes after the runbook's last commit step: a `--from` there goes on with a
 * cutover that committed (src/run/earlier.ts `afterItsCommit`), rather than starting a new one.
 */
export function afterLastCommit(runbook: Runbook, id: string | undefined): boolean {
  const steps = planSteps(runbook);
  const at = steps.findIndex((s) => s.id === id);
  return at >= 0 && afterLastCommitStep(steps, traitsOf, at);
}

/**
 * The id of the stopWrites step a step refused for want of a write stop needs run again (commit's
 * `writes-stopped` interlock): the last one before it, else the first; none for a step after the
 * runbook's last commit. The way on that the run's
 * last word and `status` name (`--resume` would meet the same refusal).
 */
export function stopWritesBefore(runbook: Runbook, failedStep: string | undefined): string | undefined {
  const steps = planSteps(runbook);
  return stopAgainBefore(
    steps,
    traitsOf,
    steps.findIndex((s) => s.id === failedStep),
  )?.id;
}

/**
 * Where a way on that sends the commit step at `commitAt` (its index) to part of the fleet
 * (`--only`) begins, so that the commit's `writes-stopped` interlock passes: the last stopWrites
 * step before it, with no other command step between them (`--only` takes one command,
 * `instanceTargets`). A `--from` at the commit counts a write stop only from the cutover it
 * continues, and a new cutover has none: a terminal trial after a split commit followed
 * `--new-cutover --from commit --only …` into writes-stopped and back. Undefined (the commit step
 * itself is the way on) when the runbook says writes are stopped outside it, or has no such step.
 */
export function writeStopBefore(runbook: Runbook, steps: readonly PlannedStep[], commitAt: number): string | undefined {
  if (runbook.writesStoppedExternally === true) return undefined;
  for (let i = commitAt - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.step.when === false) continue;
    if (s.bound.opensWriteStop) return s.id;
    if (s.bound.command) return undefined;
  }
  return undefined;
}

/**
 * The direction the fleet must sync in when a run begins at step `first` past the runbook's start
 * (a `--from`, a `--resume`): the start's source → destination, read by the run's first progress
 * (src/steps/kit/fleet-ops.ts `fleetIdentityProblems`). Without it a run that skips the start took
 * whatever direction it first saw: after a reverse, `--from stop-writes` committed the sync the
 * other way round from the runbook's own start and its confirm ("Commit to cluster1?"). A reverse
 * between the start and `first` (one that may run) leaves either way legal, as a run's own reverse
 * does until every instance shows it; no start before `first` (a cutover-only runbook, or the start
 * runs in this run): none, the first read decides.
 */
export function directionBefore(
  steps: readonly PlannedStep[],
  first: number,
): { source: string; destination: string; from: string; either?: boolean } | undefined {
  const runs = steps.filter((s) => s.index < first && s.step.when !== false);
  const start = runs.filter((s) => s.bound.command === "start").at(-1);
  if (!start) return undefined;
  const body = (start.step as { start?: { source?: unknown; destination?: unknown } }).start;
  if (typeof body?.source !== "string" || typeof body.destination !== "string") return undefined;
  const reverses = runs.filter((s) => s.index > start.index && s.bound.command === "reverse");
  return {
    source: body.source,
    destination: body.destination,
    from: `the runbook's start step ${start.id}, which this run begins after`,
    ...(reverses.length > 0 ? { either: true } : {}),
  };
}

/**
 * The step a run without `--from` is in effect a `--from` of: its first, when the first command
 * the runbook sends is not a start (a cutover-only runbook, its sync started by hand or by
 * another runbook; a rollback-only one). A start's `fleet-idle` interlock is what tells a run
 * without `--from` that no earlier cutover's commit or reverse is still on the fleet; without
 * one it is judged as a `--from` run is (src/run/earlier.ts `refuseSentAgain`,
 * `refuseSentByEarlierCutover`: a plain run after a split commit sent the commit again).
 * Undefined: the runbook begins with a start (one its `when` skips does not count).
 */
export function startlessFrom(steps: readonly PlannedStep[]): string | undefined {
  const first = steps.find((s) => s.bound.command !== undefined && s.step.when !== false);
  return first?.bound.command === "start" ? undefined : steps[0]?.id;
}
