/**
 * `--resume`: the journal of the interrupted run and the live progress of every instance decide
 * where to continue (src/journal/reconcile.ts is the pure decision). A command the journal shows
 * as sent and the fleet shows as taken is never sent again; a disagreement nobody can explain
 * stops with what was seen. The hooks that ran and were not undone get their runbook `undo`
 * registered again, so a resumed run that fails before commit still undoes them.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { delay } from "../timers.js";
import { ExitCode, UserError } from "../errors.js";
import { createFleet, type InstanceSample } from "../fleet/index.js";
import { chooseJournal, instanceKey, journalCutover, reconcile, STOP_COUNTED_NOTE } from "../journal/index.js";
import type { RunEvent } from "../events.js";
import type { LoadedRunbook } from "../runbook/index.js";
import { instancesOf } from "../runbook/types.js";
import { fleetReadRetry, whyReadAgain } from "../steps/kit/fleet-ops.js";
import { formatDuration } from "../runbook/duration.js";
import { shellCommand } from "../text.js";
import { poll } from "../steps/kit/poll.js";
import { planSteps } from "./plan.js";
import { runTarget } from "../next-run.js";
import {
  cutoverVars,
  openEarlierJournal,
  readFolderJournals,
  refuseSentByEarlierCutover,
  resumeIdentity,
  stepToRunAgain,
  whenDiffersHint,
  openHooks,
  undoVarsDiffer,
  undoVarsRefusal,
  varsChangedRefusal,
  varsChangedSince,
  cutoverValuesFrom,
  cutoverValuesOf,
  varsChangedText,
  whenVars,
  whenDecidedOtherwise,
  whenDiffersText,
} from "./earlier.js";
import { decideResume } from "./resume-decide.js";
import { runDefaults, type ResumePlan } from "./runner.js";

/** How often a `--resume` waiting for the fleet to answer says so. */
const RESUME_READ_SAID_EVERY_MS = 15_000;

