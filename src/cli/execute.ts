/**
 * What `syncbook run` and `syncbook rehearse` share: load and lint the runbook (an invalid one
 * never reaches the fleet), load its plugins, print a dry-run plan, wire the outputs (UI,
 * journal, report) to the runner, handle Ctrl-C, and turn the result into an exit code.
 */
import type { Tracing, TracingOptions } from "../trace/index.js";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { COMMAND_EFFECT } from "../api/commands.js";
import { countBySeverity, type Diagnostic } from "../diagnostics.js";
import { ExitCode, UserError } from "../errors.js";
import { terminalText } from "../text.js";
import { instanceLabel, type RunEvent, type RunListener } from "../events.js";
import type { LoadedRunbook, LoadOptions, Scalar } from "../runbook/index.js";
import { instancesOf } from "../runbook/types.js";
import { MASK, redactLeaves, redactSecretFields } from "../redact.js";
import { PLUGIN_CALL_KINDS } from "../steps/index.js";
import { lintCommand, varValue } from "../next-run.js";

export interface ExecuteFlags {
  dryRun?: boolean;
  probe?: boolean;
  step?: boolean;
  from?: string;
  to?: string;
  var?: string[];
  yes?: boolean;
  force?: string[];
  renderer?: "default" | "simple" | "silent" | "json";
  report?: string;
  /** `--resume`, or `--resume <journal>` naming the journal to continue. */
  resume?: boolean | string;
  journalDir?: string;
  allowChangedRunbook?: boolean;
  /** `--only a,b` (run): command steps to these instances only. */
  only?: string;
  /** `--abort`, or `--abort <journal>`: run the journal's open undos and nothing else. */
  abort?: boolean | string;
  /** rehearse: export the rehearsal's trace when the OTLP variables are set (off by default). */
  trace?: boolean;
  /** Start a new cutover although the runbook's last one did not finish (src/journal/cutover.ts). */
  newCutover?: boolean;
}

/** `--var k=v`: numbers and booleans keep their type (`--var maxLag=3` is the number 3); `--var 'k="007"'` is the text 007 (`varValue`). */
export function parseVars(list: readonly string[] = []): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const [at, item] of list.entries()) {
    const eq = item.indexOf("=");
    if (eq <= 0)
      // the item unsaid: typed without its name, it may be a secret
      throw new UserError(`--var number ${at + 1}: expected name=value`, {
        hint: "For example --var maxLag=5",
        exitCode: ExitCode.usage,
      });
    const k = item.slice(0, eq).trim();
    const v = item.slice(eq + 1);
    // the names `vars:` allows, and never one JavaScript gives a meaning (`__proto__` would set
    // the object's prototype instead of a variable)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || ["__proto__", "constructor", "prototype"].includes(k))
      throw new UserError(`--var: ${JSON.stringify(k)} is not a variable name`, {
        hint: "Variable names are letters, digits and _, not starting with a digit, as under `vars:`.",
        exitCode: ExitCode.usage,
      });
    // a masked value pasted from an offer: as a value it names no secret, and where the cutover's
    // was masked alike the checks of its values could not tell them apart (an outside review: the
    // undo of a hook run with the secret ran with the text ***)
    if (v.includes(MASK))
      throw new UserError(`--var ${k}: its value holds ${MASK}, which is how syncbook shows a secret, not a value`, {
        hint: `Give ${k} the value the cutover's runs were given (the secret itself), or refer to it in the runbook as \${env.NAME} so that it is read from the environment.`,
        exitCode: ExitCode.usage,
      });
    out[k] = varValue(v);
  }
  return out;
}

/** `--force a,b --force c` → [a, b, c], each a known check. */
export async function parseForce(list: readonly string[] = []): Promise<string[]> {
  const { FORCE_CHECKS } = await import("../steps/kit/context.js");
  const out = list
    .flatMap((f) => f.split(","))
    .map((f) => f.trim())
    .filter(Boolean);
  for (const f of out) {
    if (!(FORCE_CHECKS as readonly string[]).includes(f))
      throw new UserError(`--force=${f}: no such check`, {
        hint: `Checks: ${FORCE_CHECKS.join(", ")}`,
        exitCode: ExitCode.usage,
      });
  }
  return out;
}

