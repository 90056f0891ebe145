/**
 * The ways on that the run's end, `syncbook status` (human and `--json`) and the report offer: each
 * a `syncbook run <runbook>` with its arguments, and what that run does. Data first, words from it:
 * `status --json` carries the same commands its human form prints. And the runbook as every
 * command syncbook offers names it (`runbookArgs`): its file, and the `--journal-dir` it was given.
 */

import { MASK } from "./redact.js";
import { shellCommand } from "./text.js";
import { varNamesIn } from "./runbook/interpolate.js";
import type { LoadedRunbook } from "./runbook/load.js";

/**
 * `syncbook lint <file>` as an operator pastes it (the path quoted where the shell needs it): what
 * every "does not load" hint offers.
 */
export function lintCommand(file: string): string {
  return shellCommand(["syncbook", "lint", file]);
}

/**
 * A runbook as a command names it: its file, and the `--journal-dir` the command that offers the
 * next one was given, as typed (`LoadedRunbook.journalDir`; the journal's `run.started.journalDir`
 * for a reader without the command's flags).
 */
export interface RunbookRef {
  file: string;
  journalDir?: string | undefined;
}

/**
 * The runbook as a command's argument, the one home of it: its file, then `--journal-dir <dir>`
 * when one was given (as typed: the command offered is pasted in the same shell, so a relative
 * path stays relative, and no symlink is resolved). Every `syncbook run|status|watch <runbook> …`
 * syncbook offers begins with these: one without the `--journal-dir` its run was given reads the
 * default folder beside the runbook, finds no journal, and what the journal would refuse (a
 * `--from commit` after a commit was sent, src/run/earlier.ts `refuseSentAgain`) it does not.
 */
export function runbookArgs(rb: RunbookRef): string[] {
  return rb.journalDir === undefined ? [rb.file] : [rb.file, "--journal-dir", rb.journalDir];
}

/** Said in place of a `--journal-dir` whose path holds a secret (`journalDirShown`). */
export const JOURNAL_DIR_UNSHOWN = "<the folder you gave --journal-dir>";

/**
 * `--journal-dir <dir>` as an offered command shows it (`""` without one): quoted for a shell, or,
 * when the path holds a secret (redacted by `redact`, or journaled redacted already),
 * `JOURNAL_DIR_UNSHOWN`. A masked path pasted is another folder, where no journal is found and no
 * check refuses what the run's journal would (an outside review: `/srv/***-journals`).
 */
function journalDirShown(rb: RunbookRef, redact: ((text: string) => string) | undefined): string {
  if (rb.journalDir === undefined) return "";
  const shown = redact ? redact(rb.journalDir) : rb.journalDir;
  return shown !== rb.journalDir || shown.includes(MASK)
    ? `--journal-dir ${JOURNAL_DIR_UNSHOWN}`
    : shellCommand(["--journal-dir", rb.journalDir]);
}

/**
 * `runbookArgs`, then `more`, quoted for a shell (src/text.ts `shellCommand`) and redacted when
 * the runbook has a redactor: `rb.yaml --journal-dir /srv/journals`.
 */
export function runbookArg(
  rb: RunbookRef & { redact?: (text: string) => string },
  more: readonly string[] = [],
): string {
  const text = [shellCommand([rb.file]), journalDirShown(rb, rb.redact), more.length ? shellCommand(more) : ""]
    .filter((t) => t !== "")
    .join(" ");
  return rb.redact ? rb.redact(text) : text;
}

/**
 * The runbook as a command's argument (`runbookArg`), with the `--var` values among `vars` (`k=v`)
 * of the runbook's variables, declared, set or used (a `when` reads them, a hook's call is made of
 * them: a way on with others runs other steps, or undoes somewhere else), quoted for a shell and
 * redacted: `rb.yaml --journal-dir j --var rollback=true`.
 */