export async function planResume(
  loaded: LoadedRunbook,
  dir: string,
  opts: {
    allowChangedRunbook: boolean;
    say: (s: string) => void;
    signal?: AbortSignal;
    /** `--resume <journal>`: this journal, not the one the folder's rule picks. */
    file?: string;
    /**
     * A hook process of an earlier run was alive when this run began (earlier.ts
     * `waitOutEarlierRuns`, which the CLI ran before this): whatever it did may have turned writes
     * back on, so every write stop the journal shows done runs again.
     */
    mayHaveActed?: boolean;
  },
): Promise<{ file: string; plan: ResumePlan; history: RunEvent[] }> {
  const rb = loaded.runbook;
  if (!rb) throw new UserError("not a valid runbook", { exitCode: ExitCode.usage });
  const { file, state, events: history } = await openEarlierJournal(dir, { ...opts, loaded });
  const d = runDefaults(loaded);
  const steps = planSteps(rb);
  // the fleet's own variables (past the last step, only the instances' and the verifier's URLs are
  // read): judged before the fleet is read, whose instances at other URLs the reconcile below
  // refuses with no command to run (an outside review); this refusal names the cutover's values
  const fleetChanged = varsChangedSince(state, loaded, steps.length);
  if (fleetChanged.length && !opts.allowChangedRunbook) throw varsChangedRefusal(fleetChanged, state, loaded, file);
  const fleet = createFleet({
    instances: instancesOf(rb),
    requestTimeoutMs: d.requestTimeoutMs,
    serviceVersion: rb.serviceVersion,
    redact: loaded.redact,
  });
  const signal = opts.signal ?? new AbortController().signal;
  const readFleetStates = async () => {
    // progress may fail for minutes after a restart: read until every instance answers, or give up
    let waiting: InstanceSample[] = [];
    let saidAt = -Infinity;
    const started = Date.now();
    const { value: snap } = await poll({
      read: (s) => fleet.progress(s),
      // INITIALIZING (1.20+, after a service restart) passes by itself: read until it has, so
      // reconcile judges the state the instance settles in, not a transient one
      judge: (snap) => {
        waiting = snap.instances.filter(fleetReadRetry(true).retryable);
        return waiting.length ? undefined : snap;
      },
      every: () => {
        // said at once and then now and again: minutes of silence read as a hung command
        if (Date.now() - saidAt >= RESUME_READ_SAID_EVERY_MS) {
          saidAt = Date.now();
          const left = Math.max(0, d.progressGiveUpMs - (saidAt - started));
          opts.say(
            `resume: reading the fleet before deciding where to go on: ${whyReadAgain(waiting)}; reading again until every instance answers, for at most ${formatDuration(left, "up")} more; nothing has been sent (Ctrl-C stops)`,
          );
        }
        return Math.min(2000, d.pollMs);
      },
      giveUpMs: d.progressGiveUpMs,
      signal,
    });
    return snap.instances.map((i) => ({
      instance: instanceKey(i.ref),
      // as the emitter redacted it into the journal
      url: loaded.redact(i.ref.url),
      state: i.progress?.state ?? null,
      canCommit: i.progress?.canCommit ?? null,
    }));
  };
  const decide = async () =>
    reconcile(state, resumeIdentity(loaded, state), await readFleetStates(), {
      allowChangedRunbook: opts.allowChangedRunbook,
    });
  let r = await decide();
  // A command the interrupted run sent and never saw answered may still be on its way: if the
  // fleet does not show it yet, sending it again now would reach the service twice (the late
  // one refused, or the resend refused if the late one lands first). Wait out the dead runner's
  // request timeout, counted from its journal's last write, then read the fleet again.
  // (also when the fleet looks split: the in-flight request may be what closes it)
  {
    const first = r;
    const last = first.ok
      ? state.commandsSent.filter((c) => c.stepIndex === first.resumeAt).at(-1)
      : state.commandsSent.at(-1);
    // an "in-doubt" refusal (start, commit or reverse with no answer, the fleet still before it)
    // is exactly the case the wait is for: judge it again once the request could have landed
    const waitFor = first.ok
      ? !first.adopt.some((a) => a.stepIndex === first.resumeAt)
      : first.code === "disagree" || first.code === "in-doubt";
    if (last && waitFor && last.perInstance.some((p) => p.answered === "unknown")) {
      const waitMs = Math.ceil((await stat(file)).mtimeMs + d.requestTimeoutMs - Date.now());
      if (waitMs > 0) {
        opts.say(
          `resume: the interrupted run's ${last.op} got no answer and may still be in flight: waiting ${waitMs} ms (its request timeout) before reading the fleet again`,
        );
        await delay(waitMs, opts.signal);
        r = await decide();
      }
    }
  }
  if (!r.ok) for (const n of r.notes) opts.say(`resume: ${n}`);
  if (!r.ok && r.code === "finished" && opts.file !== undefined) {
    // the journal named is over, but the folder holds a run that is not: exit 0 would tell a
    // wrapper the cutover is done
    const others = await unfinishedBeside(dir, file);
    if (others.length)
      throw new UserError(
        `cannot resume from ${file}: ${r.message}; but ${others.join(", ")} holds an unfinished run`,
        {
          exitCode: ExitCode.interlock,
          hint: `resume that one: --resume ${others[0]!}`,
        },
      );
  }
  // a committed cutover past a step after its commit that failed (continueOnError: a verify): the
  // way on is --from that step, not a new run (which would meet a COMMITTED fleet at its start)
  const again = !r.ok && r.code === "finished" ? stepToRunAgain(state, loaded.runbook) : undefined;
  if (!r.ok)
    throw new UserError(`cannot resume from ${file}: ${r.message}`, {
      hint: again
        ? // with the cutover's --var values: a --from made of others is refused (varsChangedSince)
          `step ${again.index + 1} ${again.id} failed and the run went on past it (continueOnError): run it again in this cutover with: syncbook run ${runTarget(loaded, cutoverVars(state, loaded))} ${shellCommand(["--from", again.id])}`
        : r.hint,
      exitCode:
        r.code === "finished"
          ? ExitCode.ok
          : r.code === "changed-runbook" || r.code === "steps-differ"
            ? ExitCode.usage
            : ExitCode.failed,
    });
  const decided = decideResume(state, r, steps, opts.mayHaveActed === true);
  // a write stop the decision runs again (its undo ran or may have, an --abort left it to be undone
  // by hand) is not in force: the word that the commit interlock counts it would contradict it
  for (const n of r.notes) if (!(decided.reverted !== undefined && n === STOP_COUNTED_NOTE)) opts.say(`resume: ${n}`);
  // a `when` is read once per run, from its vars: a resume with other --var values would go on
  // with other steps than the run it continues decided (src/run/earlier.ts `whenDecidedOtherwise`)
  const whenDiffers = whenDecidedOtherwise(
    state,
    steps.map((s) => s.step),
    r.resumeAt,
  );
  if (whenDiffers.length)
    throw new UserError(`cannot resume from ${file}: ${whenDiffersText(whenDiffers)}`, {
      hint: whenDiffersHint(state, loaded, "--resume"),
      exitCode: ExitCode.usage,
    });
  // the undos this run owes are made from the runbook with its --var values: with others than
  // their hooks ran with they would act elsewhere (src/run/earlier.ts `undoVarsDiffer`)
  const owed = new Set(decided.undoSteps);
  const differ = undoVarsDiffer(
    openHooks(state).filter((h) => owed.has(h.stepIndex)),
    loaded,
  );
  if (differ.length) throw undoVarsRefusal(differ, state, loaded, `resume from ${file}`, "--resume");
  for (const n of decided.notes) opts.say(`resume: ${n}`);
  const { done } = decided;
  // the step the task list starts at: one that runs again (a write stop undone) comes before where the run stopped
  const first = steps.find((st) => !done.has(st.index) && st.index < r.resumeAt);
  // the steps still to run made of other values go elsewhere than the cutover did (a write stop
  // through another switch, and the commit after it while the application's writes flow): refused
  // unless said on purpose, as an edited runbook is; said either way
  const changed = varsChangedSince(state, loaded, first?.index ?? r.resumeAt);
  if (changed.length && !opts.allowChangedRunbook) throw varsChangedRefusal(changed, state, loaded, file);
  if (changed.length) opts.say(`resume: ${varsChangedText(changed)} (--allow-changed-runbook)`);
  const at = (i: number): string => `step ${i + 1}/${steps.length} "${steps[i]?.id ?? "(end)"}"`;
  opts.say(
    first
      ? `resume: continuing at ${at(first.index)} (it runs again), then ${at(r.resumeAt)}, where the cutover stopped, from ${file}`
      : `resume: continuing at ${at(r.resumeAt)} from ${file}`,
  );
  let complete: ResumePlan["complete"];
  if (r.complete) {
    const c = r.complete;
    done.delete(c.stepIndex);
    const only = fleet.refs.filter((ref) => c.targets.includes(instanceKey(ref))).map((ref) => ref.index);
    complete = { stepIndex: c.stepIndex, only, why: c.reason, forgive: c.refused };
  }
  // a command an earlier cutover's journal shows may be on the fleet is one this journal knows
  // nothing of (a new cutover that acted and sent none since hid a split commit): the steps this
  // resume runs must not send it again (a journal that cannot be read refuses it too)
  const next = steps.find((st) => !done.has(st.index));
  if (next) {
    const own = await journalCutover(file).then(
      (j) => j.cutover,
      () => undefined,
    );
    const journals = await readFolderJournals(dir);
    // judged by the instances each step sends to: a split command completed goes only to those
    // that have not taken it (an earlier cutover's command on the others is not sent again), and
    // the steps after it to the whole fleet
    const range = complete ? { only: complete.only, completes: steps[complete.stepIndex]!.id } : {};
    refuseSentByEarlierCutover(journals, { cutover: own, file }, loaded, dir, next.id, range, "resume", opts.say);
  }
  const split =
    r.complete?.op === "commit"
      ? `commit reached ${fleet.refs.length - r.complete.targets.length} of ${fleet.refs.length} instances (not ${r.complete.targets.join(", ")})`
      : undefined;
  return {
    file,
    history,
    plan: {
      ...(complete ? { complete } : {}),
      done,
      ...(decided.adopted.size ? { adopted: decided.adopted } : {}),
      memory: { ...(split ? { split } : {}), ...decided.memory },
      undoSteps: decided.undoSteps,
      decidedVars: whenVars(state, loaded),
      ...cutoverValuesOf(cutoverValuesFrom(state, loaded, first?.index ?? r.resumeAt)),
    },
  };
}

/** The other journals of the folder that hold an unfinished run (none when the folder cannot be read). */
async function unfinishedBeside(dir: string, file: string): Promise<string[]> {
  try {
    return (await chooseJournal(dir)).unfinished.filter((f) => resolve(f) !== resolve(file));
  } catch {
    return [];
  }
}