/** Loads, validates and lints; prints problems; throws (exit 2) when the runbook must not run. */
export async function loadForRun(
  file: string,
  flags: ExecuteFlags,
  print: (s: string) => void,
  /** A rehearsal: where an unset `${env.*}` is not needed (src/rehearse: `rehearsalStandIns`). */
  standIn?: LoadOptions["standIn"],
): Promise<LoadedRunbook> {
  if (!existsSync(file))
    throw new UserError(`${file}: no such file`, {
      hint: "Pass the path of a runbook (YAML).",
      exitCode: ExitCode.usage,
    });
  if (statSync(file).isDirectory())
    throw new UserError(`${file} is a folder: run and rehearse take one runbook file`, {
      hint: `Pass the runbook's path, e.g. ${join(file, "cutover.yaml")}; ${lintCommand(file)} checks every runbook in a folder.`,
      exitCode: ExitCode.usage,
    });
  const { loadRunbook } = await import("../runbook/index.js");
  const { lintWithLoader } = await import("../lint/rules.js");
  const vars = parseVars(flags.var);
  const loaded = await loadRunbook(file, { env: process.env, vars, ...(standIn ? { standIn } : {}) }).catch(
    (err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code !== "string") throw err;
      throw new UserError(`cannot read ${file}: ${code}`, {
        hint: "Check that the file exists and is readable.",
        exitCode: ExitCode.usage,
      });
    },
  );
  // an override of a variable the runbook does not have would change nothing, silently
  const declared =
    loaded.raw && typeof loaded.raw === "object" && !Array.isArray(loaded.raw)
      ? (loaded.raw as { vars?: unknown }).vars
      : undefined;
  // declared under `vars:`, or used as `${vars.x}` (the loader's hint offers --var for those)
  const names = [
    ...new Set([
      ...(declared && typeof declared === "object" && !Array.isArray(declared) ? Object.keys(declared) : []),
      ...[...loaded.text.matchAll(/\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}/g)].map((m) => m[1]!),
    ]),
  ];
  for (const k of Object.keys(vars)) {
    if (names.includes(k)) continue;
    const { suggest } = await import("../suggest.js");
    const near = suggest(k, names);
    throw new UserError(
      `--var ${k}=…: ${file} has no variable \`${k}\`${near ? ` (did you mean \`${near}\`?)` : ""}: it would change nothing`,
      {
        hint: names.length
          ? `Its variables (under \`vars:\`): ${names.join(", ")}.`
          : "The runbook has no `vars:`; declare the variable there first.",
        exitCode: ExitCode.usage,
      },
    );
  }
  // rule findings too when the schema refused it: everything in one pass
  const diags: Diagnostic[] = lintWithLoader(loaded);
  // an accepted warning is shown where the warning would be, with its reason
  const shown = diags.filter((d) => d.severity !== "info" || d.accepted !== undefined);
  if (shown.length) {
    const { formatPretty } = await import("../lint/format/pretty.js");
    print(formatPretty({ diagnostics: shown, files: [file], sources: new Map([[file, loaded.text]]), color: false }));
  }
  const n = countBySeverity(diags);
  if (!loaded.runbook || n.error > 0) {
    // lint leaves every ${env.*} unresolved (CI has no secrets): an unset one is this command's own finding
    const unset = loaded.diagnostics.some((d) => d.rule === "interpolation" && / is not set$/.test(d.message));
    throw new UserError(`${file} has ${n.error} error(s): nothing was sent`, {
      hint: unset
        ? standIn
          ? "Export the environment variables named above: the rehearsal uses them as written (a hook's or notifier's need none: stand-ins replace those). `syncbook lint` leaves every ${env.*} unresolved, so it cannot see this."
          : "Export the environment variables named above. `syncbook lint` leaves every ${env.*} unresolved (CI has no secrets), so it cannot see this."
        : `Fix them (${lintCommand(file)}); a runbook that does not lint clean never runs.`,
      exitCode: ExitCode.usage,
    });
  }
  // as typed: every command the run offers repeats it (src/next-run.ts `runbookArgs`)
  if (flags.journalDir !== undefined) loaded.journalDir = flags.journalDir;
  return loaded;
}

export async function loadPluginsFor(loaded: LoadedRunbook, print: (s: string) => void) {
  const { loadRunbookPlugins } = await import("../plugin/index.js");
  const { registry, diagnostics } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (diagnostics.length) {
    const { formatPretty } = await import("../lint/format/pretty.js");
    print(formatPretty({ diagnostics, files: [loaded.file], sources: new Map([[loaded.file, loaded.text]]) }));
  }
  if (errors.length)
    throw new UserError(`${loaded.file}: ${errors.length} plugin problem(s): nothing was sent`, {
      hint: "Fix the plugins: entries and hook options above.",
      exitCode: ExitCode.usage,
    });
  return registry;
}

