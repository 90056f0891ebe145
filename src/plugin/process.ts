/**
 * Running one command for a hook (the `shell` built-in, and plugin authors who need a process):
 * an argv list (never a shell string), its output captured line by line into the plugin's
 * logger, and stopped when its signal aborts: SIGTERM, then SIGKILL after a grace period.
 *
 * - No shell: `$VAR`, `;`, `|` and quotes in arguments reach the program as written.
 * - stdin is closed: a command that prompts would otherwise wait for a terminal the runner owns.
 * - On POSIX the command leads its own process group, and the whole group is signalled: a
 *   script's own children (curl, kubectl…) are stopped with it instead of being orphaned.
 * - A process outlives a runner that is killed (kill -9, a lost machine session): the runner
 *   runs each hook under a `ProcessWatch` (below), so every process the hook starts carries the
 *   hook's token in its environment (its children inherit it) and its pid reaches the journal
 *   right after the spawn. `--resume` finds such orphans (src/run/orphans.ts) and waits them
 *   out before it acts: an old undo must not turn writes back on behind a resumed commit.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type * as ChildProcess from "node:child_process";
import { existsSync } from "node:fs";
import type * as Readline from "node:readline";
import type { Readable } from "node:stream";
import { crashPoint } from "../crash-points.js";
import { processInfo } from "../processes.js";
import { runtimeImport } from "../runtime-import.js";
import { formatDuration } from "../runbook/duration.js";
import { setLongTimeout, timeoutSignal, type LongTimeout } from "../timers.js";
import type { PluginLogger } from "./api.js";
import type { Redactor } from "../redact.js";

export interface ProcessCall {
  /** The program (looked up in PATH unless it contains a slash) and its arguments. */
  argv: readonly string[];
  /** Default: the folder syncbook was started in. Hooks usually pass `ctx.cwd` (the runbook's folder). */
  cwd?: string;
  /** The whole environment of the command (not merged: the caller decides). Default: `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting it stops the command (SIGTERM, then SIGKILL after `killGraceMs`). */
  signal: AbortSignal;
  /** The command's own time limit: it is stopped like an abort, and the call waits until it died. */
  timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL (default 5 s). */
  killGraceMs?: number;
  /** Where each output line goes (`stdout: …` / `stderr: …`, at info level). */
  log?: PluginLogger;
  /** Applied to every line and message (on top of what `log` does). */
  redact?: (text: string) => string;
  /** Lines logged per stream before the rest is only counted (default 2000). */
  maxLogLines?: number;
}

export interface ProcessResult {
  exitCode: number;
  durationMs: number;
  /** The last lines of stderr (at most 10), redacted. */
  stderrTail: string[];
}

/** A command that could not start, exited non-zero, died of a signal, or was stopped. */
export class ProcessError extends Error {
  override readonly name = "ProcessError";
  constructor(
    message: string,
    readonly exitCode: number | undefined,
    readonly stoppedBy: "SIGTERM" | "SIGKILL" | undefined,
    readonly stderrTail: readonly string[],
  ) {
    super(message);
  }
}

/** The environment variable every process started under a `ProcessWatch` carries: the hook call's token. */
export const HOOK_TOKEN_ENV = "SYNCBOOK_HOOK_TOKEN";

/** What the runner wants to know of the processes a hook call starts. */
export interface ProcessWatch {
  /** Set in each process's environment as `SYNCBOOK_HOOK_TOKEN` (journaled before the hook runs). */
  token: string;
  /**
   * Called synchronously right after each spawn (the process leads its own group and session on
   * POSIX: pgid = sid = pid), with its start time where the system tells it (src/processes.ts).
   */
  spawned(p: { pid: number; pgid?: number; start?: number }): void;
}

const watching = new AsyncLocalStorage<ProcessWatch>();

/**
 * Runs `fn` (a hook call) with every process it starts through `runProcess` marked and reported to
 * `watch`, however late: after its call settled or timed out, from a timer or from work the plugin
 * did not await. The storage stays on for the process's life. Turning it off while no call ran
 * (1a92d23, to spare the write-stop window the cost async hooks put on every await on Node 20 and
 * 22) left such a process unmarked: no token, no journal line, and `--resume` could not find it
 * (src/run/orphans.ts) while it might still turn writes on (an outside review). Safety first.
 */
export function withProcessWatch<T>(watch: ProcessWatch, fn: () => Promise<T>): Promise<T> {
  return watching.run(watch, fn);
}

