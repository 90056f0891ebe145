/**
 * What a `--resume` takes from its journal once reconcile has said where it goes on
 * (src/journal/reconcile.ts): which steps are done, which write stops run again (and the checks
 * that passed after them), whose undos are owed, and what the run's memory starts from. Pure:
 * src/run/resume.ts reads the journal and the fleet, and says `notes`; here each rule is pinned by
 * a unit test and measured under mutation.
 */
import { reversedVerification, type VerifierMemory } from "../api/verifier-memory.js";
import { refusalsCounted, type JournalState, type ReconcileResult } from "../journal/index.js";
import type { ServiceRefusal } from "../events.js";
import type { BoundStep } from "../steps/index.js";
import { commitEvidence, currentSyncCommit, lastReverse, reverseInDoubt } from "./earlier.js";

/** A step as the decision reads it: its place, id and kind's traits. */
export interface ResumeStep {
  index: number;
  id: string;
  bound: Pick<BoundStep, "opensWriteStop" | "afterWritesBack">;
}

export interface ResumeDecision {
  /** Steps not run again, with why (`done in an earlier run (journal)`, `adopted: …`). */
  done: Map<number, string>;
  /** Of those, the command steps the fleet shows took effect. */
  adopted: Set<number>;
  /** The first write stop that runs again (its undo started, or a hook process may have acted). */
  reverted?: number;
  /** What the resume says, in order (each after `resume: `). */
  notes: string[];
  /** Steps whose hook ran and was not undone: their undo is owed again. */
  undoSteps: number[];
  /** The run's memory at its start (the caller adds a split command's). */
  memory: {
    writesStopped: boolean;
    verifier: VerifierMemory;
    reversed?: string;
    reverseInDoubt?: string;
    commitSent: boolean;
    /** That commit went past its forced `writes-stopped` interlock: verify does not count it as writes stopped. */
    commitWritesForced?: true;
    commitAccepted: boolean;
    serviceErrors: ServiceRefusal[];
  };
}