/** `--dry-run`: every request in order, to which instance, with its body. */
export async function printPlan(
  loaded: LoadedRunbook,
  write: (s: string) => void,
  range?: { from: number; to: number },
): Promise<void> {
  // every line once more as a whole: the runbook's name, file and hook options are the user's words
  const out = (s: string): void => write(loaded.redact(s));
  const { planSteps, planRequests } = await import("../run/plan.js");
  const rb = loaded.runbook;
  if (!rb) return;
  const steps = planSteps(rb);
  const reqs = planRequests(rb, steps, loaded.redact);
  out(
    `plan for ${rb.name} (${loaded.file}): ${steps.length} steps, ${rb.instances.length} instance(s); dry run: nothing is sent`,
  );
  for (const s of steps) {
    const outside = outsideRange(s.index, range);
    out(
      `\n${s.index + 1}. [${s.id}] ${s.kind}: ${loaded.redact(s.title)}${s.step.when === false ? "  (when: false: skipped)" : outside ? `  (${outside}: skipped)` : ""}`,
    );
    if (outside) continue;
    for (const r of reqs.filter((x) => x.step === s.id))
      out(
        `     ${r.method.padEnd(4)} ${r.target}${r.path}${r.body !== undefined ? `  ${JSON.stringify(r.body)}` : ""}${r.note ? `  — ${r.note}` : ""}`,
      );
    const call = s.bound.hookCall();
    if (call) {
      out(
        `     hook ${call.use} ${JSON.stringify(redactSecretFields(call.with ?? {}, loaded.redact))}${call.undo ? `  (undo: ${call.undo.use})` : ""}${s.bound.writesCheck() ? `  (check: ${s.bound.writesCheck()?.use}, again before commit)` : ""}`,
      );
    }
  }
}

/**
 * `--dry-run --renderer json`: the plan as one JSON line, `{"type":"plan", runbook, file, instances,
 * verifier, steps: [{index, id, kind, title, skipped?, requests: [{method, target, path, body?,
 * note?}], hook?}]}`: the same requests and redaction as the text plan.
 */
/** Why a step is not in `--from`/`--to`'s range, or undefined. */
function outsideRange(index: number, range: { from: number; to: number } | undefined): string | undefined {
  if (!range) return undefined;
  return index < range.from ? "before --from" : index > range.to ? "after --to" : undefined;
}

export async function printPlanJson(
  loaded: LoadedRunbook,
  write: (text: string) => void,
  range?: { from: number; to: number },
): Promise<void> {
  const { planSteps, planRequests } = await import("../run/plan.js");
  const { jsonLine } = await import("../ui/json.js");
  const rb = loaded.runbook;
  if (!rb) return;
  const steps = planSteps(rb);
  const reqs = planRequests(rb, steps, loaded.redact);
  const line = {
    type: "plan",
    at: Date.now(),
    runbook: rb.name,
    file: loaded.file,
    instances: rb.instances.map((i) => loaded.redact(typeof i === "string" ? i : i.url)),
    ...(rb.verifier ? { verifier: loaded.redact(rb.verifier) } : {}),
    steps: steps.map((s) => {
      const call = s.bound.hookCall();
      return {
        index: s.index,
        id: s.id,
        kind: s.kind,
        title: loaded.redact(s.title),
        ...(s.step.when === false
          ? { skipped: "when: false" }
          : outsideRange(s.index, range)
            ? { skipped: outsideRange(s.index, range) }
            : {}),
        requests: outsideRange(s.index, range)
          ? []
          : reqs.filter((r) => r.step === s.id).map(({ step: _step, ...r }) => r),
        ...(call
          ? {
              hook: {
                use: call.use,
                with: redactSecretFields(call.with ?? {}, loaded.redact),
                ...(call.undo ? { undo: call.undo.use } : {}),
                ...(s.bound.writesCheck() ? { check: s.bound.writesCheck()?.use } : {}),
              },
            }
          : {}),
      };
    }),
  };
  // the whole line once more, leaf by leaf: the runbook's name and file are the user's words too
  write(`${jsonLine(redactLeaves(line, loaded.redact, PLAN_OWN_WORDS))}\n`);
}

const PLAN_OWN_WORDS: ReadonlySet<string> = new Set(["type", "kind", "method", "use", "undo", "check"]);

/**
 * `--probe`: reads every instance's progress (GET only) and checks the plan's first command
 * against the states found. Returns the problems (empty: the plan can start).
 */
