/**
 * Where a resumed run continues, from what the journal says and what the fleet shows now. Pure:
 * no I/O, so every branch is a table row in the tests.
 *
 * The journal is written before every POST, so it never under-reports a command: a command it
 * does not show was not sent by this run. What it cannot know is whether a sent command took
 * effect when no answer was recorded; the fleet's state tells, because every command moves the
 * state machine (start IDLE→RUNNING, commit RUNNING→COMMITTING→COMMITTED, pause RUNNING→PAUSED,
 * resume PAUSED→RUNNING, reverse COMMITTED→REVERSING→RUNNING; src/api/commands.ts).
 *
 * - All instances past the command's state: it took effect → adopt (never resend).
 * - All instances still before it, with no instance having confirmed it and none that may have
 *   received it (every request refused, or journaled as never sent): it did not take effect → the
 *   step runs again. A `start`, `commit` or `reverse` that may have reached an instance (sent,
 *   no usable answer) is never sent to it again (`sentOnceOnly`): an instance holding a commit
 *   shows RUNNING until the rest have it, and a start may take effect after its timeout; a state
 *   before the command proves nothing then → refuse ("in-doubt").
 * - Anything else (some instances before, some after; a confirmed command whose effect is not
 *   there; a state neither before nor after; an unreachable instance) cannot be explained
 *   safely → refuse, listing every instance's state.
 */
import { blocksUntilEveryInstance, COMMAND_EFFECT, sentOnceOnly, settledStates } from "../api/commands.js";
import { sameService } from "../instance-identity.js";
import { curlCommand } from "../plugin/http.js";
import type { CommandOp, JournalState, SentCommand } from "./state.js";

/** The note that the journal's write stop is in force: `--resume` leaves it out when its decision runs that stop again. */
export const STOP_COUNTED_NOTE =
  "writes were stopped by an earlier step of this run (its undo has not run): the commit interlock counts it";

export interface FleetReading {
  /** `instanceKey(ref)`: the same key the journal uses (name, else `#<place in the list>`). */
  instance: string;
  /** Its URL, redacted as the journal redacts it: compared with the journal's `run.started` list. */
  url?: string;
  /** The progress state; null when the instance could not be read. */
  state: string | null;
  canCommit?: boolean | null;
}

export interface RunbookIdentity {
  hash: string;
  /**
   * Each step's id and kind, and the command its kind sends (the kind's traits, `traitsOf` in
   * src/steps, which sit above the journal): a kind's name is not a command's.
   */
  steps: { id: string; kind: string; command: CommandOp | undefined }[];
  /**
   * The runbook as `syncbook status`'s argument, and as `syncbook run`'s with the cutover's `--var`
   * values (src/next-run.ts `runTarget`, handed in by the resume): a hint names a command one can paste.
   */
  args: { status: string; run: string };
}

export interface ReconcileOptions {
  /** Resume even though the runbook's text changed since the journal was written (its step ids must still match). */
  allowChangedRunbook?: boolean;
}

export type ReconcileRefusal =
  "changed-runbook" | "steps-differ" | "finished" | "unreachable" | "disagree" | "in-doubt";

export type ReconcileResult =
  | {
      ok: true;
      /** Index of the first step to run. */
      resumeAt: number;
      /** Steps whose command the fleet shows took effect: run them without sending it again. */
      adopt: { stepIndex: number; op: CommandOp; reason: string }[];
      /**
       * A command that reached part of the fleet: its step runs again, sending it only to
       * `targets` (instance keys), never again to the others; `refused` are the targets whose
       * earlier answer was a refusal of it.
       */
      complete?: { stepIndex: number; op: CommandOp; targets: string[]; refused: string[]; reason: string };
      notes: string[];
    }
  | { ok: false; code: ReconcileRefusal; message: string; hint: string; notes: string[] };

