/**
 * The live terminal UI of `syncbook run`: a listener on the runner's event stream plus the
 * prompter the runner asks (`--step`, `confirm` steps).
 *
 * Output goes to stderr by default: stdout stays free for what a command produces (a JSON
 * report, `--dry-run` plans piped to a file), and progress on stderr is what operators expect
 * from CLIs (`gh`, `npm`, `curl`), so `syncbook run x.yaml > plan.txt` still shows the live list.
 */
import pc from "picocolors";
import type { RunEvent, RunListener } from "../events.js";
import { ListrUi, afterQueuedImmediates } from "./listr.js";
import { createPrompter, directPromptHost } from "./prompts.js";
import type { InputStream, PromptHost, Prompter } from "./prompts.js";
import { SimpleUi } from "./simple.js";
import { createJsonLines } from "./json.js";
import { errorMessage } from "../errors.js";
import { terminalValue } from "../text.js";
import { UiModel } from "./model.js";
import type { ReadinessPlan } from "../model/readiness.js";
import type { UndoLeftStopped } from "./format.js";

export type { Prompter, PromptStep, StepChoice, InputStream } from "./prompts.js";
export { createPrompter, STEP_CHOICES } from "./prompts.js";
export { copyProgress, addCopySample, emptyCopyState, readCollectionCopy, COPY_DEFAULTS } from "../fleet/eta.js";
export type { CopyState, CopyView, CopyOptions, InstanceCopy } from "../fleet/eta.js";
export { formatWaitStatus, waitStatusKey, formatBytes, formatDuration, formatClock, bar } from "./format.js";
export { SimpleUi } from "./simple.js";
export { claimStdout, createJsonLines, jsonLine, type ClaimedStdout, type JsonLines } from "./json.js";

/** `json`: NDJSON of every run event on stdout (./json.ts); never picked unless asked for. */
export type RendererName = "default" | "simple" | "silent" | "json";

export interface UiOptions {
  renderer: RendererName;
  /** Where the UI draws. Default `process.stderr` (see the module comment). */
  out?: NodeJS.WritableStream;
  /** ANSI colors. Default: `out` is a TTY and `NO_COLOR` is unset (or `FORCE_COLOR` is set). */
  color?: boolean;
  /** Where answers come from. Default `process.stdin`; prompts are refused when it is no TTY. */
  input?: InputStream;
  /** `--yes`: every `confirm` step is answered yes without asking (and says so). */
  yes?: boolean;
  /** The json renderer's output (default `process.stdout`; the CLI passes `claimStdout().write`). */
  jsonWrite?: (text: string) => void;
  /** The runbook's readiness plan (`readinessPlan`: its `lagBelow` before the commit, the embedded verifier off): the live view's readiness reads it, as status and watch do. */
  readiness?: ReadinessPlan;
  /** The earlier runs' events of the cutover this run continues, oldest first (`UiModel.seedWindow`). */
  earlier?: readonly RunEvent[];
}

export interface Ui {
  listener: RunListener;
  prompt: Prompter;
  /** Call after `run.finished`: resolves when the renderer has drawn its last frame. */
  close(): Promise<void>;
  /** The json renderer writes a line that is not a run event (the rehearsal verdict); others ignore it. */
  line: (type: string, payload: Record<string, unknown>) => void;
  /**
   * The short form of the run's closing message when this renderer already showed it whole (the
   * failing step's paragraph, its hint and place), else undefined: the CLI's last word then
   * points up instead of printing the paragraph again.
   */
  toldAbove: (message: string | undefined) => string | undefined;
  /** The renderer printed the run's closing message in its summary (default, simple): the CLI does not repeat it. */
  showsEnd: boolean;
  /** A stopWrites whose undo failed in this run (writes still stopped), whatever the renderer. */
  writesLeftStopped: () => UndoLeftStopped | undefined;
}

function isTTY(s: unknown): boolean {
  return typeof s === "object" && s !== null && (s as { isTTY?: unknown }).isTTY === true;
}

/**
 * Which renderer `--renderer` means when not given: the task list on a terminal, lines in CI
 * or when piped (a redraw-based list turns into garbage in a log file), and on a terminal
 * without a width (a pseudo-terminal nobody sized, as `script` makes: the list would wrap
 * every character onto its own line and draw nothing readable).
 */
export function pickRenderer(opts: {
  flag?: RendererName | undefined;
  out?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
}): RendererName {
  if (opts.flag) return opts.flag;
  const env = opts.env ?? process.env;
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "0" && env.CI !== "false";
  const out = opts.out ?? process.stderr;
  const columns = (out as { columns?: unknown }).columns;
  return isTTY(out) && typeof columns === "number" && columns > 0 && !ci ? "default" : "simple";
}

