/**
 * The two questions the runner asks, independent of how they are drawn. A renderer supplies a
 * `PromptHost` that shows an inquirer prompt its own way (inside a listr2 task, or directly);
 * this module adds what every host needs: TTY refusal, `--yes`, and prompt abort on the signal.
 */
import { Writable } from "node:stream";
import { confirm as inquirerConfirm, select as inquirerSelect } from "@inquirer/prompts";
import { UserError, ExitCode } from "../errors.js";
import { abortReason, raceAbort } from "../timers.js";
import { terminalText } from "../text.js";

export type StepChoice = "run" | "skip" | "rest" | "abort";

export interface PromptStep {
  index: number;
  id: string;
  kind: string;
  title: string;
  /**
   * The step is the point of no return (it sends commit): this sentence says what it does. Its
   * question carries it, and a run (or "run the rest") is asked once more, with no as the default:
   * Enter twice never sends commit (issue 39, point 3).
   */
  pointOfNoReturn?: string;
}

export interface Prompter {
  /** Yes/no for a `confirm` step. Rejects with `signal.reason` as soon as `signal` aborts. */
  confirm(message: string, signal: AbortSignal): Promise<boolean>;
  /** `--step` mode: what to do with the next step. Rejects as soon as `signal` aborts. */
  stepChoice(step: PromptStep, signal: AbortSignal): Promise<StepChoice>;
}

export interface InputStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
}

/** The inquirer prompts a host can show; kept to these two so hosts stay small. */
export type PromptSpec =
  | { kind: "confirm"; message: string; step?: number }
  | {
      kind: "select";
      message: string;
      step: number;
      choices: { name: string; value: StepChoice; description?: string }[];
    };

/** Shows one prompt and resolves with its answer; must honour `signal`. */
export type PromptHost = (spec: PromptSpec, signal: AbortSignal) => Promise<unknown>;

export interface PrompterOptions {
  input: InputStream;
  /** Answer every `confirm` with yes (`--yes`); `--step` choices are still asked. */
  yes?: boolean;
  host: PromptHost;
  /** Told about answers given without asking (`--yes`), so the output says why it went on. */
  onAutoAnswer?: (message: string) => void;
}

/**
 * At a prompt the terminal is in raw mode, so Ctrl-C is a keypress, not SIGINT: inquirer rejects
 * with "User force closed the prompt with SIGINT". It was a Ctrl-C, so it becomes one: the process
 * signals itself, and the run stops as for any Ctrl-C (undo before commit, exit 130). The prompt
 * then settles through the abort of `signal` (`raceAbort`, src/timers.ts), never as a failed step.
 */
function ctrlCAsSigint<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return p.catch((e: unknown) => {
    if (!(e instanceof Error && e.name === "ExitPromptError" && /\bSIGINT$/.test(e.message))) throw e;
    process.kill(process.pid, "SIGINT");
    // the timer keeps the process alive until the signal arrives (nothing else may be pending);
    // a caller with no SIGINT handler that aborts `signal` gets the prompt's own error back
    return new Promise<T>((_resolve, reject) => {
      const t = setTimeout(() => reject(e), 5000);
      signal.addEventListener("abort", () => clearTimeout(t), { once: true });
    });
  });
}

/** How the point of no return is named wherever it is asked (the commit's --step question). */
export const POINT_OF_NO_RETURN = "POINT OF NO RETURN";

export const STEP_CHOICES: { name: string; value: StepChoice; description: string }[] = [
  { name: "run", value: "run", description: "run this step, then ask again before the next one" },
  { name: "skip", value: "skip", description: "do not run this step; go on to the next one" },
  {
    name: "run the rest",
    value: "rest",
    description:
      "run this and every following step without asking again, the commit included (a confirm step still asks)",
  },
  { name: "abort", value: "abort", description: "stop here (hooks that ran are undone before commit)" },
];

export function createPrompter(opts: PrompterOptions): Prompter {
  const interactive = opts.input.isTTY === true;
  return {
    confirm(message, signal) {
      if (signal.aborted) return Promise.reject(abortReason(signal));
      if (opts.yes) {
        opts.onAutoAnswer?.(`${message} → yes (--yes)`);
        return Promise.resolve(true);
      }
      if (!interactive) {
        return Promise.reject(
          new UserError(`A confirm step needs an answer, and there is no terminal to ask: "${message}"`, {
            hint: "run it in a terminal, or pass --yes to answer yes to every confirm step",
            exitCode: ExitCode.usage,
          }),
        );
      }
      return raceAbort(
        // the runbook's words, on a terminal: shown, never obeyed (src/text.ts)
        ctrlCAsSigint(opts.host({ kind: "confirm", message: terminalText(message) }, signal), signal).then(
          (v) => v === true,
        ),
        signal,
      );
    },
    stepChoice(step, signal) {
      if (signal.aborted) return Promise.reject(abortReason(signal));
      if (!interactive) {
        return Promise.reject(
          new UserError("--step asks before every step, and there is no terminal to ask", {
            hint: "run it in a terminal, or leave out --step",
            exitCode: ExitCode.usage,
          }),
        );
      }
      const next = terminalText(`Next: step ${step.index + 1} ${step.kind} "${step.title}" (${step.id})`);
      const warning = step.pointOfNoReturn;
      const message = warning ? `${next}\n${POINT_OF_NO_RETURN}: ${warning}` : next;
      const choose = (): Promise<StepChoice> =>
        ctrlCAsSigint(
          opts.host({ kind: "select", message, step: step.index, choices: STEP_CHOICES }, signal),
          signal,
        ).then((v) => {
          if (v === "run" || v === "skip" || v === "rest" || v === "abort") return v;
          throw new Error(`unexpected answer ${String(v)}`);
        });
      // asked of the --step choice itself, never answered by --yes (that answers confirm steps)
      const sure = (): Promise<boolean> =>
        ctrlCAsSigint(
          opts.host(
            {
              kind: "confirm",
              message: `${POINT_OF_NO_RETURN}: send commit now? Once sent it is not undone (no: back to the choices)`,
              step: step.index,
            },
            signal,
          ),
          signal,
        ).then((v) => v === true);
      const ask = async (): Promise<StepChoice> => {
        for (;;) {
          const choice = await choose();
          if (!warning || choice === "skip" || choice === "abort") return choice;
          if (await sure()) return choice;
        }
      };
      return raceAbort(ask(), signal);
    },
  };
}

/** A host that asks with inquirer directly on `output`: for the line renderers and silent mode. */
export function directPromptHost(input: InputStream, output: NodeJS.WritableStream): PromptHost {
  return (spec, signal) => {
    const context = { input, output: nonClosing(output), signal };
    if (spec.kind === "confirm") return inquirerConfirm({ message: spec.message, default: false }, context);
    return inquirerSelect({ message: spec.message, choices: spec.choices, default: "run" }, context);
  };
}

/**
 * inquirer pipes its output into the stream it is given and ends it when the prompt closes;
 * Node spares process.stdout/stderr from that, but any other `out` would be closed after the
 * first question. A fresh forwarding stream per prompt takes the `end` instead.
 */
function nonClosing(out: NodeJS.WritableStream): NodeJS.WritableStream {
  const w = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      out.write(chunk);
      cb();
    },
  });
  const tty = out as { isTTY?: boolean; columns?: number; rows?: number };
  return Object.assign(w, { isTTY: tty.isTTY, columns: tty.columns, rows: tty.rows });
}