const short = (h: string): string => h.slice(0, 12) || "(none)";
const seen = (fleet: readonly FleetReading[]): string =>
  fleet.map((f) => `${f.instance} ${f.state ?? "unreachable"}`).join(", ");
const answers = (c: SentCommand): string =>
  c.perInstance.map((p) => `${p.instance} ${p.answered}${p.error ? ` (${p.error})` : ""}`).join(", ") || "no instance";

/**
 * The commit, as a command a person pastes, for each instance it may have reached (to be sent only
 * to one whose log shows it never received it): a resume that cannot tell refused with no command
 * (an adversarial run went round `--resume` and `--from commit` refusals). The body is `{}`
 * (../shared/spec/sync-service-api.md, POST /api/v1/commit: "an empty JSON object `{}` must be
 * sent"); the URL as the journal redacts it (a password stays `***`), its query never shown
 * (`curlCommand`, src/plugin/http.ts).
 */
function commitByHand(instances: readonly { instance: string }[], fleet: readonly FleetReading[]): string {
  const urls = new Map(fleet.map((f) => [f.instance, f.url]));
  const lines = instances.map((p) => {
    const url = urls.get(p.instance);
    return url === undefined
      ? `# ${p.instance}: POST {its URL}/api/v1/commit with the body {}`
      : `${curlCommand({ method: "POST", url: `${url.replace(/\/$/, "")}/api/v1/commit`, body: {} })} &  # ${p.instance}`;
  });
  // sent one after another, the first would wait for the rest: a commit answers on an instance only
  // once every instance has it (service facts: "commit and reverse block until they have been
  // called on every instance"); each line ends in `&`, so pasted together they run at once; a
  // line per command, its instance a shell comment (a review pasted the one-line form: a syntax
  // error), and the journal's URL masks any credentials whole (`***`): said, to put back
  const masked = lines.some((l) => l.includes("***@"))
    ? " (put each instance's credentials back where *** stands)"
    : "";
  return `; to each as its log allows, all at once (a commit answers only once every instance has it), a line each${masked}:\n${lines.map((l) => `    ${l}\n`).join("")}  `;
}

/**
 * The step a resume goes on at, from the journal alone: the first that did not end ok or skipped,
 * past each failed one the run went on past (`wentPast`: continueOnError, over, not unfinished).
 * At the runbook's end too: no journal step lies past it (reconcile refuses that as steps-differ).
 */
export function resumeStep(state: JournalState): { at: number; wentPast: number[] } {
  const status = (i: number) => state.steps.find((s) => s.index === i);
  const done = (i: number): boolean => {
    const f = status(i)?.finished;
    return f === "ok" || f === "skipped";
  };
  const past = (i: number): boolean =>
    status(i)?.finished === "failed" && state.steps.some((s) => s.index > i && s.started);
  const wentPast: number[] = [];
  let at = 0;
  while (done(at) || past(at)) {
    if (past(at)) wentPast.push(at);
    at++;
  }
  return { at, wentPast };
}

/**
 * A start, commit or reverse of a step the resume has not reached yet (after `resumeAt`), that may
 * have reached an instance: an earlier journal's, carried by the --from run that wrote this one (a
 * `--from stop-writes --to stop-writes` after a commit whose answers were lost). Going on would
 * come to its step and send it again (an adversarial run: commit twice to both instances): the
 * resume's "in-doubt" refusal, its words. Judged on the journal alone, whatever the fleet shows,
 * so the readers that offer `--resume` (a run's end, `status`) ask it too, not a reading of their own.
 */
