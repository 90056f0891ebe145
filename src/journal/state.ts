/**
 * What a journal says happened, for `--resume`: which steps started and ended, which commands
 * were sent and how they were answered, whether writes were stopped, which hooks ran.
 *
 * Strict where a guess could be dangerous: the header must be there, and a corrupt line in the
 * middle is an error (file:line), because the lines after it would be read without knowing what
 * it held. Only the last line may be cut short (a crash while writing it): nothing after it was
 * ever confirmed, and the writer wrote it before acting on it, so dropping it loses at most the
 * record of a command whose effect the live fleet then shows. A resumed journal closes such a
 * fragment and says so in its `journal.resumed` marker (`truncatedLine`), which the reader accepts.
 */
import { ExitCode, UserError } from "../errors.js";
import type { InstanceRef, Outcome, ServiceRefusal } from "../events.js";
import { commandOfPath, isCommandOperation, type CommandOperation } from "../api/commands.js";
import { JOURNAL_EXTENSION, JOURNAL_FORMAT_VERSION, isObject } from "./format.js";
import { createChainChecker } from "./chain.js";
import { ioError } from "./io-errors.js";
import { chooseJournal, journalLines, type JournalChoice, type JournalLine } from "./read.js";
import { verifierJournal } from "./verifier.js";
import { DistrustedJournal } from "./witness.js";
import { hookCallFold, type HookCall } from "./hook-calls.js";
import type { VerifierMemory } from "../api/verifier-memory.js";

export type { HookCall } from "./hook-calls.js";

/** The commands a journal records (the service's, from src/api/commands.ts). */
export type CommandOp = CommandOperation;
/** ok: accepted; error: refused by the service or never sent (it did not take effect); unknown: no usable answer. */
export type Answer = "ok" | "error" | "unknown";

export interface JournalStep {
  index: number;
  id: string;
  kind: string;
  started: boolean;
  /** The latest outcome; undefined when the step started and never ended (crash). */
  finished?: Outcome;
  /** Skipped by its `when` (false for that run's vars): a run with other vars would run it. */
  skippedByWhen?: true;
  /** The variable its `when` names whole, as its run journaled it (`run.started.steps`; earlier runners did not). */
  when?: string;
}

export interface InstanceAnswer {
  /** `instanceKey(ref)`: the instance's name, else its place in the list (`#2`). */
  instance: string;
  /** Best evidence over every send of this command to this instance: ok > unknown > error. */
  answered: Answer;
  /** The last error text, when there was one. */
  error?: string;
  /**
   * The service's refusal of a send that was no repeat of one that may have reached it (none before
   * it in that run had an unknown answer): what the no-errors interlock counts, as the run's own
   * memory does (src/steps/kit/fleet-ops.ts: a refused repeat only says the first took effect).
   * Kept when a later send is accepted or its answer lost: `error` is then that send's.
   */
  refused?: string;
}

export interface SentCommand {
  op: CommandOp;
  /** The step that sent it (-1 if none was running). */
  stepIndex: number;
  instances: string[];
  /** ok: every instance accepted; unknown: some instance gave no usable answer; error: otherwise. */
  answered: Answer;
  perInstance: InstanceAnswer[];
  /**
   * A commit its step let through past a forced `writes-stopped` interlock (the step's `decision`
   * of kind `force` before its requests): sent with the application's writes not known stopped.
   */
  writesForced?: true;
  /**
   * Recorded by an earlier journal of the cutover, carried by the `--from` run that wrote this one
   * (`run.started.carried.commands`); `from`: that journal (`run.started.carried.from`), so that a
   * reader names the run that sent it, not this one.
   */
  carried?: { from?: string };
}

export interface HookRun {
  stepIndex: number;
  id: string;
  use: string;
  /** undefined: started, never finished. */
  ok?: boolean;
  /** Its undo ran and succeeded. The undo itself is the runbook's: `runbook.steps[stepIndex]`. */
  undone: boolean;
  /** Its undo started (whatever became of it): what the hook did may have been reverted. */
  undoStarted?: boolean;
  /**
   * Its step has no runbook `undo:`, and an `--abort` handed its undo to a person (a `decision`
   * of kind `undo`, check `by-hand`): for a write stop, writes may be back on from then on.
   */
  byHand?: true;
  /**
   * An `--abort` run began after it while it was not undone, and did not journal that it kept writes
   * stopped (the fleet or the journal ruled the undo out): the abort undoes it or hands it to a
   * person (its step has no `undo:`), and what it did may be missing from the journal (the abort
   * cut off, or its journal failed while the operator was still told to do it by hand): its effect
   * may have been reverted, unless a commit of its sync was sent (the readers judge that).
   */
  abortAfter?: true;
  /** The variables in effect in the run that called it (its `run.started.vars`): absent in older journals. */
  vars?: Readonly<Record<string, string | number | boolean>>;
}