/** The name of an abort reason that means "syncbook is exiting now": the command's group is killed at once (SIGKILL). */
export const FORCED_STOP = "ForcedStop";

/** The abort reason of a forced exit: processes started for hooks and undos are killed at once. */
export function forcedStop(why: string): Error {
  const e = new Error(why);
  e.name = FORCED_STOP;
  return e;
}

const TAIL = 10;
const TAIL_IN_MESSAGE = 5;
const MAX_LINE = 2000;
/** After the command exits, how long its output pipes may stay open (a background grandchild can hold them). */
const DRAIN_MS = 1000;

/** argv for messages: arguments with spaces or quotes are JSON-quoted. */
export function showArgv(argv: readonly string[]): string {
  return argv.map((a) => (a === "" || /[\s"'\\]/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

/** A redactor's reading of successive lines (src/redact.ts `Redactor.lines`), when it has one. */
function lineRedactor(redact: ((text: string) => string) | undefined): ((line: string) => string) | undefined {
  const lines = (redact as Partial<Redactor> | undefined)?.lines;
  return typeof lines === "function" ? lines() : undefined;
}

// the one quoting for a shell, where the commands the tool offers are built too (src/text.ts)
export { shellCommand } from "../text.js";

export async function runProcess(call: ProcessCall): Promise<ProcessResult> {
  // the call's watch, read before the first await
  const watch = watching.getStore();
  // loaded here, not at the top: `syncbook lint` imports the shell plugin to check its options
  // and must not pay for child_process, net and readline
  const [{ spawn }, { createInterface }] = await Promise.all([
    runtimeImport<typeof ChildProcess>("node:child_process"),
    runtimeImport<typeof Readline>("node:readline"),
  ]);
  const redact = call.redact ?? ((s: string) => s);
  const shown = redact(showArgv(call.argv));
  const [file, ...args] = call.argv;
  if (file === undefined || file === "") throw new ProcessError("empty command", undefined, undefined, []);
  // a hook `timeout` may be any length (AbortSignal.timeout throws past 2^32 ms): src/timers.ts
  const limit = call.timeoutMs === undefined ? undefined : timeoutSignal(call.timeoutMs);
  const signal = limit === undefined ? call.signal : AbortSignal.any([call.signal, limit.signal]);
  const reasonText = (): string => {
    const r: unknown = signal.reason;
    if (r instanceof Error && r.name === "TimeoutError")
      return call.timeoutMs !== undefined && !call.signal.aborted
        ? `timed out after ${formatDuration(call.timeoutMs)}`
        : r.message;
    return r instanceof Error && r.message && r.message !== "interrupted" ? `interrupted: ${r.message}` : "interrupted";
  };
  if (signal.aborted) {
    limit?.clear();
    throw new ProcessError(`${shown} not started: ${reasonText()}`, undefined, undefined, []);
  }
  const graceMs = call.killGraceMs ?? 5000;
  const maxLines = call.maxLogLines ?? 2000;
  const posix = process.platform !== "win32";
  const started = performance.now();

  const cwd = call.cwd ?? process.cwd();
  const env = call.env ?? process.env;
  const child = spawn(file, args, {
    cwd,
    env: watch ? { ...env, [HOOK_TOKEN_ENV]: watch.token } : env,
    stdio: ["ignore", "pipe", "pipe"],
    shell: false,
    detached: posix,
    windowsHide: true,
  });
  // test-only crash points (src/crash-points.ts): running, its pid not yet journaled; below, exited
  crashPoint("process:spawned");
  if (watch && child.pid !== undefined) {
    // its start time tells it from a later process that reuses its pid (read while it surely runs:
    // it cannot be reaped before this handler returns)
    const start = processInfo(child.pid)?.start;
    watch.spawned({
      pid: child.pid,
      ...(posix ? { pgid: child.pid } : {}),
      ...(start !== undefined ? { start } : {}),
    });
  }
  const tail: string[] = [];
  const dropped = { stdout: 0, stderr: 0 };
  const logged = { stdout: 0, stderr: 0 };
  const capture = (stream: Readable, name: "stdout" | "stderr"): Promise<void> => {
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    // the stream's lines read as one text: a secret the hook printed across two lines is masked on both
    const redactLine = lineRedactor(call.redact) ?? redact;
    rl.on("line", (text: string) => {
      // redacted before it is cut: half a secret is no longer recognisable
      const raw = redactLine(text);
      const line =
        raw.length > MAX_LINE ? `${raw.slice(0, MAX_LINE)}… (${raw.length - MAX_LINE} more characters)` : raw;
      if (name === "stderr" && line.trim() !== "") {
        tail.push(line);
        if (tail.length > TAIL) tail.shift();
      }
      if (logged[name] < maxLines) {
        logged[name]++;
        call.log?.info(`${name}: ${line}`);
      } else dropped[name]++;
    });
    return new Promise((resolve) => rl.once("close", resolve));
  };
  const outputs = Promise.all([capture(child.stdout, "stdout"), capture(child.stderr, "stderr")]);

  let stoppedBy: "SIGTERM" | "SIGKILL" | undefined;
  let exited = false;
  let graceTimer: LongTimeout | undefined;
  const kill = (sig: "SIGTERM" | "SIGKILL"): void => {
    try {
      if (posix && child.pid !== undefined) process.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // already gone (ESRCH): nothing to stop
    }
  };
  const onAbort = (): void => {
    if (exited) return;
    // a forced exit (a second Ctrl-C): the process leaves now, so its group goes now, whole
    if ((signal.reason as Error | undefined)?.name === FORCED_STOP) {
      stoppedBy = "SIGKILL";
      kill("SIGKILL");
      return;
    }
    stoppedBy = "SIGTERM";
    call.log?.warn(`stopping ${shown}: ${reasonText()} (SIGTERM, SIGKILL in ${formatDuration(graceMs)})`);
    kill("SIGTERM");
    graceTimer = setLongTimeout(() => {
      if (exited) return;
      stoppedBy = "SIGKILL";
      kill("SIGKILL");
    }, graceMs);
  };
  signal.addEventListener("abort", onAbort, { once: true });

  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error>((resolve) => {
      child.once("error", (err) => resolve(err));
      child.once("exit", (code, sig) => resolve({ code, signal: sig }));
    });
    exited = true;
    crashPoint("process:exited");
    graceTimer?.clear();
    // stopped on purpose: whatever of its group ignored SIGTERM goes now, the hook is over
    if (stoppedBy && posix) kill("SIGKILL");
    // let the last lines arrive, but do not wait for a background grandchild holding the pipes
    let drainTimer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      outputs.then(() => true),
      new Promise<false>((r) => (drainTimer = setTimeout(() => r(false), DRAIN_MS))),
    ]);
    clearTimeout(drainTimer);
    if (!drained) {
      child.stdout.destroy();
      child.stderr.destroy();
    }
    for (const name of ["stdout", "stderr"] as const)
      if (dropped[name] > 0) call.log?.info(`${name}: … ${dropped[name]} more lines not logged`);
    const durationMs = Math.round(performance.now() - started);
    const tailText = tail.length ? `: ${tail.slice(-TAIL_IN_MESSAGE).join(" | ")}` : "";

    if (exit instanceof Error) {
      const code = (exit as NodeJS.ErrnoException).code;
      // a missing cwd is reported by spawn as ENOENT too, naming the program: tell them apart
      const why =
        code === "ENOENT" && !existsSync(cwd)
          ? `its folder ${redact(cwd)} does not exist`
          : code === "ENOENT"
            ? `command not found: ${redact(file)} (not in PATH, or no such file in ${redact(cwd)})`
            : code === "EACCES"
              ? `${redact(file)} is not executable`
              : redact(exit.message);
      throw new ProcessError(`${shown} could not start: ${why}`, undefined, undefined, tail);
    }
    if (stoppedBy) {
      const how =
        stoppedBy === "SIGKILL" ? `killed (it ignored SIGTERM for ${formatDuration(graceMs)})` : "stopped with SIGTERM";
      throw new ProcessError(`${shown} ${reasonText()}: ${how}${tailText}`, exit.code ?? undefined, stoppedBy, tail);
    }
    if (exit.signal)
      throw new ProcessError(`${shown} was killed by ${exit.signal}${tailText}`, undefined, undefined, tail);
    if (exit.code !== 0)
      throw new ProcessError(
        `${shown} exited with code ${exit.code ?? "?"}${tailText}`,
        exit.code ?? undefined,
        undefined,
        tail,
      );
    return { exitCode: 0, durationMs, stderrTail: tail };
  } finally {
    limit?.clear();
    signal.removeEventListener("abort", onAbort);
  }
}
