/**
 * The one fold of a cutover's events into its read model (`contract.ts`), as vitest's reporters
 * share one read model of a test run: the live UI, the report, `status`, the trace and the
 * coming live page take their views from it instead of each folding step outcomes, runs and the
 * fleet again. Live it is fed the one event stream; after the fact, every journal of the cutover
 * (`joinJournals`), its runs in the order they started.
 *
 * Pure: no I/O, no clock (a reader asks for the view at a time it names), no module state.
 * Lenient: a journal is a file anyone can edit, so fields are read defensively and an event it
 * cannot place is left out, never thrown on. (What `--resume` reads, strictly, is
 * src/journal/state.ts: docs/ARCHITECTURE.md says why it keeps its own reader.)
 */
import { commandOfPath } from "../api/commands.js";
import { generationDocs, lagSeconds, pingLatencyMs } from "../api/progress.js";
import { actsOn, instanceLabel, type InstanceRef, type RunEvent, type RunEventOf } from "../events.js";
import { COPY_DEFAULTS, addCopySample, copyProgress, emptyCopyState, readCollectionCopy } from "../fleet/eta.js";
import type { CopyOptions, CopyState } from "../fleet/eta.js";
import { deliveryReport } from "../plugin/deliveries.js";
import { classifyAnswer, cutoverValuesOfStarted, type Answer } from "../journal/state.js";
import { decidedVars, wayOnVars } from "../next-run.js";
import { WindowTracker, isJournalHeader, type WindowKindTraits } from "../fleet/window.js";
import { VerifyFailedTracker } from "./verify-failed.js";
import { calledOff } from "../writes-words.js";
import {
  MODEL_VERSION,
  type CutoverModel,
  type ModelAttempt,
  type ModelCommit,
  type ModelDecision,
  type ModelEmbeddedSide,
  type ModelGap,
  type ModelHook,
  type ModelInstance,
  type ModelPrompt,
  type ModelRun,
  type ModelStep,
  type ModelVerifier,
} from "./contract.js";

export interface FoldOptions {
  /** What the fold must know of a step kind (`traitsOf`, src/steps/index.ts, handed down: the steps sit above). */
  traits: WindowKindTraits;
  /** The copy ETA's window (src/fleet/eta.ts). */
  copy?: CopyOptions;
  /** Where each journal's events begin (`joinJournals`): a run is named by the journal it wrote. */
  journals?: readonly { file: string; fromSeq: number }[];
  /**
   * The first process's instance index, where no `run.started` says it (the watch's own reads of a
   * runbook's fleet): the only instance whose canWrite is valid (src/runbook/can-write.ts).
   */
  canWriteFrom?: number;
}

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const finite = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/**
 * How many recent lag answers judge its trend, the least time between two of them, and the change
 * (seconds) that is more than noise. The spacing: five answers of the write-stop window's 100 ms
 * reads span 0.4 s, under `lagRate`'s second, and the readiness ETA said "trend not known yet"
 * for as long as the window's drained wait lasted, the one wait the bridge call watches.
 */
const LAG_TREND_SAMPLES = 5;
const LAG_TREND_STEP_MS = 1000;
const LAG_TREND_NOISE_S = 1;

/**
 * A cutover's events folded one at a time (feed them in `seq` order; `foldEvents` sorts). The
 * view (`view()`) is plain JSON: a copy, safe to keep or serve.
 */
export class CutoverFold {
  readonly #opts: FoldOptions;
  readonly #window: WindowTracker;
  /** The last verify step's failure in the runs that count: the run's end folds the same (src/run/assemble.ts). */
  readonly #verifyFailed: VerifyFailedTracker;
  readonly #runs: ModelRun[] = [];
  readonly #gaps: ModelGap[] = [];
  readonly #steps = new Map<number, ModelStep>();
  readonly #running: number[] = [];
  readonly #instances = new Map<number, InstanceRef>();
  readonly #fleet = new Map<number, ModelInstance>();
  readonly #lags = new Map<number, { at: number; lag: number }[]>();
  #copy: CopyState = emptyCopyState();
  #verifier: ModelVerifier | undefined;
  readonly #decisions: ModelDecision[] = [];
  readonly #hooks: ModelHook[] = [];
  readonly #prompts: ModelPrompt[] = [];
  readonly #commits: ModelCommit[] = [];
  /** The last commit's requests, and each answer journaled, by request id (`classifyAnswer`). */
  #commitRequested:
    | {
        at: number;
        run: number;
        step: number | undefined;
        instances: string[];
        /** `pending`: no answer journaled yet. */
        answers: Map<number, { label: string; answered: Answer | "pending" }>;
      }
    | undefined;
  /** When an instance last accepted a commit request (answered ok), since the last reverse that took effect. */
  #commitOkSince: number | undefined;
  /** The instances (labels) that accepted a commit request of the sync that runs now. */
  #commitOkBy = new Set<string>();
  readonly #deliveries: RunEvent[] = [];
  readonly #logs: CutoverModel["logs"] = [];
  readonly #states = new Map<number, string>();
  #started: RunEventOf<"run.started"> | undefined;
  /**
   * The last run that could run steps (not an `--abort`, but one whose fleet moved): its values are the cutover's, as
   * src/journal/state.ts reads them. An `--abort`'s (often none typed) made the page offer a
   * `--resume` without the cutover's `--var`, which was refused (an outside review).
   */
  #valuesStarted: RunEventOf<"run.started"> | undefined;
  #firstStarted: RunEventOf<"run.started"> | undefined;
  #verifierUrl: string | undefined;
  #committedSeen = false;
  /**
   * The last reverse that took effect (its step ended ok: a reverse refused by part of the fleet
   * fails its step, src/steps/lifecycle.ts), when and which step: a new sync runs from it, and
   * what was committed before it is the other sync's (src/run/earlier.ts `lastReverse`, the same
   * rule on the journal).
   */
  #reversed: { at: number; id: string } | undefined;
  /**
   * A `verify` that passed on the verification the runs that count hold (`verifier.verified`), its
   * time and step; neither for one a `--from` run carried from a journal this fold does not hold.
   */
  #verified: { at?: number; step?: string; filter?: string } | undefined;
  /** `#verified` as it stood before the last run that began from what it carried alone (below). */
  #verifiedBefore: { at?: number; step?: string; filter?: string } | undefined;
  /** A reverse sent since the last verification began, its step: the verification no longer counts. */
  #verificationReversed: string | undefined;
  /**
   * The reverses sent since the last that took effect (each step's whose step has not ended ok):
   * by request id, each instance's answer as the journal's reader classes it
   * (src/journal/state.ts `classifyAnswer`).
   */
  #reversesSent: { id: string; at: number; step: number; answers: Map<number, { label: string; answered: Answer }> }[] =
    [];
  #lastAt: number | undefined;
  #journal: string | undefined;
  #journalAt = 0;