export interface JournalSegment {
  /** `opened` for the first writer, `resumed` for each resume. */
  kind: "opened" | "resumed";
  pid: number;
  host: string;
  at: number;
  hash: string;
  /** 1-based line of its header or marker. */
  line: number;
}

export interface JournalState {
  file: string;
  runbook: string;
  /** The runbook hash of the latest writer (a resume with a changed runbook records the new one). */
  hash: string;
  steps: JournalStep[];
  commandsSent: SentCommand[];
  /** A stopWrites step ended ok, and neither its undo nor a later reverse undid it. */
  stopWritesSucceeded: boolean;
  /**
   * A commit an earlier journal of the cutover recorded, as the `--from` run that wrote this one
   * counted it (`run.started.carried`): before every command of this journal.
   */
  carriedCommit?: { sent: boolean; accepted: boolean; writesForced?: true };
  /**
   * The refusals the no-errors interlock counts that an earlier journal of the cutover recorded,
   * as the `--from` run that wrote this one counted them (`run.started.carried.refusals`).
   */
  carriedRefusals?: ServiceRefusal[];
  /** Hooks that ran (not undo calls), in order. */
  hooksRan: HookRun[];
  /** Every hook and undo call with a token (journals since orphan tracking), in order. */
  hookCalls: HookCall[];
  /** What the run asked the migration verifier (src/journal/verifier.ts); absent: nothing. */
  verifier?: VerifierMemory;
  lastSeq: number;
  /** The last run.finished, if the last writer ended cleanly. */
  /** `to`: the run stopped at this `--to` step before the runbook's end (its cutover goes on). */
  finished?: { outcome: Outcome; committed: boolean; at: number; message?: string; aborted?: true; to?: string };
  segments: JournalSegment[];
  /**
   * The values the cutover ran with, as the last run that could run steps (not an `--abort`, but
   * one whose fleet moved under `--allow-changed-runbook`, src/run/abort.ts) said them, and the names `--var` set (`given`): its `run.started.cutoverVars` and `cutoverGiven`
   * where it wrote them (a `--resume`, a `--from` that continues the cutover: the earlier values of
   * the variables its steps do not read kept), else its `vars` and `given`.
   */
  vars?: Readonly<Record<string, string | number | boolean>>;
  given?: readonly string[];
  /** The instances of the last `run.started`, in order: key and redacted URL (absent in a journal cut before it). */
  instances?: { key: string; url: string }[];
  warnings: string[];
}

/**
 * How a journal and `--resume` name an instance: its name, else its place in the runbook's list
 * (`#2`). Never its URL: a URL whose host or password comes from `${env.*}` is journaled redacted
 * (`http://***:27182`) while the live fleet knows it whole, so a URL key could never match, and
 * two redacted URLs can look alike. Whether an unnamed instance is still the same one is checked
 * against the journal's `run.started` list of (redacted) URLs (`JournalState.instances`).
 */
export function instanceKey(ref: Pick<InstanceRef, "name" | "index">): string {
  return ref.name ?? `#${ref.index + 1}`;
}

/**
 * What one `response.received` says of its command: ok (accepted), error (refused, or never
 * sent: it did not take effect) or unknown (no usable answer: it may have), with the error text.
 */
export function classifyAnswer(e: Record<string, unknown>): { answered: Answer; error?: string } {
  const error = typeof e.error === "string" ? e.error : undefined;
  const withError = (a: Answer): { answered: Answer; error?: string } =>
    error === undefined ? { answered: a } : { answered: a, error };
  if (e.ok === true) return { answered: "ok" };
  // an explicit kind, if the runner records one, beats reading the message
  if (e.errorKind === "service" || e.errorKind === "not-sent") return withError("error");
  if (e.errorKind === "transport") return withError("unknown");
  if (isObject(e.body) && e.body.success === false) return withError("error");
  // Stryker disable next-line StringLiteral: equivalent: no error text is any text the two patterns below do not match
  const text = error ?? "";
  // ServiceError: "<url>: <op> refused: …" (the service answered success: false)
  if (/: (?:start|commit|pause|resume|reverse) refused: /.test(text)) return withError("error");
  // TransportError "connect": never written to a socket, so the service cannot have acted on it
  if (/: (?:start|commit|pause|resume|reverse) failed: cannot (?:connect|send)\b/.test(text)) return withError("error");
  return withError("unknown");
}

const isAnswer = (v: unknown): v is Answer => v === "ok" || v === "error" || v === "unknown";

/** Answers from the least to the most evidence that a command took effect. */
const BY_RANK: readonly Answer[] = ["error", "unknown", "ok"];

interface Building {
  cmd: Omit<SentCommand, "answered" | "perInstance" | "instances">;
  /** per instance: answers of each send (undefined = no answer yet). */
  sends: Map<string, ({ answered: Answer; error?: string } | undefined)[]>;
  /** per instance: the run (its `run.started`'s place in the journal) of each send. */
  runs: Map<string, number[]>;
}