export function runTarget(loaded: LoadedRunbook, vars: readonly string[]): string {
  return runbookArg(
    loaded,
    ofRunbook(loaded, vars).flatMap((v) => ["--var", v]),
  );
}

/** The `name=value` values of variables the runbook declares or reads: a way on names no other. */
export function ofRunbook(loaded: LoadedRunbook, vars: readonly string[]): string[] {
  const names = new Set([...Object.keys(loaded.vars), ...varNamesIn(loaded.raw)]);
  return vars.filter((v) => names.has(v.slice(0, Math.max(0, v.indexOf("=")))));
}

/** What a run that goes on with a cutover knows of its values (src/run/assemble.ts `ResumePlan`). */
export interface CutoverValuesKnown {
  /** The values the cutover's `when`s were decided with (`decidedVars`). */
  decidedVars?: readonly string[];
  /** The values the cutover runs with once this run begins (`run.started.cutoverVars`, `cutoverGiven`). */
  cutoverValues?: { vars: Readonly<Record<string, string | number | boolean>>; given: readonly string[] };
}

/**
 * The `--var` values a way on after this run carries (`wayOnVars`): those its cutover's `when`s
 * were decided with, then the values the cutover runs with once this run began, else this run's
 * own. Made of this run's alone, a `--resume` typed without a `--var` its steps did not read, or a
 * `--from` that changed one under `--allow-changed-runbook`, offered a next run the check of the
 * cutover's values refused (an outside review).
 */
export function wayOnVarsAfter(loaded: LoadedRunbook, known: CutoverValuesKnown = {}): string[] {
  return wayOnVars(known.decidedVars ?? [], known.cutoverValues ?? loaded);
}

/**
 * The variables given with `--var` whose value holds a secret (journaled and printed as `***`):
 * `wayOnVarsAfter` leaves them out, and a way on run without them is refused, so the one who reads
 * it is told to give them again (an outside review: the `--resume` a run's end printed was refused).
 */
export function secretVarsLeftOut(loaded: LoadedRunbook, known: CutoverValuesKnown = {}): string[] {
  const run = known.cutoverValues ?? loaded;
  return (run.given ?? []).filter((name) => String(run.vars?.[name] ?? "").includes(MASK));
}

/**
 * The `--var` values of a way on that nothing checks against the cutover's: one that carries
 * `--allow-changed-runbook`, or starts a new cutover. `wayOnVarsAfter`'s, and each secret one kept
 * as it was journaled, `***` and all (`masked`): left out, it would be read at the runbook's
 * default, another fleet, which such a run accepts; pasted unedited, a masked value is refused by
 * `parseVars` before anything runs (src/cli/execute.ts: as a value, `***` was taken for the
 * cutover's masked secret by the checks of its values, an outside review).
 */
export function wayOnVarsKept(
  loaded: LoadedRunbook,
  known: CutoverValuesKnown = {},
): { vars: string[]; masked: boolean } {
  const left = secretVarsLeftOut(loaded, known);
  const run = known.cutoverValues ?? loaded;
  return {
    vars: [...wayOnVarsAfter(loaded, known), ...left.map((name) => `${name}=${String(run.vars?.[name])}`)],
    masked: left.length > 0,
  };
}

/**
 * A `--var` value as `syncbook run` reads it (src/cli/execute.ts `parseVars`): a number where the
 * number is the value typed (`5`, `-1.5`, `007`, `1e-7`), a boolean, a text in double quotes as
 * JSON reads it (`"007"`: the text 007, not the number 7), else the text as typed. A number the
 * text does not hold exactly stays text (`7e10238` is no Infinity, `12345678901234567890` no
 * rounded number, `12e3` no 12000): read as the number, the hook got another value, and the
 * journal kept Infinity as null, which no undo's check could compare (an outside review).
 */