  constructor(opts: FoldOptions) {
    this.#opts = opts;
    this.#window = new WindowTracker(opts.traits);
    this.#verifyFailed = new VerifyFailedTracker(opts.traits);
  }

  /** The first process's index: as the last run said (one instance: it), else as the fold was told. */
  #canWriteFrom(): number | undefined {
    const started = this.#started;
    if (!started) return this.#opts.canWriteFrom;
    return started.canWriteFrom ?? (started.instances.length === 1 ? started.instances[0]!.index : undefined);
  }

  /** A reverse step that took effect (ended ok, or adopted): a new sync runs from it. */
  #reverseTookEffect(s: ModelStep, at: number): void {
    if (this.#opts.traits(s.kind).command !== "reverse") return;
    this.#reversed = { at, id: s.id };
    this.#reversesSent = [];
    // the fleet seen COMMITTED was the sync before; the new one is read afresh, and the
    // verification's writesOff was of the sync before too
    this.#committedSeen = false;
    this.#commitOkSince = undefined;
    this.#commitOkBy.clear();
    this.#states.clear();
    delete this.#verifier?.writesOffGeneration;
  }

  /**
   * A reverse that may have reached an instance (an answer not a refusal: accepted, or none usable)
   * and whose step has not ended ok: the sync may run either way, as `status` says from the journal
   * (src/run/earlier.ts `reverseInDoubt`, the same rule); only the fleet can tell.
   */
  /**
   * Whether the sync that runs now was committed, or its commit is in doubt, by the journal's rule
   * (src/run/earlier.ts `evidenceOf`): an instance that accepted a commit request committed it
   * even when its runner died before the fan-out ended (the page said "not committed"); one that
   * gave no usable answer, or none yet, may hold it, unless a run since said it committed.
   */
  #commitStanding(): Pick<
    CutoverModel["cutover"],
    "committed" | "commitAccepted" | "commitInDoubt" | "committedOffRecord"
  > {
    const since = this.#reversed?.at ?? -Infinity;
    const r = this.#commitRequested;
    const last = this.#commits.filter((c) => c.at > since).at(-1);
    // requests after the last fan-out that ended (a fan-out that ended is in `commits`)
    const open = r && r.at > since && (!last || r.at > last.at) ? [...r.answers.values()] : [];
    // a fan-out journaled as ended (commit.sent: every instance it went to took it), or an instance
    // that accepted a request of one, since the last reverse (an outside review: a runner killed
    // after its fan-out ended, before COMMITTED was read, left the page "not committed"; a split's
    // completion by a later run hid the earlier run's accepted answer)
    const accepted = last !== undefined || this.#commitOkSince !== undefined;
    const committed = runsCommitted(this.#runs, this.#reversed) || this.#committedSeen || accepted;
    // a fleet read COMMITTED with no commit of this cutover on record: still committed, said whose
    // it is not (a fresh cutover refused at its start on a fleet an earlier sync committed: the
    // page said "cutover … · COMMITTED" of one that sent nothing)
    const offRecord = !commitOnRecord({
      runs: this.#runs,
      commits: this.#commits,
      commitRequested: this.#commitRequested,
    });
    if (committed)
      return {
        committed,
        ...(accepted ? { commitAccepted: true as const } : {}),
        ...(offRecord ? { committedOffRecord: true as const } : {}),
      };
    // no answer yet from a run that is still the last and has not ended: on its way, not in doubt
    // (the watch page, which knows whether that runner lives, says so when it does not)
    const running = r !== undefined && r.run === this.#runs.length && this.#runs.at(-1)?.finishedAt === undefined;
    const mayHold = [
      ...new Set(
        open.filter((a) => a.answered === "unknown" || (a.answered === "pending" && !running)).map((a) => a.label),
      ),
    ];
    const said = this.#runs.find((x) => x.commitInDoubt === true && (x.finishedAt ?? 0) > since);
    if (mayHold.length) return { committed, commitInDoubt: { at: r!.at, instances: mayHold } };
    if (said) return { committed, commitInDoubt: { at: said.finishedAt!, instances: [] } };
    return { committed };
  }

  #reverseInDoubt(): Pick<CutoverModel["cutover"], "reverseInDoubt"> {
    // the first such, as status finds it
    for (const r of this.#reversesSent) {
      const reached = [...r.answers.values()].filter((a) => a.answered !== "error").map((a) => a.label);
      if (reached.length) return { reverseInDoubt: { id: r.id, at: r.at, instances: [...new Set(reached)] } };
    }
    return {};
  }

  /** The write-stop window's own fold (its clock, its shares): the runner and the UI ask it directly. */
  get window(): WindowTracker {
    return this.#window;
  }

  /** The step running now. */
  get current(): number | undefined {
    return this.#running[this.#running.length - 1];
  }

  /** The run being folded (the last one started). */
  get run(): ModelRun | undefined {
    return this.#runs[this.#runs.length - 1];
  }

  get lastAt(): number | undefined {
    return this.#lastAt;
  }

  /** The steps, in order (as the model holds them: read, do not change). */
  steps(): ModelStep[] {
    return [...this.#steps.values()].sort((a, b) => a.index - b.index);
  }

  /** The hook calls (and undos) so far, in order (read, do not change). */
  hooks(): readonly ModelHook[] {
    return this.#hooks;
  }

  /** The decisions so far, in order (read, do not change). */
  decisions(): readonly ModelDecision[] {
    return this.#decisions;
  }

  /** The commits sent so far, in order (read, do not change). */
  commits(): readonly ModelCommit[] {
    return this.#commits;
  }

  /** The step at `index` (as the model holds it: read it, do not change it). */
  step(index: number): ModelStep | undefined {
    return this.#steps.get(index);
  }

  #stepOf(index: number, id: string, kind = "", title = ""): ModelStep {
    let s = this.#steps.get(index);
    if (!s) {
      s = { index, id, kind, title: title || id, outcome: "pending", attempts: [], slow: [] };
      this.#steps.set(index, s);
    }
    return s;
  }

  /** A run that ended without a word: its steps still running end at its last event. */
  #closeRun(r: ModelRun, at: number): void {
    r.lastAt = Math.max(r.lastAt, at);
    for (const index of this.#running.splice(0)) {
      const a = this.#steps.get(index)?.attempts.at(-1);
      if (a && a.endedAt === undefined) a.endedAt = r.lastAt;
    }
  }

  apply(e: RunEvent): void {
    this.#lastAt = Math.max(this.#lastAt ?? e.at, e.at);
    while (this.#opts.journals && this.#journalAt < this.#opts.journals.length) {
      const j = this.#opts.journals[this.#journalAt]!;
      if (e.seq < j.fromSeq) break;
      this.#journal = j.file;
      this.#journalAt++;
    }
    this.#window.apply(e);
    this.#verifyFailed.apply(e);
    const cur = this.run;
    // a resume's journal header is the next runner's, not a sign of life of this one
    if (cur && e.type !== "run.started" && !isJournalHeader(e)) cur.lastAt = Math.max(cur.lastAt, e.at);
    const n = cur?.n ?? 1;
    // a request sent or a hook run (the one rule, as the journal's readers have it)
    if (cur && actsOn(e)) cur.acted = true;
    switch (e.type) {
      case "run.started":
        this.#runStarted(e);
        break;
      case "run.finished":
        if (cur) {
          cur.finishedAt = e.at;
          cur.outcome = e.outcome;
          cur.ended = calledOff(e, this.#window.open) ? "called-off" : e.outcome;
          cur.exitCode = e.exitCode;
          cur.durationMs = e.durationMs;
          cur.committed = e.committed;
          if (e.commitInDoubt === true) cur.commitInDoubt = true;
          if (e.message !== undefined) cur.message = e.message;
          if (e.aborted === true) cur.aborted = true;
          if (e.undoKeptOff === true) cur.undoKeptOff = true;
          if (e.split !== undefined) cur.split = e.split;
          if (e.to !== undefined) cur.to = e.to;
          if (e.writes !== undefined) cur.writesLeft = e.writes;
          this.#closeRun(cur, e.at);
        }
        break;
      case "step.started": {
        const s = this.#stepOf(e.index, e.id, e.kind, e.title);
        if (e.kind) s.kind = e.kind;
        s.outcome = "running";
        s.startedAt = e.at;
        for (const k of [
          "endedAt",
          "durationMs",
          "error",
          "hint",
          "hintBeforeResume",
          "resumeFlags",
          "againArgs",
          "place",
          "reason",
          "wait",
        ] as const)
          delete s[k];
        s.slow = [];
        if (e.timeoutMs !== undefined) s.timeoutMs = e.timeoutMs;
        else delete s.timeoutMs;
        s.attempts.push({ run: n, startedAt: e.at, outcome: "running" });
        this.#running.push(e.index);
        if (e.promptMs !== undefined && e.promptMs > 0)
          this.#prompts.push({
            run: n,
            index: e.index,
            id: e.id,
            kind: "--step",
            answer: "yes",
            by: this.#who(),
            at: e.at,
            waitedMs: e.promptMs,
          });
        break;
      }
      case "step.finished": {
        const s = this.#stepOf(e.index, e.id);
        if (e.outcome === "ok") this.#reverseTookEffect(s, e.at);
        s.outcome = e.outcome;
        s.endedAt = e.at;
        s.durationMs = e.durationMs;
        s.startedAt ??= e.at - e.durationMs;
        if (e.error !== undefined) s.error = e.error;
        if (e.hint !== undefined) s.hint = e.hint;
        if (e.hintBeforeResume === true && e.hint !== undefined) {
          s.hintBeforeResume = true;
          const flags = Array.isArray(e.resumeFlags) ? e.resumeFlags.filter((f) => typeof f === "string") : [];
          if (flags.length > 0) s.resumeFlags = flags;
        } else if (e.outcome === "failed" && e.hint !== undefined && Array.isArray(e.againArgs))
          s.againArgs = e.againArgs.filter((f) => typeof f === "string");
        if (e.place !== undefined && obj(e.place)) s.place = e.place;
        let a: ModelAttempt | undefined = s.attempts.at(-1);
        if (!a || a.endedAt !== undefined) {
          a = { run: n, startedAt: s.startedAt, outcome: e.outcome };
          s.attempts.push(a);
        }
        a.endedAt = e.at;
        a.durationMs = e.durationMs;
        a.outcome = e.outcome;
        if (e.error !== undefined) a.error = e.error;
        const k = this.#running.lastIndexOf(e.index);
        if (k >= 0) this.#running.splice(k, 1);
        break;
      }
      case "step.skipped": {
        const s = this.#stepOf(e.index, e.id);
        // a reverse a resume adopted (the fleet showed it): it took effect, as one that ended ok
        // (src/journal/state.ts reads it so); missed, the page said "committed" after it
        if (e.adopted === true) this.#reverseTookEffect(s, e.at);
        // a command an earlier run's attempt failed or was cut off in, which the fleet shows took
        // effect: adopted, as after a kill, not "failed" (report.json and JUnit said so of a
        // reverse that took effect); the attempt keeps its failure and error
        const adoptedAfterFailure = e.adopted === true && (s.outcome === "failed" || s.outcome === "interrupted");
        if (adoptedAfterFailure) {
          // what the failed attempt was waiting on and why it failed: its attempt keeps its error
          for (const k of ["error", "hint", "hintBeforeResume", "resumeFlags", "againArgs", "place", "wait"] as const)
            delete s[k];
          s.slow = [];
        }
        // a later run skips what an earlier one did: the step keeps its own outcome and times
        if (s.attempts.length > 0 && s.outcome !== "running" && s.outcome !== "pending" && !adoptedAfterFailure) {
          s.resumeNote = `run ${cur?.n ?? "?"}: ${e.reason}`;
          break;
        }
        s.outcome = "skipped";
        s.reason = s.attempts.length > 0 ? `${e.reason} (run ${cur?.n ?? "?"})` : e.reason;
        if (s.attempts.length === 0) {
          s.startedAt = e.at;
          s.endedAt = e.at;
          s.durationMs = 0;
        }
        break;
      }
      case "progress.sampled":
        this.#sample(e);
        break;
      case "poll.failed": {
        if (e.target !== "service" || !e.instance) break;
        const view = this.#instance(e.instance);
        view.down = { since: view.down?.since ?? e.at, error: e.error };
        break;
      }
      case "verifier.sampled": {
        const p = obj(e.progress) ?? {};
        const counters: Record<string, number> = {};
        for (const [k, v] of Object.entries(obj(p.verificationStatus) ?? {}))
          if (finite(v) !== undefined) counters[k] = v as number;
        const docs = generationDocs(p.generationStats);
        const gen0 = generationDocs(p.gen0Stats);
        const was = this.#verifier;
        this.#verifier = {
          ...(typeof p.phase === "string" ? { phase: p.phase } : {}),
          error: p.error ?? null,
          counters,
          ...(finite(p.generation) !== undefined ? { generation: p.generation as number } : {}),
          ...(docs ? { docs } : {}),
          ...(gen0 ? { gen0 } : {}),
          answeredAt: e.at,
          ...(was?.writesOffGeneration !== undefined ? { writesOffGeneration: was.writesOffGeneration } : {}),
          restarts: was?.restarts ?? 0,
          ...(was?.oldRelease ? { oldRelease: true as const } : {}),
        };
        break;
      }
      case "verifier.baseline":
        if (e.oldRelease) this.#verifierOf().oldRelease = true;
        // a new verification begins: an earlier one's result no longer speaks for the cutover
        this.#verified = undefined;
        this.#verificationReversed = undefined;
        break;
      case "verifier.verified":
        this.#verified = { at: e.at, step: e.id, ...(typeof e.filter === "string" ? { filter: e.filter } : {}) };
        break;
      case "verifier.carried":
        // a --from run goes on with the memory of the journal it continued, whole, as its run and
        // the journal's fold do (src/journal/verifier.ts); the verify that passed is the one this
        // fold holds from that journal's runs, when it holds them
        this.#verified = e.memory.verified === undefined ? undefined : (this.#verified ?? this.#verifiedBefore ?? {});
        this.#verificationReversed = e.memory.reversed;
        break;
      case "verifier.writesOff":
        this.#verifierOf().writesOffGeneration = e.generation;
        break;
      case "verifier.restarted":
        this.#verifierOf().restarts++;
        // a new process: the generations it counts are its own, writesOff not sent to it yet
        delete this.#verifier?.writesOffGeneration;
        break;
      case "wait.status": {
        const s = this.#stepOf(e.index, e.id);
        s.wait = {
          at: e.at,
          met: e.met,
          failing: e.failing.map((f) => ({ ...f })),
          ...(e.unmetAt !== undefined ? { unmetAt: e.unmetAt } : {}),
        };
        break;
      }
      case "wait.slow":
        this.#stepOf(e.index, e.id).slow.push({ at: e.at, stalledForMs: e.stalledForMs, detail: e.detail });
        break;
      case "decision": {
        const index = e.index ?? this.current;
        const d: ModelDecision = { at: e.at, run: n, kind: e.kind, ok: e.ok, reason: e.reason };
        if (index !== undefined) d.index = index;
        const id = e.id ?? (index !== undefined ? this.#steps.get(index)?.id : undefined);
        if (id !== undefined) d.id = id;
        if (e.check !== undefined) d.check = e.check;
        this.#decisions.push(d);
        if (e.check === "confirm") this.#prompts.push(this.#confirmPrompt(d));
        break;
      }
      case "request.sent": {
        // a reverse that may reach an instance ends the verification so far, as the run and the
        // journal's fold have it (src/api/verifier-memory.ts reversedVerification)
        const running = this.current;
        if (
          running !== undefined &&
          e.target === "service" &&
          e.method.toUpperCase() === "POST" &&
          commandOfPath(e.path) === "reverse"
        ) {
          this.#verified = undefined;
          this.#verificationReversed = this.#steps.get(running)?.id ?? `step ${running + 1}`;
          // every answer of it until its step ends ok (then it took effect: `#reverseTookEffect`)
          let r = this.#reversesSent.find((x) => x.step === running);
          if (!r)
            this.#reversesSent.push(
              (r = { id: this.#verificationReversed, at: e.at, step: running, answers: new Map() }),
            );
          if (e.instance) r.answers.set(e.id, { label: instanceLabel(e.instance), answered: "unknown" });
        }
        // a check starts a verification (or resumes one): the writesOff of any before it is not its
        if (e.target === "verifier" && e.path === "/api/v1/check") delete this.#verifier?.writesOffGeneration;
        // a commit may take effect from its first request on: the fan-out's end (commit.sent) may never come
        if (e.target !== "service" || commandOfPath(e.path) !== "commit" || !e.instance) break;
        const label = instanceLabel(e.instance);
        let r = this.#commitRequested;
        if (r && r.run === n && r.step === this.current) {
          if (!r.instances.includes(label)) r.instances.push(label);
        } else
          this.#commitRequested = r = { at: e.at, run: n, step: this.current, instances: [label], answers: new Map() };
        r.answers.set(e.id, { label, answered: "pending" });
        break;
      }
      case "response.received": {
        for (const r of this.#reversesSent) {
          const a = r.answers.get(e.id);
          if (a) a.answered = classifyAnswer(e).answered;
        }
        const c = this.#commitRequested?.answers.get(e.id);
        if (c) c.answered = classifyAnswer(e).answered;
        if (c?.answered === "ok") {
          this.#commitOkSince = e.at;
          this.#commitOkBy.add(c.label);
        }
        break;
      }
      case "commit.sent":
        this.#commits.push({
          at: e.at,
          run: n,
          index: e.index,
          id: e.id,
          instances: [...e.instances],
          skewMs: e.skewMs,
        });
        break;
      case "hook.started":
        this.#hooks.push({
          run: n,
          index: e.index,
          id: e.id,
          use: e.use,
          undo: e.undo,
          ...(e.command !== undefined ? { command: e.command } : {}),
          startedAt: e.at,
        });
        break;
      case "hook.finished": {
        const open = this.#hooks.findLast((h) => h.index === e.index && h.undo === e.undo && h.endedAt === undefined);
        const h: ModelHook = open ?? {
          run: n,
          index: e.index,
          id: e.id,
          use: e.use,
          undo: e.undo,
          startedAt: e.at - e.durationMs,
        };
        if (!open) this.#hooks.push(h);
        h.endedAt = e.at;
        h.ok = e.ok;
        h.durationMs = e.durationMs;
        if (e.error !== undefined) h.error = e.error;
        break;
      }
      case "notification.sent":
      case "notification.settled":
        this.#deliveries.push(e);
        break;
      case "log":
        if (e.level === "warn" || e.level === "error")
          this.#logs.push({
            at: e.at,
            run: n,
            level: e.level,
            message: e.message,
            ...(e.index !== undefined ? { index: e.index } : {}),
          });
        break;
      default:
        break; // unknown (newer) event types, journal headers: nothing of the model
    }
  }

  #runStarted(e: RunEventOf<"run.started">): void {
    const prev = this.run;
    if (prev) {
      // the runner before it: said its end, or died without a word after its last event
      if (prev.finishedAt === undefined) {
        prev.ended = "no-word";
        this.#closeRun(prev, prev.lastAt);
      }
      const from = prev.finishedAt ?? prev.lastAt;
      if (e.at > from)
        this.#gaps.push({
          after: prev.n,
          from,
          to: e.at,
          ms: e.at - from,
          how: prev.finishedAt === undefined ? "killed" : "ended",
        });
    }
    this.#started = e;
    // an --abort's values are the cutover's only where it says so (its fleet moved: src/run/abort.ts)
    if (cutoverValuesOfStarted(e)) this.#valuesStarted = e;
    this.#firstStarted ??= e;
    if (e.mode !== "resume") {
      // a run that is not a --resume counts nothing of the cutover's runs before it but what it
      // carried (run.started.carried, verifier.carried: src/run/earlier.ts fromJournal), whatever
      // they did: a --from run of another text of the runbook counts nothing, and said "not
      // committed · not verified" where the report of its cutover said both (runsCommitted)
      this.#verifiedBefore = this.#verified;
      this.#verified = undefined;
      this.#verificationReversed = undefined;
      // not the commit: one an earlier run of the cutover sent may have taken effect, and a reader
      // that hid it would tell the bridge writes may go back on the source (runsCommitted)
    }
    if (e.verifier !== undefined) this.#verifierUrl = e.verifier;
    const run: ModelRun = {
      n: this.#runs.length + 1,
      mode: e.mode,
      ...(e.abort === true ? { abort: true as const } : {}),
      ...(e.carried !== undefined ? { continues: true as const } : {}),
      ...(this.#journal !== undefined ? { journal: this.#journal } : {}),
      startedAt: e.at,
      lastAt: e.at,
      outcome: "unfinished",
      ended: "open",
      hash: e.hash,
    };
    if (e.by) run.by = { ...e.by };
    if (e.syncbook !== undefined) run.syncbook = e.syncbook;
    this.#runs.push(run);
    for (const st of e.steps) {
      const step = this.#stepOf(st.index, st.id, st.kind, st.title);
      step.kind ||= st.kind;
      if (st.when !== undefined) step.when = st.when;
      else delete step.when;
      if (st.writesOn === true) step.writesOn = true;
      else delete step.writesOn;
    }
    for (const i of e.instances) {
      if (!this.#instances.has(i.index)) this.#instances.set(i.index, { ...i });
      if (!this.#fleet.has(i.index)) this.#fleet.set(i.index, baseInstance(this.#instances.get(i.index)!));
    }
    // a new runner reads the fleet afresh: which instances showed COMMITTED is its own
    this.#states.clear();
  }

  /** The person at this run's terminal: `user@host`, as the run recorded it. */
  #who(): string {
    const by = this.#started?.by;
    return by ? `${by.user}@${by.host}` : "the operator";
  }

  /**
   * A `confirm` decision as a prompt: `answered yes by --yes: …` (the flag), `answered yes by the
   * rehearsal: …` (a rehearsal answers every confirm), `yes: …` / `no: …` (a person).
   */
  #confirmPrompt(d: ModelDecision): ModelPrompt {
    const flag = /^answered yes by (--yes|the rehearsal): ([\s\S]*)$/.exec(d.reason);
    const person = /^(yes|no): ([\s\S]*)$/.exec(d.reason);
    return {
      run: d.run,
      ...(d.index !== undefined ? { index: d.index } : {}),
      ...(d.id !== undefined ? { id: d.id } : {}),
      kind: "confirm",
      question: flag?.[2] ?? person?.[2] ?? d.reason,
      answer: d.ok ? "yes" : "no",
      by: flag?.[1] ?? this.#who(),
      at: d.at,
    };
  }

  #verifierOf(): ModelVerifier {
    this.#verifier ??= { counters: {}, restarts: 0 };
    return this.#verifier;
  }

  #instance(ref: InstanceRef): ModelInstance {
    if (!this.#instances.has(ref.index)) this.#instances.set(ref.index, { ...ref });
    let view = this.#fleet.get(ref.index);
    if (!view) {
      view = baseInstance(this.#instances.get(ref.index)!);
      this.#fleet.set(ref.index, view);
    }
    return view;
  }

  #sample(e: RunEventOf<"progress.sampled">): void {
    const view = this.#instance(e.instance);
    const p = obj(e.progress) ?? {};
    if (typeof p.state === "string") view.state = p.state;
    else delete view.state;
    if (typeof p.info === "string") view.info = p.info;
    else delete view.info;
    const lag = lagSeconds(p) ?? null;
    view.lagSeconds = lag;
    if (typeof lag === "number") {
      const now = { at: e.at, lag };
      const kept = this.#lags.get(e.instance.index) ?? [];
      const last = kept[kept.length - 1];
      // an answer is kept a step after the last kept one; the trend always ends at this answer
      const lags = [...kept, now].slice(-LAG_TREND_SAMPLES);
      if (last === undefined || e.at - last.at >= LAG_TREND_STEP_MS) this.#lags.set(e.instance.index, lags);
      const trend = lagTrend(lags.map((l) => l.lag));
      if (trend) view.lagTrend = trend;
      else delete view.lagTrend;
      setOrDrop(view, "lagRate", lagRate(lags));
    }
    if (typeof p.canCommit === "boolean") view.canCommit = p.canCommit;
    // only the first process's canWrite is valid (mongodb/docs reference/cutover-process.txt: "The
    // canWrite status of any subsequent mongosync processes is not valid"): the others' is never kept
    const from = this.#canWriteFrom();
    if (e.instance.index === from && (typeof p.canWrite === "boolean" || p.canWrite === null))
      view.canWrite = p.canWrite;
    else delete view.canWrite;
    setOrDrop(view, "ceaCatchupSeconds", finite(p.estimatedSecondsToCEACatchup));
    setOrDrop(view, "ceaStage", typeof p.ceaStage === "string" && p.ceaStage !== "" ? p.ceaStage : undefined);
    setOrDrop(view, "pingLatencyMs", pingLatencyMs(p));
    setOrDrop(view, "indexBuilding", obj(p.indexBuilding));
    setOrDrop(
      view,
      "warnings",
      Array.isArray(p.warnings) && p.warnings.length > 0 ? [...(p.warnings as unknown[])] : undefined,
    );
    setOrDrop(view, "embedded", embeddedOf(p.verification));
    view.answeredAt = e.at;
    delete view.down;
    this.#copy = addCopySample(
      this.#copy,
      view.label,
      readCollectionCopy(e.progress),
      e.at,
      this.#opts.copy ?? COPY_DEFAULTS,
    );
    if (view.state !== undefined) this.#states.set(e.instance.index, view.state);
    const n = Math.max(this.#instances.size, this.#started?.instances.length ?? 0);
    // only an answer that says COMMITTED can complete the fleet's (not a scan of it per answer)
    if (
      !this.#committedSeen &&
      view.state === "COMMITTED" &&
      this.#states.size >= n &&
      [...this.#states.values()].every((s) => s === "COMMITTED")
    )
      this.#committedSeen = true;
  }

  /** The copy ETA as the live view shows it. */
  copyState(): CopyState {
    return this.#copy;
  }

  /** The fleet's instances as last read (live objects: read, do not change). */
  instances(): ModelInstance[] {
    return [...this.#fleet.values()].sort((a, b) => a.index - b.index);
  }

  verifier(): ModelVerifier | undefined {
    return this.#verifier;
  }

  /**
   * The model now (a copy): the window measured up to `now` while open (default: the last event).
   * `runnerGone`: the last run's process is known gone without its end (`syncbook watch`): the
   * window's time after its last event is no runner's share.
   */
  view(now: number = this.#lastAt ?? 0, opts: { runnerGone?: boolean } = {}): CutoverModel {
    const first = this.#firstStarted;
    const last = this.#started;
    const windows = this.#window.windows(now, opts.runnerGone === true);
    const w = windows.at(-1);
    const writesLeft = this.#window.writesLeft();
    const current = this.current;
    // each delivery's last state, by the one fold of them (src/plugin/deliveries.ts)
    const notifications = deliveryReport(this.#deliveries);
    const out: CutoverModel = {
      version: MODEL_VERSION,
      cutover: {
        ...(first?.cutover !== undefined ? { id: first.cutover } : {}),
        ...(last ? { runbook: last.runbook, file: last.file, hash: last.hash } : {}),
        ...(last?.journalDir !== undefined ? { journalDir: last.journalDir } : {}),
        ...(first ? { startedAt: first.at } : {}),
        ...(this.#lastAt !== undefined ? { lastAt: this.#lastAt } : {}),
        ...this.#commitStanding(),
        ...(this.#commitOkBy.size ? { commitAcceptedBy: [...this.#commitOkBy] } : {}),
        ...(this.#reversed !== undefined ? { reversed: { ...this.#reversed } } : {}),
        ...(this.#verified !== undefined ? { verified: { ...this.#verified } } : {}),
        ...(this.#verificationReversed !== undefined ? { verificationReversed: this.#verificationReversed } : {}),
        ...(this.#verifyFailed.failed !== undefined ? { verifyFailed: this.#verifyFailed.failed } : {}),
        ...this.#reverseInDoubt(),
      },
      runs: this.#runs.map((r) => ({ ...r })),
      gaps: this.#gaps.map((g) => ({ ...g })),
      instances: [...this.#instances.values()].sort((a, b) => a.index - b.index).map((i) => ({ ...i })),
      ...(this.#verifierUrl !== undefined ? { verifierUrl: this.#verifierUrl } : {}),
      ...(this.#canWriteFrom() !== undefined ? { canWriteFrom: this.#canWriteFrom() } : {}),
      steps: [...this.#steps.values()].sort((a, b) => a.index - b.index).map((s) => structuredClone(s)),
      whenVars: whenVars(this.#steps.values()),
      givenVars: givenVars(whenVars(this.#steps.values()), this.#valuesStarted),
      ...cutoverValues(this.#valuesStarted),
      ...(current !== undefined ? { current } : {}),
      fleet: {
        instances: this.instances().map((i) => structuredClone(i)),
        copy: copyProgress(this.#copy, this.#opts.copy ?? COPY_DEFAULTS),
      },
      ...(this.#verifier ? { verifier: structuredClone(this.#verifier) } : {}),
      ...(w ? { window: w } : {}),
      windows,
      ...(writesLeft ? { writesLeft } : {}),
      decisions: this.#decisions.map((d) => ({ ...d })),
      hooks: this.#hooks.map((h) => ({ ...h })),
      prompts: this.#prompts.map((p) => ({ ...p })),
      commits: this.#commits.map((c) => ({ ...c, instances: [...c.instances] })),
      ...(this.#commitRequested
        ? {
            commitRequested: {
              at: this.#commitRequested.at,
              run: this.#commitRequested.run,
              instances: [...this.#commitRequested.instances],
              answers: commitAnswers(this.#commitRequested.answers),
            },
          }
        : {}),
      ...(notifications ? { notifications } : {}),
      logs: this.#logs.map((l) => ({ ...l })),
    };
    return out;
  }
}

function baseInstance(ref: InstanceRef): ModelInstance {
  return {
    index: ref.index,
    label: instanceLabel(ref),
    url: ref.url,
    ...(ref.name !== undefined ? { name: ref.name } : {}),
  };
}

/** The embedded verifier's sides as progress shows them (1.9+); undefined when it shows none. */
function embeddedOf(v: unknown): ModelInstance["embedded"] {
  const ver = obj(v);
  if (!ver) return undefined;
  const side = (x: unknown): ModelEmbeddedSide | undefined => {
    const o = obj(x);
    if (!o) return undefined;
    const lag = finite(o.lagTimeSeconds);
    return {
      ...(typeof o.phase === "string" ? { phase: o.phase } : {}),
      ...(lag !== undefined ? { lagSeconds: lag } : {}),
    };
  };
  const source = side(ver.source);
  const destination = side(ver.destination);
  return source || destination ? { ...(source ? { source } : {}), ...(destination ? { destination } : {}) } : undefined;
}

function setOrDrop<K extends keyof ModelInstance>(view: ModelInstance, k: K, v: ModelInstance[K] | undefined): void {
  if (v === undefined) delete view[k];
  else view[k] = v;
}

/** The lag's direction over its last answers: more than noise down is `falling`, up `rising`. */
export function lagTrend(lags: readonly number[]): ModelInstance["lagTrend"] {
  if (lags.length < 2) return undefined;
  const d = lags[lags.length - 1]! - lags[0]!;
  return d < -LAG_TREND_NOISE_S ? "falling" : d > LAG_TREND_NOISE_S ? "rising" : "steady";
}

/**
 * The lag's change per second of time over its last answers (first to last): negative while it
 * falls. Undefined over less than a second, where the service's whole-second lag is only noise.
 */
export function lagRate(lags: readonly { at: number; lag: number }[]): number | undefined {
  const first = lags[0];
  const last = lags[lags.length - 1];
  if (!first || !last || last.at - first.at < 1000) return undefined;
  return (last.lag - first.lag) / ((last.at - first.at) / 1000);
}

/** Folds events (any order: sorted by `seq`) into the model. */
export function foldEvents(events: readonly RunEvent[], opts: FoldOptions): CutoverModel {
  const f = new CutoverFold(opts);
  for (const e of [...events].sort((x, y) => x.seq - y.seq || x.at - y.at)) f.apply(e);
  return f.view();
}

/** A run of a journal in a joined stream: its part of the journal and how far it moved. */
interface JoinedRun {
  journal: number;
  events: RunEvent[];
  startedAt: number;
  minSeq: number;
  maxSeq: number;
  /** The highest seq and request id of its journal's runs before it. */
  after: number;
  idAfter: number;
  maxId: number;
  seqBase: number;
  idBase: number;
}

/** How a journal's lines move in a joined stream: each run's shift, and its last run's for lines still to come. */
export interface JournalShift {
  file: string;
  seqBase: number;
  idBase: number;
  /** Its runs in its order: the last seq of each and its shift (a delivery moves with the run of the event it names). */
  runs: { maxSeq: number; seqBase: number }[];
}

/**
 * The events of a cutover's journals as one stream, in the order their runs started: a journal a
 * `--resume` appended to after a later journal's run (a `--from` run between them) is cut at each
 * of its runs, so the resume's reverse folds after that run's verify, not before it (joined by
 * first run, the report said VERIFIED after a reverse). The journals' runs are merged by start,
 * each journal's own kept in its order (a resume on a host whose clock is behind still comes after
 * the run it resumed). Each run's `seq` and request ids are moved past those before it in the
 * stream (as a resumed journal moves its own lines); where each journal's runs begin, for
 * `FoldOptions.journals`; and each journal's shift (`shiftLine`: the watch tails its last run).
 */
export function joinJournals(journals: readonly { file: string; events: readonly RunEvent[] }[]): {
  events: RunEvent[];
  journals: { file: string; fromSeq: number }[];
  shifts: JournalShift[];
} {
  const each = journals.map((j, journal) => journalRuns(j.events, journal));
  // merged by start, never reordered within a journal
  const next = each.map(() => 0);
  const order: JoinedRun[] = [];
  for (;;) {
    let pick: JoinedRun | undefined;
    for (const [k, runs] of each.entries()) {
      const r = runs[next[k]!];
      if (r && (!pick || r.startedAt < pick.startedAt)) pick = r;
    }
    if (!pick) break;
    next[pick.journal]!++;
    order.push(pick);
  }
  let seqCursor = 0;
  let idCursor = 0;
  for (const r of order) {
    r.seqBase = seqCursor - r.after;
    seqCursor = Math.max(seqCursor, r.maxSeq + r.seqBase);
    r.idBase = idCursor - r.idAfter;
    idCursor = Math.max(idCursor, r.maxId + r.idBase);
  }
  const shifts = journals.map((j, k): JournalShift => ({
    file: j.file,
    seqBase: each[k]!.at(-1)?.seqBase ?? seqCursor,
    idBase: each[k]!.at(-1)?.idBase ?? idCursor,
    runs: each[k]!.map((r) => ({ maxSeq: r.maxSeq, seqBase: r.seqBase })),
  }));
  const events: RunEvent[] = [];
  const starts: { file: string; fromSeq: number }[] = [];
  for (const r of order) {
    const file = journals[r.journal]!.file;
    if (starts.at(-1)?.file !== file) starts.push({ file, fromSeq: r.minSeq + r.seqBase });
    for (const e of r.events) events.push(shiftLine(shifts[r.journal]!, e, r));
  }
  return { events, journals: starts, shifts };
}

/**
 * A journal's line moved as its run is in the joined stream (`run`; by default its journal's last,
 * for a line appended since the join), a delivery's `event` as the run that holds the event it
 * names (an earlier run's, redelivered by a resume). A copy: the event given is the caller's.
 */
export function shiftLine(
  shift: JournalShift,
  e: RunEvent,
  run: { seqBase: number; idBase: number } = shift,
): RunEvent {
  const out = shiftEvent(e, run.seqBase, run.idBase);
  if (e.type !== "notification.sent" && e.type !== "notification.settled") return out;
  // runs in seq order: the first that ends at or after the seq holds it; none: it names no line
  const of = shift.runs.find((o) => e.event <= o.maxSeq) ?? run;
  return { ...e, ...out, event: e.event + of.seqBase } as RunEvent;
}

/**
 * A journal's runs, in its order: each begins at a journal header (a resume's) or at a
 * `run.started` its part already holds; when it started (its `run.started`, else its first line),
 * its seqs and request ids, and the highest of each in the journal before it.
 */
function journalRuns(events: readonly RunEvent[], journal: number): JoinedRun[] {
  const parts: { events: RunEvent[]; started?: number }[] = [];
  for (const e of [...events].sort((x, y) => x.seq - y.seq)) {
    let cur = parts.at(-1);
    if (!cur || isJournalHeader(e) || (e.type === "run.started" && cur.started !== undefined)) {
      cur = { events: [] };
      parts.push(cur);
    }
    if (e.type === "run.started") cur.started = e.at;
    cur.events.push(e);
  }
  let after = 0;
  let idAfter = 0;
  return parts.map((p) => {
    let maxId = idAfter;
    for (const e of p.events)
      if (e.type === "request.sent" || e.type === "response.received") maxId = Math.max(maxId, e.id);
    // sorted by seq: its first and last (never spread into a call: a journal can hold a million)
    const r: JoinedRun = {
      journal,
      events: p.events,
      startedAt: p.started ?? p.events[0]!.at,
      minSeq: p.events[0]!.seq,
      maxSeq: p.events.at(-1)!.seq,
      after,
      idAfter,
      maxId,
      seqBase: 0,
      idBase: 0,
    };
    after = Math.max(after, r.maxSeq);
    idAfter = maxId;
    return r;
  });
}

/** An event moved `seqBase` along the stream (and its request id `idBase`): see `joinJournals`. */
export function shiftEvent(e: RunEvent, seqBase: number, idBase: number): RunEvent {
  if (seqBase === 0 && idBase === 0) return e;
  const out = { ...e, seq: e.seq + seqBase };
  if ((out.type === "request.sent" || out.type === "response.received") && idBase > 0) out.id += idBase;
  // a delivery names its event by seq, shifted with it (live, an earlier run's is the journal's already)
  if ((out.type === "notification.sent" || out.type === "notification.settled") && out.earlier !== true)
    out.event += seqBase;
  return out;
}

/** The `--var` values the last run was given that a way on repeats (src/next-run.ts `wayOnVars`), less those a `when` decided. */
function givenVars(decided: string[], started: RunEventOf<"run.started"> | undefined): string[] {
  if (!started) return [];
  const v = cutoverValuesOfStarted(started);
  return v ? wayOnVars(decided, v).slice(decided.length) : [];
}

/** The values the cutover runs with, as the journal's state reads them (src/journal/state.ts `vars`, `given`). */
function cutoverValues(started: RunEventOf<"run.started"> | undefined): Pick<CutoverModel, "cutoverValues"> {
  const v = started && cutoverValuesOfStarted(started);
  if (!v?.vars) return {};
  return { cutoverValues: { vars: { ...v.vars }, given: [...(v.given ?? [])] } };
}

/**
 * The `--var` values a cutover's steps tell its runs decided their `when`s with: one that its `when`
 * skipped, false; one that started, true (as src/run/earlier.ts `cutoverVars` reads the
 * journal; one rule, src/next-run.ts `decidedVars`).
 */
function whenVars(steps: Iterable<ModelStep>): string[] {
  return decidedVars(
    [...steps]
      .sort((a, b) => a.index - b.index)
      .flatMap((s): { name: string; value: boolean }[] => {
        if (s.when === undefined) return [];
        if (s.outcome === "skipped")
          return s.attempts.length === 0 && s.reason === "when: false" ? [{ name: s.when, value: false }] : [];
        // started, ended or not (its runner killed in it): it ran on its `when`
        return s.attempts.length > 0 ? [{ name: s.when, value: true }] : [];
      }),
  );
}

/**
 * A step the model holds `running` that no run is in any more: its run ended without the step's
 * end (killed, crashed) and no run since has run it again (an `--abort`, a run still starting).
 * `running` is "started, no end event"; only `current` is the step running now, and not even it
 * when the reader knows its runner is gone (`runnerGone`: the watch page's dead or finished
 * runner). One rule for `status`, `syncbook watch`'s text and its page (the page had its own,
 * which showed a step an earlier run was killed in as running while a later run went on).
 * Self-contained: the watch page's script runs its source.
 */
export function cutOff(
  m: Pick<CutoverModel, "current">,
  s: Pick<ModelStep, "index" | "outcome">,
  runnerGone = false,
): boolean {
  return s.outcome === "running" && (m.current !== s.index || runnerGone);
}

/** `cutover.committedOffRecord` in words: the watch page's cutover line and its runner's state left say it alike. */
export const COMMITTED_OFF_RECORD_WORDS =
  "the fleet reads COMMITTED, with no commit of this cutover on record (an earlier sync's commit, or one sent by hand)";

/** A cut-off step in words: `status` and the watch page say it alike. */
export const CUT_OFF_WORDS = "started, never ended (cut off)";

/**
 * Not committed, and a commit sent may hold, for a reader that knows whether the runner is gone
 * (the watch page, by its lock) or cannot know it (a report, read after: `runnerGone` where the
 * events end without the run's end): the model's word, and, the runner gone, the instances a
 * request of its last run has no answer from (on its way only while that runner lives). A report
 * of a runner killed mid-commit said "UNFINISHED" with no word of the commit (a review).
 */
export function commitInDoubtFor(
  m: Pick<CutoverModel, "commits" | "commitRequested" | "cutover">,
  runnerGone: boolean,
): CutoverModel["cutover"]["commitInDoubt"] {
  if (m.cutover.committed) return undefined;
  const had = m.cutover.commitInDoubt;
  const r = syncCommits(m).requested;
  const pending =
    runnerGone && r !== undefined
      ? Object.entries(r.answers).flatMap(([label, a]) => (a === "pending" ? [label] : []))
      : [];
  if (pending.length === 0) return had;
  return { at: had?.at ?? r!.at, instances: [...new Set([...(had?.instances ?? []), ...pending])] };
}

/**
 * A commit of this cutover on record: a fan-out, a request, a run that said it committed, or a run
 * that continues the cutover from what an earlier journal carried (its commit is there). A fleet
 * read COMMITTED without one is an earlier sync's, or one sent by hand: the verdict is not this
 * cutover's to give (src/steps/kit/earned.ts `verificationShown`), and readers say whose it is not.
 */
export function commitOnRecord(m: {
  runs: readonly Pick<ModelRun, "committed" | "continues">[];
  commits: readonly unknown[];
  commitRequested?: unknown;
}): boolean {
  return (
    m.commits.length > 0 ||
    m.commitRequested !== undefined ||
    m.runs.some((r) => r.committed === true || r.continues === true)
  );
}

/**
 * A run said at its end that the sync that runs now was committed. A run's `committed` is the sync
 * that ran at its end: one that ended before the last reverse that took effect said the sync before.
 * Every run of the cutover counts here, one a later run counted nothing from too (a `--from` run of
 * an edited runbook): a commit takes effect on the fleet whatever a later run counts, and "not
 * committed" read on the bridge says writes may go back on the source, which would lose them. (The
 * verification is the other way: a run that counts nothing of it is not verified, `#verified`.)
 */
export function runsCommitted(runs: readonly ModelRun[], reversed: { at: number } | undefined): boolean {
  return runs.some((r) => r.committed === true && (reversed === undefined || (r.finishedAt ?? 0) > reversed.at));
}

/**
 * The commits of the sync that runs now: the fan-outs after the last reverse that took effect, and
 * the requests of one journaled after them (a commit on its way when its runner died). Before it,
 * they were the other sync's.
 */
export function syncCommits(m: Pick<CutoverModel, "commits" | "commitRequested" | "cutover">): {
  commits: CutoverModel["commits"];
  requested?: NonNullable<CutoverModel["commitRequested"]>;
} {
  const since = m.cutover.reversed?.at ?? -Infinity;
  const commits = m.commits.filter((c) => c.at > since);
  const last = commits.at(-1);
  const r = m.commitRequested;
  return { commits, ...(r && r.at > since && (!last || r.at > last.at) ? { requested: r } : {}) };
}

/** Each instance's answer to the last commit's requests, its latest send's (`commitRequested.answers`). */
function commitAnswers(
  answers: ReadonlyMap<number, { label: string; answered: Answer | "pending" }>,
): Record<string, Answer | "pending"> {
  const out: Record<string, Answer | "pending"> = {};
  for (const a of answers.values()) out[a.label] = a.answered;
  return out;
}