/**
 * A refusal of one instance's sends that its run's own memory counted: refused, and no send before
 * it in that run had an unknown answer (a refused repeat of a send that may have reached it says
 * that one took effect). Over every run: a refusal a later run's send took back, or whose answer
 * that send lost, still counts (a plain --resume after a lost answer committed what the run before
 * refused, a reread).
 */
function refusalOf(
  answers: readonly ({ answered: Answer; error?: string } | undefined)[],
  runs: readonly number[],
): string | undefined {
  let doubtIn: number | undefined;
  for (const [k, a] of answers.entries()) {
    if (a === undefined || a.answered === "unknown") doubtIn = runs[k];
    // an accepted answer carries no error text: a refusal's is the service's words
    else if (a.error?.includes(" refused: ") === true && doubtIn !== runs[k]) return a.error;
  }
  return undefined;
}

function finish(b: Building): SentCommand {
  const perInstance: InstanceAnswer[] = [];
  for (const [instance, answers] of b.sends) {
    // every instance here was sent the command at least once; a send without an answer is unknown
    const best = BY_RANK[Math.max(...answers.map((a) => BY_RANK.indexOf(a?.answered ?? "unknown")))]!;
    let error: string | undefined;
    for (const a of answers) if (a?.error !== undefined) error = a.error;
    // Stryker disable next-line ArrayDeclaration: equivalent: every instance's sends have their runs set beside them
    const refused = refusalOf(answers, b.runs.get(instance) ?? []);
    perInstance.push({
      instance,
      answered: best,
      ...(error !== undefined ? { error } : {}),
      ...(refused !== undefined ? { refused } : {}),
    });
  }
  const all = (a: Answer): boolean => perInstance.length > 0 && perInstance.every((p) => p.answered === a);
  const answered: Answer = all("ok")
    ? "ok"
    : perInstance.some((p) => p.answered === "unknown") || perInstance.length === 0
      ? "unknown"
      : "error";
  return { ...b.cmd, instances: perInstance.map((p) => p.instance), answered, perInstance };
}

/** The answer of a request whose journal line was never witnessed: it never left. */
const NEVER_LEFT = {
  answered: "error",
  error:
    "never sent: its journal line was not witnessed (the run ended, killed or its journal failing, before the line was durable), and a request leaves only once it is",
} as const;

/**
 * What the reader must know of a step kind, by its name in the journal: handed down by the step
 * kinds (`traitsOf`, src/steps/index.ts), which sit above the journal (docs/ARCHITECTURE.md).
 */
export type KindTraits = (kind: string | undefined) => {
  readonly opensWriteStop: boolean;
  readonly command: CommandOp | undefined;
};

/**
 * Reads a journal into what resume needs. Throws a UserError (exit 2) for anything it cannot read
 * safely. `witnessedSeq`: the seq its witness holds (witness.ts); a request line of the last writer
 * past it never left, as a line past the `witnessedSeq` a resume marker records never left for the
 * writer before that marker (journal.ts writes a request's line, fsyncs it and witnesses it before
 * the request leaves).
 *
 * `onLine`: handed every line as it is read (runbook-journal.ts checks the witness and feeds the
 * read model in this one pass); what the journal says is judged here alone, and a journal refused
 * here is refused whatever the caller made of its lines.
 */