export async function probe(loaded: LoadedRunbook, out: (s: string) => void): Promise<string[]> {
  const rb = loaded.runbook;
  if (!rb) return [];
  const { createFleet } = await import("../fleet/index.js");
  const { planSteps } = await import("../run/plan.js");
  const fleet = createFleet({
    instances: instancesOf(rb),
    requestTimeoutMs: 5000,
    redact: loaded.redact,
  });
  const snap = await fleet.progress(AbortSignal.timeout(15_000));
  const problems: string[] = [];
  for (const i of snap.instances) {
    const label = instanceLabel(i.ref);
    if (i.error) problems.push(`${label}: unreachable: ${i.error.message}`);
    else
      out(
        `probe: ${label}: ${i.progress?.state ?? "?"}${i.progress?.canCommit ? ", canCommit" : ""}${i.progress?.info ? `, ${i.progress.info}` : ""}`,
      );
  }
  const first = planSteps(rb).find((s) => s.step.when !== false && s.bound.command !== undefined);
  const op = first?.bound.command;
  if (first && op) {
    const need = COMMAND_EFFECT[op].before;
    const before = planSteps(rb).slice(0, first.index);
    // a wait before the first command lets the fleet move on: its state now is not the one the command meets
    const waits = before.some((s) => s.bound.waitsFor !== undefined);
    for (const i of snap.instances) {
      const st = i.progress?.state;
      if (!st) continue;
      // INITIALIZING (1.20+) passes by itself, and the start step waits it out
      const ok =
        need.includes(st) ||
        (op === "start" && st === "INITIALIZING") ||
        (waits && op !== "start" && st !== "IDLE" && st !== "COMMITTED");
      if (!ok)
        problems.push(
          `${instanceLabel(i.ref)} is ${st}: the plan's first command, ${op} (step ${first.id}), needs ${need.join(" or ")}`,
        );
    }
  }
  const ids = fleet.identity(snap, {});
  for (const p of ids) problems.push(p.message);
  return problems;
}

export interface Outputs {
  listeners: RunListener[];
  finish(): Promise<void>;
}

/** `--report DIR`: report.json, junit.xml and report.html from the run's events (after the earlier runs', on --resume). */
export async function reportOutput(
  dir: string | undefined,
  print: (s: string) => void,
  history?: readonly RunEvent[],
  cutoverReport?: string,
): Promise<Outputs> {
  if (!dir) return { listeners: [], finish: () => Promise.resolve(undefined) };
  const { createReportListener } = await import("../report/index.js");
  const r = createReportListener(dir, {
    ...(history ? { history } : {}),
    ...(cutoverReport !== undefined ? { cutoverReport } : {}),
  });
  return {
    listeners: [r.listener],
    finish: async () => {
      const w = await r.finish();
      print(`report: ${join(dir, "report.html")} (also report.json, junit.xml)${w ? "" : ""}`);
    },
  };
}

/**
 * The run's OpenTelemetry trace, when the standard OTLP variables ask for one (docs/tracing.md).
 * The check reads the variables only; OpenTelemetry itself is loaded only when it is on.
 */
export async function traceOutput(
  env: Readonly<Record<string, string | undefined>>,
  redact: (s: string) => string,
  opts: TracingOptions & { rehearsal?: { trace: boolean } } = {},
): Promise<Tracing | undefined> {
  const { traceConfig, traceProblem } = await import("../trace/config.js");
  const problem = traceProblem(env);
  if (problem) stderr(`warning: ${problem}`);
  if (!traceConfig(env)) return undefined;
  // a rehearsal is not the cutover: its trace goes to the team's backend only when asked for
  if (opts.rehearsal && !opts.rehearsal.trace) {
    stderr("rehearsal: not traced (the OTLP variables are set; pass --trace to export the rehearsal's trace)");
    return undefined;
  }
  const { startTracing } = await import("../trace/index.js");
  return startTracing(env, redact, opts.earlier ? { earlier: opts.earlier } : {});
}

/** Two signals closer than this are one keypress (GNU `timeout` forwards the Ctrl-C the group already got). */
export const SAME_INTERRUPT_MS = 500;

/**
 * Ctrl-C / SIGTERM: the first stops the run cleanly (undo before commit, journal flushed, exit
 * 130); a second one, at least `SAME_INTERRUPT_MS` later, forces the exit: `force` is aborted
 * first (the runner kills the undo running, with its process group, and says what it left
 * behind, synchronously), then the process exits 130.
 * Once the run has ended and only its notifications are still being sent (`drain.active()`), any
 * signal ends that wait at once (`drain.stop`): the run is over, nothing is left to stop cleanly.
 */