export function sentAhead(
  state: JournalState,
  runbook: Pick<RunbookIdentity, "steps" | "args">,
  resumeAt: number,
): { message: string; hint: string } | undefined {
  const ahead = state.commandsSent.find(
    (c) => c.stepIndex > resumeAt && sentOnceOnly(c.op) && c.perInstance.some((p) => p.answered !== "error"),
  );
  if (!ahead) return undefined;
  const id = runbook.steps[ahead.stepIndex]?.id ?? `#${ahead.stepIndex + 1}`;
  const next = runbook.steps[ahead.stepIndex + 1]?.id;
  const stepName = `step ${resumeAt + 1} "${runbook.steps[resumeAt]?.id ?? `#${resumeAt + 1}`}"`;
  return {
    message: `${ahead.op} (step ${ahead.stepIndex + 1} "${id}") was sent${ahead.carried ? " by an earlier run of this cutover (its journal's record, carried by the --from run that wrote this one)" : ""}; answers: ${answers(ahead)}; this resume goes on at ${stepName}, before it, and would send it again on its way: a ${ahead.op} is never sent twice to an instance`,
    hint: `see the fleet: syncbook status ${runbook.args.status}; if every instance shows the ${ahead.op} took effect, ${next ? `go on after it with: syncbook run ${runbook.args.run} --from ${next}` : "the runbook has no step after it"}; if not, find out from the service's own log which instances received /${ahead.op} and send it by hand only to those that did not, then go on after it`,
  };
}