export async function readJournalState(
  file: string,
  traits: KindTraits,
  opts: { witnessedSeq?: number; onLine?: (line: JournalLine) => void } = {},
): Promise<JournalState> {
  // without a hint of its own: edited or damaged, its way on the caller's, which knows the runbook
  const refuse = (line: number | undefined, what: string, hint?: string): UserError => {
    const message = `${file}${line === undefined ? "" : `:${line}`}: ${what}`;
    return hint === undefined
      ? new DistrustedJournal(
          message,
          file,
          "a journal is written by syncbook only; if it was edited or damaged, do not resume from it",
        )
      : new UserError(message, { exitCode: ExitCode.usage, hint });
  };

  const warnings: string[] = [];
  const steps = new Map<number, JournalStep>();
  const commands: Building[] = [];
  // request id → where its answer goes (the sends of one command to one instance)
  const requests = new Map<unknown, { sends: ({ answered: Answer; error?: string } | undefined)[]; slot: number }>();
  const hooks: HookRun[] = [];
  const hookCalls = hookCallFold(file);
  /**
   * The broadcast whose request lines are being read ([k, n] on each, src/fleet/fleet.ts): no
   * request of it left before its last line was written, so one cut short never left at all.
   */
  let fan: { n: number; seen: number; sends: { answered: Answer; error?: string }[][] } | undefined;
  /** The current writer's request lines, until its end says how far it was witnessed. */
  let unwitnessed: { seq: number; sends: ({ answered: Answer; error?: string } | undefined)[]; slot: number }[] = [];
  const witnessedTo = (bound: unknown): void => {
    if (typeof bound === "number")
      for (const r of unwitnessed)
        if (r.seq > bound && r.sends[r.slot] === undefined) r.sends[r.slot] = { ...NEVER_LEFT };
    unwitnessed = [];
  };
  const closeFan = (): void => {
    if (fan && fan.seen < fan.n) {
      warnings.push(
        `a fan-out of ${fan.n} request(s) was cut off after ${fan.seen} of its journal lines: none of it left (requests leave only once every line is written)`,
      );
      for (const list of fan.sends)
        list[list.length - 1] = {
          answered: "error",
          error: "never sent: the runner stopped while journaling the fan-out, before any request left",
        };
    }
    fan = undefined;
  };
  const segments: JournalSegment[] = [];
  const verifier = verifierJournal();
  // Stryker disable next-line ArrayDeclaration: equivalent: header() sets it to [] at the first line, before any event is applied
  let running: number[] = [];
  // Stryker disable next-line StringLiteral: equivalent: header() sets it at the first line; it is read only after that
  let runbook = "";
  // Stryker disable next-line StringLiteral: equivalent: header() sets it at the first line; it is read only after that
  let hash = "";
  let lastSeq = 0;
  /** The runs begun so far (`run.started` lines): which run each send was made in. */
  let runsSeen = 0;
  let stopWrites = false;
  /** The events are an `--abort` run's (its `run.started` said so). */
  let inAbort = false;
  let carriedCommit: JournalState["carriedCommit"];
  const carriedRefusals: ServiceRefusal[] = [];
  /** The step whose `writes-stopped` interlock this writer forced (a step runs once per run): a commit it sends is `writesForced`. */
  let commitForced: number | undefined;
  let finished: JournalState["finished"];
  let instances: JournalState["instances"];
  let vars: JournalState["vars"];
  let given: JournalState["given"];
  /** The values of the run that calls hooks now (`run.started.vars`): what its hooks' calls are made of. */
  let runVars: JournalState["vars"];
  /** `commit.sent` names instances by label (name, else URL): map those back to keys. */
  const keyOfLabel = new Map<string, string>();
  let lineNo = 0;
  let seenHeader = false;
  const chain = createChainChecker();
  const tampered = (line: number, why: string): UserError =>
    new DistrustedJournal(
      `${file}:${line}: ${why}`,
      file,
      "the journal was changed after syncbook wrote it, so what it says about the run cannot be trusted: do not resume from it",
    );
  /** A line that did not parse: fatal unless it is the last one or a resume marker vouches for it. */
  let bad: { line: number; why: string } | undefined;

  const stepOf = (index: number, id: string, kind = ""): JournalStep => {
    let s = steps.get(index);
    if (!s) {
      s = { index, id, kind, started: false };
      steps.set(index, s);
    } else if (s.id !== id) {
      warnings.push(
        `step ${index + 1} is "${s.id}" in one part of the journal and "${id}" in another; the later is kept`,
      );
      s.id = id;
    }
    if (kind) s.kind = kind;
    return s;
  };

  const header = (v: Record<string, unknown>, line: number): void => {
    if (typeof v.version !== "number" || typeof v.runbook !== "string" || typeof v.hash !== "string")
      throw refuse(line, `the ${String(v.type)} line lacks version, runbook or hash`);
    if (v.version > JOURNAL_FORMAT_VERSION) {
      throw refuse(
        line,
        `written in journal format ${v.version}; this syncbook reads format ${JOURNAL_FORMAT_VERSION}`,
        "resume with the syncbook version that wrote the journal (or a newer one)",
      );
    }
    if (seenHeader && v.runbook !== runbook)
      throw refuse(line, `a resume of runbook "${v.runbook}" in the journal of "${runbook}"`);
    runbook = v.runbook;
    hash = v.hash;
    segments.push({
      kind: v.type === "journal.opened" ? "opened" : "resumed",
      pid: Number(v.pid),
      host: String(v.host),
      at: Number(v.at),
      hash: v.hash,
      line,
    });
    hookCalls.writer(v);
    // a new writer: the previous one's open steps were cut off, and its request ids are its own
    closeFan();
    witnessedTo(v.witnessedSeq);
    running = [];
    commitForced = undefined;
    requests.clear();
    verifier.newWriter();
  };

  const apply = (e: Record<string, unknown> & { type: string; seq: number; at: number }, line: number): void => {
    lastSeq = Math.max(lastSeq, e.seq);
    const place = e.type === "request.sent" && Array.isArray(e.fanout) ? (e.fanout as unknown[]) : undefined;
    if (fan && !(place && place[0] === fan.seen && place[1] === fan.n)) closeFan();
    verifier.apply(e);
    switch (e.type) {
      case "journal.opened":
        throw refuse(line, "a second journal header: two journals were joined into one file");
      case "journal.resumed":
        header(e, line);
        finished = undefined;
        return;
      case "run.started":
        // Stryker disable next-line UpdateOperator: equivalent: only whether two sends share a run is read
        runsSeen++;
        if (Array.isArray(e.instances)) {
          instances = [];
          keyOfLabel.clear();
          for (const r of e.instances as unknown[]) {
            if (!isObject(r) || typeof r.index !== "number" || typeof r.url !== "string") continue;
            const ref = r as unknown as InstanceRef;
            instances.push({ key: instanceKey(ref), url: ref.url });
            keyOfLabel.set(ref.name ?? ref.url, instanceKey(ref));
          }
        }
        // an --abort undoes every hook not undone so far, or hands it to a person, unless the fleet
        // rules it out (a keep-off decision, below): its end may be missing (killed, or its journal
        // failed while it still spoke). The readers judge the mark against the sync that runs now
        // (src/run/earlier.ts `stopAbortCut`, src/run/resume-decide.ts): a stop it may have undone
        inAbort = e.abort === true;
        if (inAbort) for (const h of hooks) if (!h.undone) h.abortAfter = true;
        // the cutover's values from this run on; an --abort's only where it says them (taken as
        // the cutover's, a --resume after it went on with the runbook's defaults)
        ({ runVars, vars, given } = cutoverValuesOfStarted(e) ?? { runVars, vars, given });
        if (Array.isArray(e.steps))
          for (const s of e.steps as unknown[])
            if (isObject(s) && typeof s.index === "number" && typeof s.id === "string") {
              const step = stepOf(s.index, s.id, typeof s.kind === "string" ? s.kind : "");
              // what a run decided it with (a later run's text without it decided nothing of it)
              if (typeof s.when === "string") step.when = s.when;
            }
        // the commit a --from run counted from the cutover's earlier journal: this journal's own from
        // here (a commit is never undone). Not its write stop: that stop's hook, and its undo (an
        // --abort of that journal), live in the other journal, which this one cannot see
        if (isObject(e.carried)) {
          const accepted = e.carried.commitAccepted === true;
          if (accepted || e.carried.commitSent === true)
            carriedCommit = {
              sent: true,
              accepted,
              ...(e.carried.commitWritesForced === true ? { writesForced: true } : {}),
            };
          // Stryker disable next-line ArrayDeclaration: equivalent: an element of a list that is not one is no object, passed over below
          for (const r of Array.isArray(e.carried.refusals) ? (e.carried.refusals as unknown[]) : [])
            if (
              isObject(r) &&
              typeof r.instance === "string" &&
              typeof r.op === "string" &&
              typeof r.error === "string"
            )
              carriedRefusals.push({ instance: r.instance, op: r.op, error: r.error });
          // the earlier journal's commands, per instance, before every command of this one
          const from = typeof e.carried.from === "string" ? { from: e.carried.from } : {};
          for (const c of Array.isArray(e.carried.commands) ? (e.carried.commands as unknown[]) : []) {
            if (!isObject(c) || typeof c.op !== "string" || !isCommandOperation(c.op)) continue;
            if (typeof c.stepIndex !== "number" || !Array.isArray(c.answers)) continue;
            const sends = new Map<string, { answered: Answer }[]>();
            // the other journal's runs: none of this one's
            const runs = new Map<string, number[]>();
            for (const a of c.answers as unknown[])
              if (isObject(a) && typeof a.instance === "string" && isAnswer(a.answered)) {
                sends.set(a.instance, [{ answered: a.answered }]);
                // Stryker disable next-line ArrayDeclaration,UnaryOperator: equivalent: a carried answer has no error text (no refusal), and its run is none of this journal's
                runs.set(a.instance, [-1]);
              }
            commands.push({ cmd: { op: c.op, stepIndex: c.stepIndex, carried: { ...from } }, sends, runs });
          }
        }
        return;
      case "step.started": {
        const s = stepOf(Number(e.index), String(e.id), typeof e.kind === "string" ? e.kind : "");
        s.started = true;
        delete s.finished;
        delete s.skippedByWhen;
        running.push(s.index);
        return;
      }
      case "step.finished":
      case "step.skipped": {
        const s = stepOf(Number(e.index), String(e.id));
        if (e.type === "step.skipped") {
          // past the run's --to: not run, so not done (a later --resume runs it); a journal of an
          // older syncbook says so only in its words
          if (e.pastTo === true || e.reason === "after --to") return;
          // a step an earlier run of this journal ended, skipped by a resume as done: its outcome
          // stands. Read as "skipped", a reverse that ended ok was lost to the next resume: it
          // counted the commit before it as the reversed sync's, and ran no write stop again
          if (e.adopted !== true && s.finished !== undefined) return;
        }
        // an adopted command took effect (the fleet showed it): done, as a step that ended ok
        const outcome = e.type === "step.skipped" ? (e.adopted === true ? "ok" : "skipped") : (e.outcome as Outcome);
        s.finished = outcome;
        if (outcome === "skipped" && e.reason === "when: false") s.skippedByWhen = true;
        const k = running.lastIndexOf(s.index);
        if (k >= 0) running.splice(k, 1);
        if (outcome === "ok" && traits(s.kind).opensWriteStop) stopWrites = true;
        // the sync runs the other way after a reverse: writes must be stopped again before the next commit
        if (outcome === "ok" && traits(s.kind).command === "reverse") stopWrites = false;
        return;
      }
      case "request.sent": {
        if (e.target !== "service" || String(e.method).toUpperCase() !== "POST" || typeof e.path !== "string") return;
        const op = commandOfPath(e.path);
        if (!op) return;
        const stepIndex = running[running.length - 1] ?? -1;
        // a reverse that may reach an instance ends the verification so far (src/steps/lifecycle.ts, the same)
        if (op === "reverse") verifier.reversed(steps.get(stepIndex)?.id ?? `step ${stepIndex + 1}`);
        let b = commands.find((c) => c.cmd.op === op && c.cmd.stepIndex === stepIndex);
        if (!b) {
          b = { cmd: { op, stepIndex }, sends: new Map(), runs: new Map() };
          commands.push(b);
        }
        if (op === "commit" && commitForced === stepIndex) b.cmd.writesForced = true;
        const instance =
          isObject(e.instance) && typeof e.instance.index === "number"
            ? instanceKey(e.instance as unknown as InstanceRef)
            : "?";
        const list = b.sends.get(instance) ?? [];
        list.push(undefined);
        b.sends.set(instance, list);
        b.runs.set(instance, [...(b.runs.get(instance) ?? []), runsSeen]);
        if (place && typeof place[1] === "number" && place[1] > 1) {
          if (place[0] === 0) fan = { n: place[1], seen: 0, sends: [] };
          if (fan) {
            fan.seen++;
            fan.sends.push(list as { answered: Answer; error?: string }[]);
            if (fan.seen === fan.n) fan = undefined;
          }
        }
        if (typeof e.id === "number") requests.set(e.id, { sends: list, slot: list.length - 1 });
        unwitnessed.push({ seq: e.seq, sends: list, slot: list.length - 1 });
        return;
      }
      case "response.received": {
        // only numeric ids were stored
        const r = requests.get(e.id);
        if (r) r.sends[r.slot] = classifyAnswer(e);
        return;
      }
      case "commit.sent": {
        const index = Number(e.index);
        // the runner's own record of a commit broadcast: a commit with no request lines is still a commit sent
        if (!commands.some((c) => c.cmd.op === "commit" && c.cmd.stepIndex === index)) {
          const sends = new Map<string, undefined[]>();
          const runs = new Map<string, number[]>();
          for (const i of Array.isArray(e.instances) ? e.instances : []) {
            const key = keyOfLabel.get(String(i)) ?? String(i);
            sends.set(key, [undefined]);
            // Stryker disable next-line ArrayDeclaration: equivalent: commit.sent follows its run's requests (src/steps/commit.ts), so only a later run's sends follow this one
            runs.set(key, [runsSeen]);
          }
          const forced = commitForced === index ? { writesForced: true as const } : {};
          commands.push({ cmd: { op: "commit", stepIndex: index, ...forced }, sends, runs });
        }
        return;
      }
      case "hook.process":
        hookCalls.apply(e);
        return;
      case "decision":
        // a step's writes-stopped interlock forced: a commit it sends goes with writes not known
        // stopped (src/steps/commit.ts `commitWritesForced`), and no verify may count it as writes
        // stopped, after a restart too
        if (e.kind === "force" && e.check === "writes-stopped") commitForced = Number(e.index);
        // the abort kept writes stopped on purpose (the fleet or the journal ruled the undo out):
        // nothing it marked was undone or handed over. Only the abort's own: a later run's unwind
        // that keeps writes off says nothing of what the abort did
        if (inAbort && e.kind === "undo" && e.ok === false && (e.check === "fleet-state" || e.check === "journal"))
          for (const h of hooks) delete h.abortAfter;
        // an --abort handed a hook's undo to a person (its step has no `undo:`): from here on its
        // effect may have been reverted by hand, whatever later runs end as (an outside review: a
        // resume cut off before it stopped writes again left the next resume counting the stop)
        if (e.kind === "undo" && e.check === "by-hand") {
          const index = Number(e.index);
          for (const h of hooks) if (h.stepIndex === index && !h.undone) h.byHand = true;
          if (traits(steps.get(index)?.kind).opensWriteStop) stopWrites = false;
        }
        return;
      case "hook.started":
        hookCalls.apply(e);
        if (e.undo !== true)
          hooks.push({
            stepIndex: Number(e.index),
            id: String(e.id),
            use: String(e.use),
            undone: false,
            ...(runVars ? { vars: runVars } : {}),
          });
        else {
          // an undo that started may have turned writes back on, whatever became of it (failed,
          // cut off by a crash): from here on writes are not known to be stopped
          for (const h of hooks) if (h.stepIndex === Number(e.index)) h.undoStarted = true;
          if (traits(steps.get(Number(e.index))?.kind).opensWriteStop) stopWrites = false;
        }
        return;
      case "hook.finished": {
        const index = Number(e.index);
        hookCalls.apply(e);
        if (e.undo === true) {
          if (e.ok !== true) return;
          for (const h of hooks) if (h.stepIndex === index) h.undone = true;
          if (traits(steps.get(index)?.kind).opensWriteStop) stopWrites = false;
          return;
        }
        for (let i = hooks.length - 1; i >= 0; i--) {
          const h = hooks[i]!;
          if (h.stepIndex === index && h.ok === undefined) {
            h.ok = e.ok === true;
            break;
          }
        }
        return;
      }
      case "run.finished":
        finished = {
          outcome: e.outcome as Outcome,
          committed: e.committed === true,
          at: e.at,
          ...(typeof e.message === "string" ? { message: e.message } : {}),
          // `--abort`: the operator called the cutover off (its outcome stays failed: --resume may go on later)
          ...(e.aborted === true ? { aborted: true as const } : {}),
          ...(typeof e.to === "string" ? { to: e.to } : {}),
        };
        return;
      // Stryker disable next-line ConditionalExpression: equivalent: an unknown type falls out of the switch, which is the end of apply
      default:
        return;
    }
  };

  try {
    for await (const line of journalLines(file)) {
      opts.onLine?.(line);
      const { text, value: v, why } = line;
      lineNo = line.lineNo;
      if (bad) {
        // only a resume marker that names this very line excuses it
        if (!why && isObject(v) && v.type === "journal.resumed" && v.truncatedLine === bad.line) {
          warnings.push(
            `line ${bad.line} was cut short by a crash (${bad.why}); the run was resumed after it (line ${lineNo}) and it is ignored`,
          );
          bad = undefined;
        } else {
          throw refuse(bad.line, `line ${bad.line} is ${bad.why}, and more lines follow it: the journal is corrupt`);
        }
      }
      if (why) {
        if (!seenHeader && text.includes("\u0000"))
          throw refuse(
            lineNo,
            "not a syncbook journal (binary data)",
            "pass the .jsonl journal of the run (see .syncbook/<runbook>/)",
          );
        bad = { line: lineNo, why };
        continue;
      }
      const e = v as Record<string, unknown> & { type: string; seq: number; at: number };
      const verdict = chain.check(lineNo, text, e.seq, e.type === "journal.opened" || e.type === "journal.resumed");
      // the header's own problems (not a journal, a newer format) say more than its chain would
      if (verdict.broken && seenHeader) throw tampered(lineNo, verdict.broken);
      if (!seenHeader) {
        if (e.type !== "journal.opened") {
          throw refuse(
            lineNo,
            `not a syncbook journal: the first line is a "${e.type}" event, not the journal.opened header`,
            "resume only from a journal syncbook wrote (its first line is the journal.opened header); a journal from an older syncbook cannot be resumed: check the fleet by hand and start a new run",
          );
        }
        header(e, lineNo);
        seenHeader = true;
        if (verdict.broken) throw tampered(lineNo, verdict.broken);
        if (!chain.chained) {
          // header() has required a numeric version
          const version = e.version as number;
          if (version >= 2)
            throw tampered(
              lineNo,
              `the header says journal format ${version}, which is chained, but it has no chain field`,
            );
          warnings.push(
            `written by an older syncbook (journal format ${version}, before journals were hash-chained): lines deleted or edited since cannot be detected`,
          );
        }
        continue;
      }
      apply(e, lineNo);
    }
  } catch (err) {
    if (err instanceof UserError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw refuse(
      undefined,
      `cannot read the journal: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : ((err as Error).message ?? String(err))}`,
      "pass a journal file (.syncbook/<runbook>/*.jsonl); findLatestJournal picks the newest",
    );
  }

  if (!seenHeader) {
    if (bad) {
      throw refuse(
        bad.line,
        `the journal's header line is cut short (${bad.why}): the run crashed before it recorded anything`,
        "the header is written before anything is sent, so that run sent no command; check the fleet, delete this file and start a new run",
      );
    }
    throw refuse(
      undefined,
      "the journal is empty",
      "the header is written before anything is sent, so that run sent no command; check the fleet, delete this file and start a new run",
    );
  }
  if (bad) {
    warnings.push(
      `the last line (${bad.line}) is cut short (${bad.why}): the run was interrupted while writing it; resuming from the ${lineNo - 1} lines before it (nothing after it was confirmed)`,
    );
  }

  closeFan();
  witnessedTo(opts.witnessedSeq);
  const state: JournalState = {
    file,
    runbook,
    hash,
    steps: [...steps.values()].sort((a, b) => a.index - b.index),
    commandsSent: commands.map(finish),
    stopWritesSucceeded: stopWrites,
    hooksRan: hooks,
    hookCalls: hookCalls.calls,
    verifier: verifier.state(),
    lastSeq,
    segments,
    warnings,
  };
  if (finished) state.finished = finished;
  if (instances) state.instances = instances;
  if (vars) state.vars = vars;
  if (given) state.given = given;
  if (carriedCommit) state.carriedCommit = carriedCommit;
  if (carriedRefusals.length) state.carriedRefusals = carriedRefusals;
  return state;
}

/**
 * The last reverse that took effect (its step ended ok, or a resume adopted it from the fleet):
 * its place among the journal's commands and its step. The sync runs the other way from it.
 */
export function lastReverse(state: JournalState): { at: number; stepIndex: number } | undefined {
  let found: { at: number; stepIndex: number } | undefined;
  state.commandsSent.forEach((c, i) => {
    if (c.op === "reverse" && state.steps[c.stepIndex]?.finished === "ok") found = { at: i, stepIndex: c.stepIndex };
  });
  return found;
}

/**
 * Every refusal the commit's no-errors interlock counts that a journal records, of the sync that
 * runs now: those an earlier journal's `--from` run carried, then each command's per instance
 * (`InstanceAnswer.refused`: one the instance took back later, a split start completed, counts
 * too), none before the last reverse that took effect (a new sync, as the run's own memory forgets
 * them at its reverse, src/steps/lifecycle.ts: counted, a forward commit's refusal, completed by
 * `--from commit --only`, refused the rollback's commit, a review). The one count of a `--resume`
 * (src/run/resume-decide.ts) and of a `--from` run that continues the cutover (src/run/earlier.ts
 * `fromJournal`), which carries it on: counted nothing, a split start completed by `--from start
 * --only` committed in that same run without `--force=no-errors`.
 */
export function refusalsCounted(state: JournalState): ServiceRefusal[] {
  const since = lastReverse(state)?.at;
  return [
    ...(since === undefined ? (state.carriedRefusals ?? []) : []),
    ...state.commandsSent
      .slice((since ?? -1) + 1)
      .flatMap((c) =>
        c.perInstance.flatMap((p) =>
          p.refused !== undefined ? [{ instance: p.instance, op: c.op, error: p.refused }] : [],
        ),
      ),
  ];
}

/**
 * The values a `run.started` line says the cutover runs with from its run on (`vars`, and `given`,
 * the names `--var` set), and its run's own (`runVars`), as every reader of the journal takes them
 * (this state, the read model: src/model/fold.ts). None from an --abort that does not say them: it
 * runs no step, and its values (often none typed) are not those the cutover's steps ran with; one
 * that says the cutover's (`cutoverVars`: its fleet moved, `--allow-changed-runbook`,
 * src/run/abort.ts) makes them the cutover's from there. `cutoverVars` and `cutoverGiven`, where
 * said, are those its steps read from this run's and the others as the cutover ran with them.
 */
export function cutoverValuesOfStarted(
  e: Record<string, unknown>,
): { runVars: JournalState["vars"]; vars: JournalState["vars"]; given: JournalState["given"] } | undefined {
  if (e.abort === true && !isObject(e.cutoverVars)) return undefined;
  const runVars = isObject(e.vars) ? scalars(e.vars) : undefined;
  const names = Array.isArray(e.cutoverGiven) ? e.cutoverGiven : e.given;
  return {
    runVars,
    vars: isObject(e.cutoverVars) ? scalars(e.cutoverVars) : runVars,
    given: Array.isArray(names) ? names.filter((g): g is string => typeof g === "string") : undefined,
  };
}

/** A journaled record's scalar values (a run's `vars`): anything else a line holds is not a variable's. */
function scalars(o: Record<string, unknown>): Record<string, string | number | boolean> {
  return Object.fromEntries(
    Object.entries(o).filter(
      (kv): kv is [string, string | number | boolean] =>
        typeof kv[1] === "string" || typeof kv[1] === "number" || typeof kv[1] === "boolean",
    ),
  );
}

/** The journal a resume continues (read.ts `chooseJournal`), and the newer ones it passed over. */
export async function findLatestJournal(dir: string): Promise<string> {
  return (await findResumeJournal(dir)).file;
}

export async function findResumeJournal(dir: string): Promise<{ file: string; skipped: string[] }> {
  const none = (why: string): UserError =>
    new UserError(`nothing to resume: ${why}`, {
      exitCode: ExitCode.usage,
      hint: "run without --resume to start a new run (its start interlock checks that the fleet is IDLE)",
    });
  let choice: JournalChoice;
  try {
    choice = await chooseJournal(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw none(`no journal folder ${dir}`);
    // a file where the folder belongs, a folder this user cannot read: said with the fix (io-errors.ts)
    throw ioError(dir, "read the journal folder", err);
  }
  if (!choice.file) throw none(`${dir} holds no journal (*${JOURNAL_EXTENSION})`);
  if (choice.ambiguous)
    throw new UserError(
      `cannot choose the journal to resume: ${choice.ambiguous.length} journals in ${dir} hold an unfinished run and none says it came after the others: ${choice.ambiguous.join(", ")}`,
      {
        // a refusal, as an interlock's: nothing was sent, and naming the journal makes it safe to go on
        exitCode: ExitCode.interlock,
        hint: "name the one to continue with --resume <file> (file times are not trusted: a clock step or a copy changes them)",
      },
    );
  return { file: choice.file, skipped: choice.skipped };
}