export function interruptOnSignals(
  controller: AbortController,
  say: (s: string) => void,
  force?: AbortController,
  now: () => number = () => performance.now(),
  drain?: { active(): boolean; stop: AbortController },
  hasTerminal: () => boolean = () =>
    process.stdin.isTTY === true || process.stdout.isTTY === true || process.stderr.isTTY === true,
): () => void {
  let first: number | undefined;
  let firstSig: NodeJS.Signals | undefined;
  let unattended = false;
  const on = (sig: NodeJS.Signals) => {
    // with no terminal nobody pressed Ctrl-C twice: a cancelled CI job's SIGTERM follows its SIGINT
    // 7.5 s later (GitHub Actions), and forcing then killed the undo running and dropped the run's
    // end and its page; SIGKILL is the supervisor's own way to force (an outside review)
    if (unattended && first !== undefined) {
      say(`\n${sig}: still stopping cleanly (no terminal: a second signal does not force the exit)`);
      return;
    }
    if (drain?.active()) {
      if (!drain.stop.signal.aborted) say(`\n${sig}: not waiting for the notifications still being sent`);
      drain.stop.abort(new Error(`interrupted by ${sig}`));
      return;
    }
    if (first === undefined) {
      first = now();
      firstSig = sig;
      const terminal = hasTerminal();
      unattended = !terminal;
      say(
        `\n${sig}: stopping cleanly (undo runs if commit was not sent)${terminal ? "; press Ctrl-C again to force exit" : ""}`,
      );
      // the signal rides on the reason: a dropped session (SIGHUP) is nobody's Ctrl-C (run.finished.interruptedBy),
      // nor is a SIGINT with no terminal to type it at (a CI job cancelled: GitHub Actions sends
      // SIGINT, then SIGTERM; a supervisor's stop): run.finished.noTerminal
      controller.abort(Object.assign(new Error(`interrupted by ${sig}`), { signal: sig, terminal }));
      return;
    }
    if (now() - first < SAME_INTERRUPT_MS) return;
    say(`\n${firstSig === sig ? `${sig} again` : `${sig} after ${firstSig}`}: forced exit`);
    // the signals as they came, a terminal's SIGINT as its key (the forced exit's reason said
    // "Ctrl-C twice", and its line "SIGTERM again", for a SIGTERM sent from another shell after one)
    const as = (s: NodeJS.Signals | undefined): string => (s === "SIGINT" ? "Ctrl-C" : (s ?? sig));
    force?.abort(new Error(firstSig === sig ? `${as(sig)} twice` : `${as(firstSig)}, then ${as(sig)}`));
    process.exit(ExitCode.interrupted);
  };
  // SIGHUP: the SSH session dropped. Stop as cleanly as for Ctrl-C (undo before commit).
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, on);
  return () => {
    for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.off(sig, on);
  };
}

/** A line for people on stderr; what it quotes from outside has its control characters shown, never obeyed (src/text.ts). */
export const stderr = (s: string): void => {
  const t = terminalText(s, { lines: true });
  if (!process.stderr.destroyed) process.stderr.write(t.endsWith("\n") ? t : `${t}\n`);
};
/**
 * stdout for the plan, notify lines, status: a reader that goes away (`--dry-run | head`) ends
 * what is printed, quietly: never a stack trace, and never a run (a closed pipe must not stop a
 * cutover: its lines are in the journal anyway).
 */
export const stdout = (s: string): void => {
  quietOn(process.stdout, "epipe");
  const t = terminalText(s, { lines: true });
  if (!process.stdout.destroyed) process.stdout.write(t.endsWith("\n") ? t : `${t}\n`);
};

/**
 * A run goes on without its output: an error of stdout or stderr (the reader of a pipe gone: a
 * `| tee` the same Ctrl-C stopped, EPIPE; the SSH session's terminal gone with a SIGHUP, EIO; a
 * log file's disk full) closes that stream and nothing else. Without it, the first line written
 * after it (the Ctrl-C's own "stopping cleanly") crashed the runner: no undo of a write stop, no
 * end in the journal. Every line is in the journal anyway (`syncbook status`, `syncbook report`).
 */
export function keepRunningWithoutOutput(): void {
  for (const stream of [process.stdout, process.stderr]) quietOn(stream, "any");
}

/** How each output stream's errors are taken: a reader gone (EPIPE) ends its output quietly; `any`: every error does. */
const quieted = new WeakMap<NodeJS.WriteStream, "epipe" | "any">();
function quietOn(stream: NodeJS.WriteStream, what: "epipe" | "any"): void {
  const had = quieted.get(stream);
  if (had === "any" || had === what) return;
  quieted.set(stream, what);
  if (had) return;
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (quieted.get(stream) === "any" || err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") {
      stream.destroy();
      return;
    }
    throw err;
  });
}