export function createUi(opts: UiOptions): Ui {
  const out = opts.out ?? process.stderr;
  const input = opts.input ?? process.stdin;
  const env = process.env;
  const color =
    opts.color ??
    ((isTTY(out) && env.NO_COLOR === undefined) || (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0"));
  const colors = pc.createColors(color);
  const write = (text: string): void => {
    out.write(text);
  };

  let handle: (e: RunEvent) => void;
  let host: PromptHost;
  let close: () => Promise<void>;
  let onAutoAnswer: (message: string) => void;
  let line: Ui["line"] = () => undefined;
  let toldAbove: Ui["toldAbove"] = () => undefined;
  // the json and silent renderers draw no model: one is kept for what the CLI says at the end
  let model: UiModel | undefined;

  // what an event carries from outside (hook output, plugin logs, service errors, runbook strings)
  // is drawn with its control characters shown, never obeyed; the renderers' own colours and
  // redraws come after (src/text.ts terminalText). The JSON lines escape them already.
  if (opts.renderer === "default") {
    const ui = new ListrUi({
      out,
      input,
      colors,
      ...(opts.readiness ? { readiness: opts.readiness } : {}),
    });
    handle = (e) => ui.listener(terminalValue(e));
    host = ui.promptHost;
    close = () => ui.close();
    toldAbove = (m) => ui.model.toldAbove(m);
    model = ui.model;
    // shown as a log line of the running step, through the same path as runner logs (queued
    // behind the events not drawn yet)
    onAutoAnswer = (message) => {
      void listener({ type: "log", seq: -1, at: Date.now(), level: "info", message: `confirmed: ${message}` });
    };
  } else if (opts.renderer === "simple") {
    const ui = new SimpleUi({ write, colors, ...(opts.readiness ? { readiness: opts.readiness } : {}) });
    const direct = directPromptHost(input, out);
    handle = (e) => ui.listener(terminalValue(e));
    toldAbove = (m) => ui.model.toldAbove(m);
    model = ui.model;
    host = async (spec, signal) => {
      ui.hold();
      try {
        return await direct(spec, signal);
      } finally {
        ui.release();
      }
    };
    close = () => Promise.resolve();
    // through the listener: a renderer that threw stays quiet, said once
    onAutoAnswer = (message) => {
      void listener({ type: "log", seq: -1, at: Date.now(), level: "info", message: `confirmed: ${message}` });
    };
  } else if (opts.renderer === "json") {
    const lines = createJsonLines(opts.jsonWrite ?? ((text) => void process.stdout.write(text)));
    const own = (model = new UiModel());
    handle = (e) => {
      own.apply(e);
      lines.listener(e);
    };
    line = lines.line;
    // prompts (--step, confirm without --yes) are drawn on `out` (stderr), never among the lines
    host = directPromptHost(input, out);
    close = () => Promise.resolve();
    onAutoAnswer = () => undefined;
  } else {
    const own = (model = new UiModel());
    handle = (e) => own.apply(e);
    host = directPromptHost(input, out);
    close = () => Promise.resolve();
    onAutoAnswer = () => undefined;
  }

  if (opts.earlier?.length) model?.seedWindow(opts.earlier);

  let broken = false;
  const deliver = (e: RunEvent): void => {
    if (broken) return;
    try {
      handle(e);
    } catch (err) {
      // a display bug must never stop a cutover: say it once, then stay quiet
      broken = true;
      write(`syncbook: the ${opts.renderer} renderer failed and stopped drawing: ${errorMessage(err)}\n`);
    }
  };
  // The live view takes its events once the runner's turn yields, after the immediates queued
  // in it (undici writes a dispatched request from one: `afterQueuedImmediates`), not inside it:
  // its work on one (the terminal's sanitizing, its model's fold, about 40 µs) then overlaps the
  // service's answering, and inside the write-stop window the runner's reads, checks and the
  // commit's first byte come first (issue 41: 64 events a fleet read, two reads before the
  // commit). Its frames were drawn so already. Events keep their order, and whatever reads the
  // view (a prompt, `toldAbove`, `writesLeftStopped`, its end) catches it up first. The other
  // renderers write lines a pipe or a program reads: they take each event as it comes.
  let queued: RunEvent[] = [];
  let due = false;
  const catchUp = (): void => {
    due = false;
    const events = queued;
    queued = [];
    for (const e of events) deliver(e);
  };
  const listener: RunListener =
    opts.renderer === "default"
      ? (e) => {
          if (broken) return;
          queued.push(e);
          // the run's end is drawn at once, as before: a run that throws after it never reaches
          // close, and the list would hold the terminal (an outside review)
          if (e.type === "run.finished") return catchUp();
          if (!due) {
            due = true;
            afterQueuedImmediates(catchUp, 0);
          }
        }
      : deliver;
  const caughtUp =
    <A extends unknown[], R>(f: (...args: A) => R) =>
    (...args: A): R => {
      catchUp();
      return f(...args);
    };

  return {
    listener,
    prompt: createPrompter({
      input,
      ...(opts.yes !== undefined ? { yes: opts.yes } : {}),
      host: caughtUp(host),
      onAutoAnswer,
    }),
    close: caughtUp(close),
    line: caughtUp(line),
    toldAbove: caughtUp((m) => (broken ? undefined : toldAbove(m))),
    showsEnd: opts.renderer === "default" || opts.renderer === "simple",
    writesLeftStopped: caughtUp(() => model?.writesLeftStopped()),
  };
}