export function reconcile(
  state: JournalState,
  runbook: RunbookIdentity,
  fleet: readonly FleetReading[],
  options: ReconcileOptions = {},
): ReconcileResult {
  const notes: string[] = state.warnings.map((w) => `journal: ${w}`);
  const refuse = (code: ReconcileRefusal, message: string, hint: string): ReconcileResult => ({
    ok: false,
    code,
    message,
    hint,
    notes,
  });

  if (state.hash !== runbook.hash) {
    if (!options.allowChangedRunbook) {
      return refuse(
        "changed-runbook",
        `the runbook changed since the journal was written: journal hash ${short(state.hash)}, runbook hash ${short(runbook.hash)} (${state.file})`,
        "resume with the runbook as it was, or pass --allow-changed-runbook if the change cannot affect the steps already run (step ids must still match)",
      );
    }
    notes.push(
      `the runbook changed since the journal was written (hash ${short(state.hash)} → ${short(runbook.hash)}); resuming anyway as asked`,
    );
  }

  // a journal may have no steps yet (crash before run.started): then there is nothing to compare
  if (state.steps.length > 0) {
    const diffs: string[] = [];
    const n = Math.max(state.steps.length, runbook.steps.length);
    for (let i = 0; i < n; i++) {
      const j = state.steps.find((s) => s.index === i);
      const r = runbook.steps[i];
      if (!j || !r)
        diffs.push(`step ${i + 1}: journal ${j ? `"${j.id}"` : "none"}, runbook ${r ? `"${r.id}"` : "none"}`);
      else if (j.id !== r.id || (j.kind && j.kind !== r.kind))
        diffs.push(`step ${i + 1}: journal "${j.id}" (${j.kind}), runbook "${r.id}" (${r.kind})`);
    }
    if (diffs.length) {
      return refuse(
        "steps-differ",
        `the runbook's steps do not match the journal's: ${diffs.slice(0, 5).join("; ")}${diffs.length > 5 ? `; and ${diffs.length - 5} more` : ""}`,
        "resume with the runbook the journal was written for; a runbook with other steps is a new run",
      );
    }
  }

  const { at: resumeAt, wentPast } = resumeStep(state);
  for (const i of wentPast)
    notes.push(
      `step ${i + 1} "${runbook.steps[i]!.id}" failed and the run went on past it (continueOnError): it is not run again`,
    );

  // (a runbook has a step: schema, steps minItems 1)
  if (resumeAt >= runbook.steps.length) {
    const how = state.finished
      ? `it ended ${state.finished.outcome}${state.finished.committed ? " (committed)" : ""}`
      : "every step ended, though the runner stopped before recording the run's end";
    return refuse(
      "finished",
      `nothing to resume: the run in ${state.file} finished (${how})`,
      "start a new run without --resume if the runbook should run again",
    );
  }
  // a --to run that ended ok stopped before the runbook's end: the resume goes on with the next step
  if (state.finished?.outcome === "ok" && state.finished.to === undefined) {
    return refuse(
      "finished",
      `nothing to resume: the run in ${state.file} finished ok`,
      "start a new run without --resume if the runbook should run again",
    );
  }
  // how the last run ended; where this one goes on is said once, by the caller, which knows the
  // steps that run again before it (an --abort's undone write stop)
  if (state.finished) {
    const f = state.finished;
    const why = f.message ? `: ${f.message}` : "";
    notes.push(
      f.aborted
        ? `the previous run: ${f.message ?? "aborted by the operator (--abort)"}`
        : // only a --to run that ended ok gets here (any other ended ok was refused above)
          f.outcome === "ok"
          ? `the previous run ended ok at its --to "${f.to}", as asked`
          : `the previous run ended ${f.outcome}${why}`,
    );
  }

  const unreachable = fleet.filter((f) => f.state === null);
  if (unreachable.length) {
    return refuse(
      "unreachable",
      `cannot resume: ${unreachable.map((f) => f.instance).join(", ")} ${unreachable.length === 1 ? "does" : "do"} not answer progress (fleet: ${seen(fleet)})`,
      "the state of every instance is needed to know whether start or commit took effect; progress can fail for minutes after a service restart or resume (1.7.3+): try again shortly",
    );
  }

  // facts [progress 1.20]: after a restart a 1.20+ service is INITIALIZING, then "the state it had
  // before the crash": not IDLE, not a failure, and no proof of what a command did. The caller reads
  // until it settles; one still INITIALIZING when that gives up is judged when it has settled.
  const initializing = fleet.filter((f) => f.state === "INITIALIZING");
  if (initializing.length && state.commandsSent.length) {
    return refuse(
      "unreachable",
      `cannot resume yet: ${initializing.map((f) => f.instance).join(", ")} ${initializing.length === 1 ? "is" : "are"} still INITIALIZING (fleet: ${seen(fleet)})`,
      "a 1.20+ service goes INITIALIZING after a restart, then back to the state it had before it; that state is needed to know whether the commands the journal sent took effect: resume again once it has settled",
    );
  }

  // an unnamed instance is keyed by its place in the list: the list must still be the same one
  if (state.instances) {
    const moved: string[] = [];
    for (const f of fleet) {
      const was = state.instances.find((j) => j.key === f.instance);
      // one service in another spelling is the same instance; two loopback spellings may be two
      // services (one bound to 127.0.0.1, another to ::1): not known to be the same, so refused
      if (was && f.url !== undefined && sameService(was.url, f.url) !== "same")
        moved.push(`${f.instance} was ${was.url}, is ${f.url}`);
    }
    if (state.instances.length !== fleet.length)
      moved.push(`the journal's run had ${state.instances.length} instance(s), the runbook lists ${fleet.length}`);
    if (moved.length) {
      return refuse(
        "disagree",
        `the runbook's instances are not those the journal's run used: ${moved.join("; ")}`,
        "resume with the instances the run started with, in the same order (give each a `name:` to key it by name)",
      );
    }
  }

  const fleetKeys = new Set(fleet.map((f) => f.instance));
  for (const c of state.commandsSent) {
    const gone = c.instances.filter((i) => !fleetKeys.has(i));
    if (gone.length) {
      return refuse(
        "disagree",
        `the journal sent ${c.op} to ${gone.join(", ")}, which ${gone.length === 1 ? "is" : "are"} not in the fleet now (fleet: ${seen(fleet)})`,
        "resume with the same instances the run started with (names and URLs)",
      );
    }
  }

  const adopt: { stepIndex: number; op: CommandOp; reason: string }[] = [];
  let complete: Extract<ReconcileResult, { ok: true }>["complete"];
  const step = runbook.steps[resumeAt]!;
  const stepName = `step ${resumeAt + 1} "${step.id}"`;
  const pending = state.commandsSent.filter((c) => c.stepIndex === resumeAt);
  const outside = state.commandsSent.filter((c) => c.stepIndex > resumeAt || c.stepIndex < 0);
  const ahead = sentAhead(state, runbook, resumeAt);
  if (ahead) return refuse("in-doubt", ahead.message, ahead.hint);
  for (const c of outside)
    notes.push(
      `a ${c.op} sent outside the step to resume (step ${c.stepIndex + 1}, answered ${c.answered}) is only recorded, not judged`,
    );

  if (pending.length > 1) {
    // e.g. a hook step that paused and resumed: the last command decides the state the fleet should show
    notes.push(`${stepName} sent ${pending.map((c) => c.op).join(", ")}; judging the last one`);
  }
  const cmd = pending[pending.length - 1];

  if (cmd) {
    const { before, after }: { before: readonly string[]; after: readonly string[] } = COMMAND_EFFECT[cmd.op];
    const inAfter = fleet.filter((f) => after.includes(f.state!));
    const inBefore = fleet.filter((f) => before.includes(f.state!));
    const other = fleet.filter((f) => !after.includes(f.state!) && !before.includes(f.state!));
    const sentTo = `${cmd.op} (${stepName}) was sent; answers: ${answers(cmd)}`;
    const split = splitCommand(cmd, fleet, inAfter, inBefore, other);
    if (split) {
      complete = { stepIndex: resumeAt, ...split };
      notes.push(
        `${sentTo}; it reached only part of the fleet (fleet: ${seen(fleet)}; ${split.reason}): it will be sent to ${split.targets.join(", ")} only, once ${split.targets.length === 1 ? "that instance passes" : "those pass"} its interlocks and you confirm; never again to the others`,
      );
    } else if (fleet.length > 0 && inAfter.length === fleet.length) {
      const refused = cmd.perInstance.filter((p) => p.answered === "error");
      if (refused.length) {
        return refuse(
          "disagree",
          `${sentTo}; ${refused.map((p) => p.instance).join(", ")} refused it, yet every instance shows it took effect (fleet: ${seen(fleet)})`,
          "something else changed the fleet's state (another runner, an operator?): find out what happened before going on; then resume from a new run or by hand",
        );
      }
      adopt.push({
        stepIndex: resumeAt,
        op: cmd.op,
        reason: `${cmd.op} took effect (fleet: ${seen(fleet)}); it is not sent again`,
      });
      notes.push(
        `${sentTo}; every instance is ${[...new Set(inAfter.map((f) => f.state))].join("/")}: adopted, not sent again`,
      );
    } else if (fleet.length > 0 && inBefore.length === fleet.length) {
      const confirmed = cmd.perInstance.filter((p) => p.answered === "ok");
      if (confirmed.length) {
        return refuse(
          "disagree",
          `${sentTo}; ${confirmed.map((p) => p.instance).join(", ")} accepted it, yet no instance shows its effect (fleet: ${seen(fleet)})`,
          "an instance that confirmed a command and then shows the state before it may have restarted or been reset: find out what happened before going on",
        );
      }
      const inDoubt = cmd.perInstance.filter((p) => p.answered === "unknown");
      // a resume that got here with the runbook changed was given --allow-changed-runbook: the one
      // it names needs it too, or it is refused as a changed runbook (a review of every hint's command)
      if (inDoubt.length && sentOnceOnly(cmd.op)) {
        return refuse(
          "in-doubt",
          `${sentTo}; every instance is still ${before.join("/")}, but ${inDoubt.map((p) => p.instance).join(", ")} may have received it (no usable answer): ${cmd.op === "start" ? "a start can take effect after its request timed out" : `${cmd.op} is held by an instance until every instance has it, and its state shows nothing until then`}; it is never sent twice`,
          `find out from the service's own log which instances received /${cmd.op}; send it by hand only to those that did not${cmd.op === "commit" ? ` (writes stopped, canCommit true)${commitByHand(inDoubt, fleet)}` : ", "}then resume (the journal then sees its effect): syncbook run ${runbook.args.run} --resume${state.hash !== runbook.hash ? " --allow-changed-runbook" : ""}`,
        );
      }
      if (cmd.op === "commit") {
        notes.push(
          `${sentTo}; every instance is still RUNNING, so the commit did not take effect: it will be sent again once the commit interlocks pass again (RUNNING, canCommit, writes stopped)`,
        );
        const notReady = fleet.filter((f) => f.canCommit === false);
        if (notReady.length)
          notes.push(
            `canCommit is false on ${notReady.map((f) => f.instance).join(", ")}: the commit interlock waits for it or refuses`,
          );
      } else {
        // Stryker disable next-line StringLiteral: equivalent: the "/" joins one state: every command's before list in COMMAND_EFFECT has one
        const was = before.join("/");
        notes.push(`${sentTo}; every instance is still ${was}, so it did not take effect: it will be sent again`);
      }
    } else {
      const parts: string[] = [];
      if (inAfter.length)
        parts.push(`${inAfter.map((f) => `${f.instance} ${f.state}`).join(", ")} (${cmd.op} took effect)`);
      if (inBefore.length)
        parts.push(`${inBefore.map((f) => `${f.instance} ${f.state}`).join(", ")} (${cmd.op} did not take effect)`);
      if (other.length) parts.push(`${other.map((f) => `${f.instance} ${f.state}`).join(", ")} (neither)`);
      return refuse(
        "disagree",
        `${sentTo}; the fleet disagrees with itself: ${parts.join("; ")}`,
        inAfter.length && inBefore.length
          ? `the ${cmd.op} reached only some instances. Identical commands must reach every instance: send ${cmd.op} by hand to the ones that did not take it (after checking the preconditions${cmd.op === "commit" ? ": writes stopped, canCommit true" : ""}), then resume`
          : "find out what moved the fleet to these states before going on",
      );
    }
  } else if (step.command !== undefined) {
    // the journal shows no command from this step: the fleet must not show its effect
    const after: readonly string[] = COMMAND_EFFECT[step.command].after;
    const moved = fleet.filter((f) => after.includes(f.state!));
    const expected = expectedStates(state, resumeAt);
    if (
      fleet.length > 0 &&
      moved.length === fleet.length &&
      !(expected && moved.every((f) => expected.states.includes(f.state!)))
    ) {
      return refuse(
        "disagree",
        `the journal shows no ${step.command} sent by ${stepName}, yet every instance shows its effect (fleet: ${seen(fleet)})`,
        `the journal is written before every command, so this run did not send it: someone else did. Check who, then mark the step done by hand or start a new run`,
      );
    }
  }

  if (!cmd) {
    // no command in flight: the fleet must be where the journal's last completed command left it
    const expected = expectedStates(state, resumeAt);
    if (expected) {
      const off = fleet.filter((f) => !expected.states.includes(f.state!));
      if (off.length) {
        return refuse(
          "disagree",
          `the journal's last command was ${expected.op} (step ${expected.stepIndex + 1}), so every instance should be ${expected.states.join(" or ")}; the fleet shows ${seen(fleet)}`,
          "something changed the fleet since the journal's last command (an operator, another runner, a service restart?): find out what before going on",
        );
      }
    }
  }

  // a reverse adopted here runs the sync the other way: the stop before it is not this sync's
  if (state.stopWritesSucceeded && !adopt.some((a) => a.op === "reverse")) notes.push(STOP_COUNTED_NOTE);
  const openHooks = state.hooksRan.filter((h) => h.stepIndex < resumeAt && !h.undone && h.ok === true);
  if (openHooks.length && !state.stopWritesSucceeded)
    notes.push(
      `hooks that ran and were not undone: ${openHooks.map((h) => `${h.use} (step ${h.stepIndex + 1})`).join(", ")}`,
    );
  const cut = state.steps.find((s) => s.index === resumeAt && s.started && s.finished === undefined);
  // an adopted command step (only the step to resume is ever adopted) does not run again: its own note says so
  if (cut && adopt.length === 0) notes.push(`${stepName} was cut off (started, never ended): it runs again`);
  return { ok: true, resumeAt, adopt, ...(complete ? { complete } : {}), notes };
}