export function decideResume(
  state: JournalState,
  r: Extract<ReconcileResult, { ok: true }>,
  steps: readonly ResumeStep[],
  mayHaveActed: boolean,
): ResumeDecision {
  const notes: string[] = [];
  const done = new Map<number, string>();
  for (const s of steps) if (s.index < r.resumeAt) done.set(s.index, "done in an earlier run (journal)");
  for (const a of r.adopt) done.set(a.stepIndex, `adopted: ${a.reason}`);
  const adopted = new Set(r.adopt.map((a) => a.stepIndex));
  // a commit counts as sent once it may have reached any instance: adopted, ended ok, accepted
  // by one, or sent with no usable answer (commit blocks until every instance has it, so an
  // instance that got it may be waiting in its round: turning writes back on then would let the
  // round close with writes flowing). As in a run, nothing is undone after commit was sent.
  const journaled = commitEvidence(state);
  const reversedNow = r.adopt.some((a) => a.op === "reverse");
  const adoptedCommit = r.adopt.some((a) => a.op === "commit") && !reversedNow;
  const current = currentSyncCommit(state, reversedNow);
  const commitSent = r.adopt.some((a) => a.op === "commit") || journaled.sent;
  // the step of the reverse that started the sync that runs now (adopted here, or ended ok)
  const newSyncFrom = r.adopt.find((a) => a.op === "reverse")?.stepIndex ?? lastReverse(state)?.stepIndex;
  // a stopWrites whose undo started may have turned writes back on: it runs again, so commit's
  // interlock sees writes stopped by this run, not by a step whose effect was reverted. Only its
  // latest run counts (a resume that ran it again stopped writes again), and never once a commit
  // of its sync may have been sent: no pre-commit step runs after a commit (its waits cannot pass
  // any more). A write stop after a reverse is the new sync's: only that sync's commit counts
  // (the first sync's commit would keep it from running again, and the new sync's commit, still
  // ahead, would be refused for want of a write stop).
  const beforeItsCommit = (stepIndex: number): boolean =>
    newSyncFrom !== undefined && stepIndex > newSyncFrom ? !(adoptedCommit || current.sent) : !commitSent;
  const latest = new Map(state.hooksRan.map((h) => [h.stepIndex, h]));
  let reverted: number | undefined;
  for (const h of [...latest.values()].filter((h) => beforeItsCommit(h.stepIndex))) {
    const step = steps[h.stepIndex];
    if (step?.bound.opensWriteStop !== true) continue;
    const why = h.undone
      ? `its undo ran${state.finished?.aborted ? " (--abort)" : ""}: writes went back on`
      : h.undoStarted
        ? "its undo started in an earlier run, so writes may be flowing"
        : h.byHand
          ? // its step has no `undo:`: an --abort said to turn writes back on by hand (journaled)
            "the --abort could not undo it (no `undo:` in the runbook) and asked for writes back on by hand, so writes may be flowing"
          : h.abortAfter
            ? // the abort's undo or hand-off not journaled: cut off, or its journal failed while it
              // still told the operator to do it by hand; judged by the journal, never by today's
              // runbook (an `undo:` added since undid nothing). A stop run again is harmless, one
              // counted while writes flow is not
              "an --abort began after it, and the journal does not show what became of it (undone, or handed to a person to turn writes back on by hand), so writes may be flowing"
            : mayHaveActed
              ? "a hook process an earlier run left was still running when this run began, and may have turned writes back on"
              : undefined;
    if (why && done.delete(h.stepIndex)) {
      notes.push(`step ${h.stepIndex + 1} "${step.id}" runs again: ${why}`);
      reverted = Math.min(reverted ?? h.stepIndex, h.stepIndex);
    }
  }
  // what a step after it established held while writes were stopped; once the undo turned them
  // back on it no longer does (a "drained" wait for lag below 3 s ran while writes were off):
  // such checks are not done, they run again after the write stop does. Steps that act (hooks,
  // notify, commands) are not repeated; a verify is not either (the verifier runs one check per
  // process), and is named so the operator can judge it.
  if (reverted !== undefined) {
    // an undo that ran, or a stop that may have been reverted (an undo started, a hand-off by hand, a hook process left)
    const since = latest.get(reverted)!.undone ? "whose undo has run since" : "which may have been reverted since";
    for (const st of steps) {
      if (st.index <= reverted || !done.has(st.index) || adopted.has(st.index)) continue;
      if (st.bound.afterWritesBack === "again") {
        done.delete(st.index);
        notes.push(
          `step ${st.index + 1} "${st.id}" runs again: it passed while writes were stopped by step ${reverted + 1}, ${since}`,
        );
      } else if (st.bound.afterWritesBack === "told")
        notes.push(
          `step ${st.index + 1} "${st.id}" (verify) passed while writes were stopped by step ${reverted + 1}, ${since}; it is not run again (the verifier checks once per process): restart the verifier and verify again if writes reached the source meanwhile`,
        );
    }
  }
  // as a run after its reverse step (its undo stack rearmed, src/steps/lifecycle.ts): the hooks
  // of the new sync, after the reverse, are undone until its own commit; none from before
  const undoSteps =
    adoptedCommit || current.sent || (commitSent && newSyncFrom === undefined)
      ? []
      : state.hooksRan
          .filter((h) => h.ok !== undefined && !h.undone && !h.undoStarted)
          .filter((h) => !commitSent || h.stepIndex > newSyncFrom!)
          .map((h) => h.stepIndex);
  // an earlier run's reverse that may have reached the fleet and whose step did not end ok, which
  // this resume does not adopt: the sync may run either way until its step ends ok here (said at
  // the run's end, as status and the report say it: src/steps/lifecycle.ts keeps it)
  const doubt = reversedNow ? undefined : steps[reverseInDoubt(state) ?? -1]?.id;
  const verifier: VerifierMemory = { ...state.verifier };
  // after an adopted reverse none of the verifier's memory counts, as after a reverse step (src/steps/lifecycle.ts)
  if (reversedNow && steps[newSyncFrom!] !== undefined) reversedVerification(verifier, steps[newSyncFrom!]!.id);
  return {
    done,
    adopted,
    ...(reverted !== undefined ? { reverted } : {}),
    notes,
    undoSteps,
    memory: {
      // a write stop that runs again is not in force until it has;
      // an adopted reverse runs the sync the other way: its commit needs its own write stop
      writesStopped: state.stopWritesSucceeded && reverted === undefined && !reversedNow,
      // the verifier's check and writesOff are adopted, never resent blindly (src/steps/kit/verifier.ts)
      verifier,
      // the reverse the sync runs since (adopted here, or ended ok): said at the run's end
      ...(newSyncFrom !== undefined && steps[newSyncFrom] ? { reversed: steps[newSyncFrom].id } : {}),
      ...(doubt !== undefined ? { reverseInDoubt: doubt } : {}),
      // the sync that runs now (a reverse starts a new one): the verdict and commit's interlocks
      // go by it, as a run's memory after its reverse step does; the undos above go by any commit
      commitSent: adoptedCommit || current.sent,
      // that commit let through by a forced writes-stopped interlock: never writes known stopped
      ...(current.writesForced ? { commitWritesForced: current.writesForced } : {}),
      commitAccepted: adoptedCommit || current.accepted,
      // the no-errors interlock spans the whole run, the interrupted part included. A refusal the
      // instance took back by accepting that command later (a split start completed: the step's
      // sends are one entry, its best answer ok, its last error kept) still counts, as the run's
      // own memory counts it: nothing published says an instance started after the others leaves
      // the destination a consistent copy (the fail-safe reading; the simulator's verifier finds
      // differences there), and a plain --resume committed what the run before it refused
      // and those an earlier journal's --from run carried into this one (`refusalsCounted`)
      serviceErrors: refusalsCounted(state),
    },
  };
}