export function varValue(text: string): string | number | boolean {
  const n = Number(text);
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) && Number.isFinite(n) && numberText(text) === String(n)) return n;
  if (text === "true" || text === "false") return text === "true";
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    try {
      const value: unknown = JSON.parse(text);
      // a NUL no process argument can carry: as typed
      if (typeof value === "string" && !value.includes("\0")) return value;
    } catch {
      // not JSON: the text as typed
    }
  }
  return text;
}

/**
 * A decimal as `String` writes its number: no leading zeros, no trailing zeros of a fraction, no
 * minus on a zero (`-007.50` → `-7.5`); an exponent form as typed, which `String` writes only for
 * the numbers it gives no decimal (`1e+21`, `1e-7`).
 */
function numberText(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return text;
  const int = m[2]!.replace(/^0+(?=\d)/, "");
  const frac = (m[3] ?? "").replace(/0+$/, "");
  return `${m[1] && (int !== "0" || frac) ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

/**
 * The text after `name=` of a `--var` that `varValue` reads back as `value`: the value as written
 * where it reads so, else a text in double quotes (`"007"`, `"true"`). Every value a runbook's
 * `vars:` can hold (text, finite number, boolean) is given back, so a way on that names a value
 * runs with it (an outside review: a text default `"007"` offered as `007` was read as the number 7,
 * and the offer could only say so).
 */
export function varText(value: string | number | boolean): string {
  const text = String(value);
  return varValue(text) === value ? text : JSON.stringify(value);
}

/** What a way on whose `--var` values hold one masked says (`wayOnVarsKept`), in its own words. */
export const MASKED_VAR_WORDS = `a --var shown with ${MASK} holds a secret: set each as that run did`;

/** Said after a way on whose `--var` values hold one masked (`wayOnVarsKept`). */
export const MASKED_VAR_NOTE = ` (${MASKED_VAR_WORDS})`;

/** The runbook as a way on after this run names it (`runTarget`, `wayOnVarsAfter`). */
export function wayOnTarget(loaded: LoadedRunbook, known: CutoverValuesKnown = {}): string {
  return runTarget(loaded, wayOnVarsAfter(loaded, known));
}

/**
 * An offer for a reader that names the runbook's file apart (`status --json`: `file`, then each
 * run's `args`): each run's arguments begin with the rest of `runbookArgs` (`--journal-dir <dir>`),
 * so that `syncbook run <file> <args>` is the whole command, and end with `tail` (the `--var`
 * values, `varArgs`). The same offer when there is neither.
 */
export function offerAfterFile(
  rb: RunbookRef & { redact?: (text: string) => string },
  offer: NextOffer,
  /** Or each run's own: a way on with `--allow-changed-runbook` names more values (src/run/status.ts). */
  tail: string | ((run: NextRun) => string) = "",
): NextOffer {
  const dir = journalDirShown(rb, rb.redact);
  const tailOf = typeof tail === "string" ? () => tail : tail;
  if (!dir && offer.runs.every((r) => !tailOf(r))) return offer;
  // one space between the parts: a run with no arguments of its own (a failed run's own command
  // again) has none to hold them apart
  const args = (r: NextRun): string => [dir, r.args, tailOf(r).trimStart()].filter((t) => t !== "").join(" ");
  return { ...offer, runs: offer.runs.map((r) => ({ ...r, args: args(r) })) };
}

/** One way on: the arguments after `syncbook run <runbook>`, and what that run does. */
export interface NextRun {
  args: string;
  does: string;
}

/** The offer: the runs (one, or one of several), and what is not offered, with why. */
export interface NextOffer {
  runs: NextRun[];
  notes?: string[];
}

/**
 * An offer in lines: "next:" over one run, "next, one of:" over several, each command and, indented
 * under it, what it does; its notes after.
 */
export function nextLines(file: string, offer: NextOffer): string[] {
  return [
    offer.runs.length === 1
      ? "next:"
      : offer.runs.length
        ? "next, one of:"
        : "next: no command of syncbook's, while this holds:",
    // (no arguments: the plain run, a failed run's own command again)
    ...offer.runs.flatMap((r) => [`  syncbook run ${file}${r.args ? ` ${r.args}` : ""}`, `      ${r.does}`]),
    ...(offer.notes ?? []).map((n) => `  (${n})`),
  ];
}

/**
 * After an undo of a stopWrites failed, `--abort` first: it retries the undo. `resumeAt` is the
 * step a `--resume` continues at, when known.
 */
export function nextAfterFailedUndo(
  step: { number: number; id: string },
  resumeAt?: { number: number; id: string },
): NextOffer {
  return {
    runs: [
      {
        args: "--abort",
        does: `retries the undos still owed, last first (step ${step.number} ${step.id}: turns writes back on) and calls the cutover off; nothing is sent to the sync service`,
      },
      {
        args: "--resume",
        // the write stop itself may be the step that failed: said once (an adversarial run read
        // "step 5 stop-writes runs again …, then step 5 stop-writes and on")
        does: `goes on with the cutover once what failed is fixed: step ${step.number} ${step.id} runs again (writes stay stopped)${resumeAt?.number === step.number ? "" : `, then ${resumeAt ? `step ${resumeAt.number} ${resumeAt.id}` : "the step that failed"}`} and on; the failed undo is not retried`,
      },
    ],
  };
}

/**
 * What `--resume` does after a cutover `--abort` called off (every undo it owed ran): the run's
 * end, status and the watch page say it alike. It goes on with that cutover where it stopped
 * (src/run/earlier.ts: a plain run would start a new one instead).
 */
export const PASSED_OVER_AGAIN = "the failed run's command again, as its end named it";

/**
 * Why the command offered after a run whose journal `--resume` passes over (it was refused before
 * it sent anything: src/run/earlier.ts `passedOverRefusal`) is that run's own, not a `--resume`:
 * status and the watch page say it alike.
 */
export const passedOverWhy = (file: string): string =>
  `that run sent nothing, so --resume passes its journal (${file}) over and would go on from the run before it`;

export const CALLED_OFF_RESUME =
  "goes on with the cutover --abort called off, where it stopped (the sync was left as it was): a write stop that was undone, or handed to a person to turn back on by hand, runs again before commit";

/**
 * The way on after a writes-on hook refused because an instance stopped during the commit (the
 * `stopped-in-commit` interlock, src/steps/hook.ts): none that keeps the cutover verified, since
 * the documentation says the migration must be restarted; the forced resume only for one who
 * knows the process did not stop. A plain `--resume` is refused again (the window folds the
 * earlier runs' reads): the run's end, status and the watch page offer this instead of it.
 */
export const STOPPED_IN_COMMIT_ONLY_IF =
  "ONLY if you accept this migration unverified, or know from that instance's log that its process did not stop before the destination took writes (a refused connection may have been something else; a restart seen only by its events applied going down may have come after canWrite)";
export const STOPPED_IN_COMMIT_RESUME: NextRun = {
  args: "--resume --force=stopped-in-commit",
  does: `${STOPPED_IN_COMMIT_ONLY_IF}: goes on past the refusal (a writes-on hook turns the application's writes on; a verify step runs, and the cutover stays not verified)`,
};

/** `--from <the stopWrites step>` after commit's `writes-stopped` interlock refused it (src/model/again.ts `stopAgainBefore`). */
export const RESTOP_DOES =
  "stops writes again, then goes on to the commit (its writes-stopped interlock refused it; --resume would meet the same refusal)";

/**
 * What `--abort` does, where no commit of the sync that runs now may have reached the fleet:
 * `writesBack` whether writes are known stopped by the cutover (undefined: not known here).
 */
export const abortDoes = (writesBack: boolean | undefined): string =>
  `calls the cutover off: runs the undos still owed, last first${writesBack === undefined ? " (a write stop's undo turns writes back on)" : writesBack ? " (writes back on)" : ""}; nothing is sent to the sync service`;

/** What to do instead, said beside that offer (`STOPPED_IN_COMMIT_RESUME`). */
export const STOPPED_IN_COMMIT_RESTART_WORDS =
  "the migration must be restarted to be verified (a new sync to an emptied destination)";
/** Where a plain `--resume` meets the refusal again: each step that asks the interlock (src/steps/kit/stopped-in-commit.ts). */
export const STOPPED_IN_COMMIT_AGAIN = "a plain --resume is refused again at the writes-on hook or verify step";
export const STOPPED_IN_COMMIT_NOTE = `${STOPPED_IN_COMMIT_RESTART_WORDS}: ${STOPPED_IN_COMMIT_AGAIN}`;

/**
 * The documented way on, offered first: the cutover again from its start once the migration was
 * restarted by hand (the destination emptied, the sync processes started afresh), its start's
 * `fleet-idle` interlock checking the fleet is IDLE (an adversarial run: the forced resume was the
 * only command offered, and after INITIALIZING its condition cannot hold).
 */
export const STOPPED_IN_COMMIT_RESTART: NextRun = {
  args: "--new-cutover",
  does: "once the migration was restarted (the destination emptied, the sync processes started afresh: IDLE), runs the cutover again from its start, whose interlock checks the fleet is IDLE",
};

/** What a plain `--resume` meets when an instance stopped during the commit and the writes-on hook has not run. */
export const STOPPED_IN_COMMIT_AHEAD =
  "any writesOn hook or verify step still to run refuses: an instance stopped during the commit, and the migration must be restarted to be verified";

/** Why a `--resume` offered may be refused: the runbook is not the text its journal ran. */
export const RUNBOOK_CHANGED_NOTE =
  "the runbook changed since this journal was written: --resume refuses it unless --allow-changed-runbook, only if the change cannot affect the steps already run";

/**
 * The `--var` values a way on must carry, as arguments after the others (` --var rollback=true`),
 * quoted for a shell; "" for none. A run with other values than its cutover's is refused
 * (src/run/earlier.ts `whenDecidedOtherwise`).
 */
export const varArgs = (vars: readonly string[]): string =>
  vars.length ? ` ${shellCommand(vars.flatMap((v) => ["--var", v]))}` : "";

/**
 * The `--var` values a cutover's runs decided their `when`s with, from each decision a step
 * tells (a step whose `when` names a variable: skipped by it, false; ran, true), in the order
 * first told: `name=value` for each variable every decision agrees on. One decided both ways is
 * left out: no value is right for both.
 */
export function decidedVars(decisions: Iterable<{ name: string; value: boolean }>): string[] {
  const seen = new Map<string, boolean | undefined>();
  for (const { name, value } of decisions)
    seen.set(name, seen.has(name) && seen.get(name) !== value ? undefined : value);
  return [...seen].flatMap(([name, v]) => (v === undefined ? [] : [`${name}=${varText(v)}`]));
}

/**
 * The `--var` values a way on carries: those its `when`s were decided with (`decidedVars`), then
 * each value the cutover's last run was given with `--var` (`run.started.given`, its value from
 * `run.started.vars`): its hooks' calls, and so their undos, were made of them. One a `when`
 * decided is not repeated; a redacted one (`***`) cannot be offered, and the run that lacks it
 * is refused where an undo needs it (src/run/earlier.ts `undoVarsDiffer`).
 */
export function wayOnVars(
  decided: readonly string[],
  run: { vars?: Readonly<Record<string, string | number | boolean>>; given?: readonly string[] },
): string[] {
  const named = new Set(decided.map((v) => v.slice(0, v.indexOf("="))));
  const given = (run.given ?? []).flatMap((name) => {
    const value = run.vars?.[name];
    if (value === undefined || named.has(name) || String(value).includes(MASK)) return [];
    return [`${name}=${varText(value)}`];
  });
  return [...decided, ...given];
}