/**
 * A command that reached part of the fleet and can be completed: which instances still need it.
 * Each instance still in the command's state before is one of:
 * - refused it, or never got it (no request in the journal, or one that never left): needs it;
 * - sent it with no usable answer: for a blocking command (commit, reverse) it may be waiting in
 *   the command's round, so it is not sent again while the round can still close; after a
 *   non-blocking one (start, pause, resume) its state proves it did not take effect (the in-flight
 *   wait in run/resume.ts has passed), so it needs it too;
 * - accepted it: a contradiction, left to the refusal below.
 * There is something to complete only when the command certainly reached part of the fleet (an
 * instance shows its effect, or a blocking one may be waiting in its round) and certainly not
 * the rest. A state neither before nor after the command is never completed.
 */
function splitCommand(
  cmd: SentCommand,
  fleet: readonly FleetReading[],
  inAfter: readonly FleetReading[],
  inBefore: readonly FleetReading[],
  other: readonly FleetReading[],
): { op: CommandOp; targets: string[]; refused: string[]; reason: string } | undefined {
  // (with none before, none needs it: the check below returns undefined)
  if (other.length) return undefined;
  const answerOf = (key: string) => cmd.perInstance.find((p) => p.instance === key);
  const blocking = blocksUntilEveryInstance(cmd.op);
  const needs: string[] = [];
  const waiting: string[] = [];
  for (const f of inBefore) {
    const a = answerOf(f.instance);
    if (a?.answered === "ok") return undefined;
    // a blocking command is waiting only while its round can still close: none took it yet
    if (a?.answered === "unknown" && blocking && inAfter.length === 0) waiting.push(f.instance);
    // a command sent once only may have reached it: it is not completed (the refusal says why)
    else if (a?.answered === "unknown" && sentOnceOnly(cmd.op)) return undefined;
    else needs.push(f.instance);
  }
  if (needs.length === 0 || (inAfter.length === 0 && waiting.length === 0)) return undefined;
  const refused = needs.filter((k) => answerOf(k)?.answered === "error");
  return {
    op: cmd.op,
    targets: needs,
    refused,
    reason: `completing the ${cmd.op} ${[
      inAfter.length ? `${inAfter.map((f) => f.instance).join(", ")} took it` : "",
      waiting.length
        ? `${waiting.join(", ")} got it and ${waiting.length === 1 ? "waits" : "wait"} for the rest of the fleet`
        : "",
    ]
      .filter(Boolean)
      .join(
        // Stryker disable next-line StringLiteral: equivalent: one part at most: an instance waits only while none took it
        "; ",
      )}`,
  };
}

/**
 * The states the fleet should be in after the journal's last completed command before `upTo`
 * (undefined when the run sent none: a cutover-only runbook meets the fleet wherever it is).
 */
function expectedStates(
  state: JournalState,
  upTo: number,
): { op: CommandOp; stepIndex: number; states: readonly string[] } | undefined {
  // the latest step before upTo that sent one, and its last command (journal order); a command
  // sent outside any step (-1) sets no expectation
  for (let i = upTo - 1; i >= 0; i--) {
    const last = state.commandsSent.findLast((c) => c.stepIndex === i);
    // the command's result and where the service goes from there by itself (COMMITTING →
    // COMMITTED, REVERSING → RUNNING): src/api/commands.ts
    if (last) return { op: last.op, stepIndex: i, states: settledStates(last.op) };
  }
  return undefined;
}
