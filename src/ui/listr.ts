/**
 * The "default" renderer: a listr2 task list, one task per runbook step, driven by events.
 *
 * listr2 runs promises, the runner emits events; each step's task therefore waits on a small
 * mailbox (`Slot`) that events settle and prompts queue into. Prompts are shown *inside* the
 * step's task through listr2's inquirer adapter, so the renderer owns the screen and draws the
 * prompt under the task list instead of two writers fighting over the cursor.
 */
import { codeFrame } from "../text.js";
import { errorMessage } from "../errors.js";
import { confirm as inquirerConfirm, select as inquirerSelect } from "@inquirer/prompts";
import {
  DefaultRenderer,
  Listr,
  ListrDefaultRendererLogLevels,
  ListrLogger,
  ListrPromptAdapter,
  ListrTaskEventType,
  ProcessOutput,
} from "listr2";
import type { ListrDefaultRendererTask, ListrTaskWrapper } from "listr2";
import type { Colors } from "picocolors/types.js";
import type { RunEvent } from "../events.js";
import { cutoverTail, formatDuration, verifiedPart, writesStillStoppedLines } from "./format.js";
import { commitWords } from "../writes-words.js";
import type { ReadinessPlan } from "../model/readiness.js";
import { UiModel, decisionLine, hookLine, logLine } from "./model.js";
import { directPromptHost } from "./prompts.js";
import type { InputStream, PromptHost, PromptSpec } from "./prompts.js";
import { frameWriter, type FrameStream, type FrameWriter, type WrapAnsi } from "./frame-writer.js";
import { memoizedWrap } from "./wrap.js";

type Settle =
  | { kind: "ok"; durationMs: number; notes: string[] }
  | { kind: "failed"; message: string }
  | { kind: "skipped"; reason: string };

/** Per-step mailbox between the event stream and the step's listr2 task. */
interface Slot {
  index: number;
  title: string;
  settle?: Settle;
  queue: ((task: TaskWrapper) => Promise<void>)[];
  wake?: () => void;
  task?: TaskWrapper;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- listr2's wrapper generics are not needed here
type TaskWrapper = ListrTaskWrapper<any, any, any>;

/**
 * At most one frame of the live view per this many ms, and never drawn inside the event that
 * asked for it (issue 41). listr2 redraws the whole list, hard-wrapped to the terminal, on every
 * change of a task's output, title or state; the panel was set on every run event. Inside the
 * write-stop window a 64-instance fleet's reads are hundreds of events a second, and each frame
 * costs milliseconds: `bench/downtime.mjs --renderer default` measured the runner's share of the
 * window at 64 instances 1.4 to 1.7 s with the live view against 0.07 to 0.09 s without it (the
 * operator's terminal, not the benchmark's silent renderer, is where a cutover runs).
 */
export const FRAME_MS = 100;

/** What the renderer asks of the list it draws. */
interface RendererHooks {
  /** A question about a step not started yet shows this mark instead of the spinner. */
  notStarted(taskId: string): string | undefined;
  /** Right before a frame is drawn: the panels are built now, once per frame, not once per event. */
  beforeDraw(): void;
  /** A frame could not be drawn: the run goes on (said once, under the list when it ends). */
  failed(err: unknown): void;
  /**
   * The renderer listr2 made: the list asks it for a frame when an event changes what it shows
   * (`frame`), or for one at once (`now`): a prompt's task is drawn before its question's first
   * output, which listr2's renderer only hears once it has drawn the task in its prompt state.
   */
  created(draw: { frame: () => void; now: () => void }): void;
  /** The stream the list draws on: its size now (a terminal's changes when it is resized). */
  size(): { columns?: number | undefined; rows?: number | undefined };
}

/**
 * listr2 picks the default renderer only when `process.stdout` is a TTY; ours draws on the
 * stream it is given (stderr by default), so that check is lifted per renderer class instead of
 * with listr2's `forceTTY`, which would rewrite `process.stdout.isTTY` for the whole process.
 * A task that shows a question about a step not started yet gets the question's mark, not the
 * spinner listr2 draws for any prompting task: the step is not running (issue 39, point 3).
 * Every redraw listr2 asks for (`update`: a task's change, the spinner's tick) is coalesced into
 * the next frame, `FRAME_MS` after the last one at the soonest (issue 41).
 */
function streamRenderer(hooks: RendererHooks): typeof DefaultRenderer {
  return class StreamRenderer extends DefaultRenderer {
    static override nonTTY = true;
    #pending: Scheduled | undefined;
    #last = -Infinity;
    #drawing = false;
    #ended = false;
    #ready = false;

    constructor(...args: ConstructorParameters<typeof DefaultRenderer>) {
      super(...args);
      hooks.created({ frame: () => this.update(), now: () => this.#drawNow() });
    }

    protected override style(task: ListrDefaultRendererTask, output?: boolean): string {
      return (output ? undefined : hooks.notStarted(task.id)) ?? super.style(task, output);
    }

    override async render(): Promise<void> {
      // listr2 makes its log updater here (imports first): no frame can be drawn before
      await super.render();
      // listr2 wraps every line of every frame to the terminal (wrap-ansi measures the row so far
      // once per word, each a pass of the grapheme segmenter over a line with an icon in it): more
      // than half of a frame's time at 64 instances in a CPU profile of bench/downtime.mjs, most of
      // it lines the frame before wrapped already (issue 41)
      const self = this as unknown as {
        wrap: WrapAnsi;
        updater: FrameWriter;
        logger: { process: { stdout: { write(s: string): unknown } } };
      };
      self.wrap = memoizedWrap(self.wrap);
      // and log-update wraps the whole frame again on every draw (src/ui/frame-writer.ts). It writes
      // past listr2's hijack of the stream (its `stdout` copy keeps the write it replaced), and reads
      // the size of the stream itself at each frame: the copy's is the size when it was made
      const past = self.logger.process.stdout;
      const stream: FrameStream = {
        write: (chunk) => past.write(chunk),
        get columns() {
          return hooks.size().columns;
        },
        get rows() {
          return hooks.size().rows;
        },
      };
      self.updater = frameWriter(stream, self.wrap);
      this.#ready = true;
      this.update();
    }

    override update(): void {
      // the panels set while a frame is built ask for one: this frame draws them
      if (!this.#ready || this.#drawing || this.#pending || this.#ended) return;
      this.#pending = afterQueuedImmediates(() => this.#draw(), this.#last + FRAME_MS - performance.now());
    }

    #cancel(): void {
      this.#pending?.cancel();
      this.#pending = undefined;
    }

    #draw(): void {
      this.#pending = undefined;
      if (this.#ended) return;
      this.#last = performance.now();
      // a frame is drawn from a timer, outside the run's listener: what throws here must not end
      // the process (a broken view must not break a cutover, src/run/emitter.ts)
      try {
        this.#drawing = true;
        try {
          hooks.beforeDraw();
        } finally {
          this.#drawing = false;
        }
        super.update();
      } catch (err) {
        hooks.failed(err);
      }
    }

    #drawNow(): void {
      if (!this.#ready) return;
      this.#cancel();
      this.#draw();
    }

    override end(): void {
      this.#ended = true;
      this.#cancel();
      // the last frame: what every step ended as (listr2 builds it from the tasks, not the panels)
      super.end();
    }
  };
}

/** A call to come, until cancelled. */
export interface Scheduled {
  cancel(): void;
}

/**
 * Calls `fn` in `ms` (0 or less: at the next turn) from an immediate queued then: after every
 * immediate queued before it fires, whichever phase of the event loop asked. undici writes a
 * dispatched request from an immediate; a frame drawn straight from its timer, or from an
 * immediate the event queued, came before it: 5 to 7 ms at 64 instances between the commit's
 * dispatch and its requests leaving (issue 41, marks in the runner).
 */
export function afterQueuedImmediates(fn: () => void, ms: number): Scheduled {
  let immediate: ReturnType<typeof setImmediate> | undefined;
  const timer = setTimeout(
    () => {
      immediate = setImmediate(fn).unref();
    },
    Math.max(0, ms),
  ).unref();
  return {
    cancel() {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}

/** At most this many lines stay under a finished step's title (a fleet of 50 would fill the screen). */
const KEPT_MAX = 6;

/** The mark of a step asked about before it runs: a question, not a spinner. */
const ASKED_MARK = "?";

export interface ListrUiOptions {
  out: NodeJS.WritableStream;
  input: InputStream;
  colors: Colors;
  /** The runbook's readiness plan (`readinessPlan`): what readiness measures against. */
  readiness?: ReadinessPlan;
}

export class ListrUi {
  readonly model: UiModel;
  #slots = new Map<number, Slot>();
  #order: Slot[] = [];
  #listr?: Listr<object>;
  #done?: Promise<void>;
  /** The list has drawn its last frame: from here on, plain lines are written directly. */
  #ended = false;
  #finished?: RunEvent & { type: "run.finished" };
  /** Run-level lines (undo hooks, after their step closed), printed under the final list. */
  #after: string[] = [];
  /** Asks the renderer for a frame (`FRAME_MS`): the panels are built right before it is drawn. */
  #frame: (() => void) | undefined;
  /** Draws a frame at once (a prompt's task, before its question's first output). */
  #drawNow: (() => void) | undefined;
  /** The first frame that could not be drawn, said when the list ends. */
  #drawFailed: string | undefined;
  /** Redraws the panel's clocks each second while the list draws (a confirm sends no events). */
  #clock: ReturnType<typeof setInterval> | undefined;
  /**
   * The step a question is on screen for, and whether it has not started (a `--step` question):
   * its panel is then the live fleet and clocks, redrawn under the question like any panel.
   */
  #asking: { slot: Slot; before: boolean } | undefined;

  constructor(private readonly opts: ListrUiOptions) {
    this.model = new UiModel(undefined, opts.readiness ?? {});
  }

  listener = (e: RunEvent): void => {
    this.model.apply(e);
    const c = this.opts.colors;
    switch (e.type) {
      case "run.started":
        this.#start(e.steps.map((s) => ({ index: s.index, title: `${s.title} ${c.dim(`(${s.kind})`)}` })));
        return;
      case "step.started":
        this.#advanceTo(e.index);
        break;
      case "step.finished": {
        const slot = this.#slots.get(e.index);
        if (slot && !slot.settle) {
          if (e.outcome === "ok")
            this.#settle(slot, { kind: "ok", durationMs: e.durationMs, notes: this.#kept(e.index) });
          else if (e.outcome === "skipped") this.#settle(slot, { kind: "skipped", reason: e.error ?? "skipped" });
          else {
            const why =
              e.outcome === "interrupted" ? `interrupted${e.error ? ` (${e.error})` : ""}` : (e.error ?? "failed");
            const frame = e.place ? `\n${codeFrame(e.place, { gutter: c.blue, caret: c.red }).join("\n")}` : "";
            this.#settle(slot, {
              kind: "failed",
              message: `${why}${frame}${e.hint ? `\n${c.dim(`hint: ${e.hint}`)}` : ""}`,
            });
          }
        }
        break;
      }
      case "step.skipped": {
        const slot = this.#slots.get(e.index);
        if (slot && !slot.settle)
          this.#settle(slot, { kind: "skipped", reason: `${slot.title} — skipped: ${e.reason}` });
        break;
      }
      case "run.finished":
        this.#finished = e;
        // --abort runs no step: a step an earlier run ran is not "not run" (status tells what ran)
        for (const slot of this.#order)
          if (!slot.settle)
            this.#settle(slot, {
              kind: "skipped",
              reason: `${slot.title} — ${e.aborted ? "not run by --abort" : "not run"}`,
            });
        return;
      case "hook.started":
      case "hook.finished":
        if (e.undo)
          this.#lineAfter(
            hookLine(
              {
                use: e.use,
                undo: true,
                ...(e.type === "hook.finished"
                  ? { ok: e.ok, durationMs: e.durationMs, ...(e.error ? { error: e.error } : {}) }
                  : {}),
              },
              c,
            ),
          );
        break;
      case "decision":
        // before the list exists nothing else draws: print at once (e.g. resume decisions)
        if (!this.#drawing()) this.opts.out.write(`${decisionLine(e, c)}\n`);
        break;
      case "log":
        if (!this.#drawing() && e.level !== "debug") this.opts.out.write(`${logLine(e, c)}\n`);
        break;
      default:
        break;
    }
    this.#frame?.();
    this.#tick();
  };

  #tick(): void {
    // the panel's wall clock and time left move on their own: redrawn each second while drawing
    const open = this.#drawing();
    if (open && !this.#clock) {
      this.#clock = setInterval(() => this.#frame?.(), 1000);
      this.#clock.unref();
    } else if (!open && this.#clock) {
      clearInterval(this.#clock);
      this.#clock = undefined;
    }
  }

  #drawing(): boolean {
    return this.#listr !== undefined && !this.#ended;
  }

  /** A line that belongs to no open step: under the list once it has ended. */
  #lineAfter(line: string): void {
    if (this.#drawing()) this.#after.push(line);
    else this.opts.out.write(`${line}\n`);
  }

  /** The task a prompt or a step-less event belongs to: the running step, else the next one. */
  #host(): Slot | undefined {
    const cur = this.model.current !== undefined ? this.#slots.get(this.model.current) : undefined;
    if (cur && !cur.settle) return cur;
    return this.#order.find((s) => !s.settle);
  }

  #refresh(): void {
    for (const slot of this.#order) {
      if (!slot.task || slot.settle) continue;
      // while a question waits: the clock, the write-stop window and the fleet as read now (the
      // watch reads it, src/steps/kit/watch.ts), redrawn every second, never frozen in the question
      const asked = this.#asking?.slot === slot;
      const lines = asked
        ? this.model.promptContext(this.opts.colors, slot.index)
        : this.model.panel(slot.index, this.opts.colors);
      if (slot === this.#host()) {
        // events without a step (run-level decisions, logs) show under whatever is running now
        const loose = [
          ...this.model
            .decisionsOf(-1)
            .slice(-2)
            .map((d) => decisionLine(d, this.opts.colors)),
        ];
        lines.push(...loose);
      }
      slot.task.output = lines.length > 0 ? lines.join("\n") : " ";
    }
  }

  /**
   * What a step that succeeded keeps under its title once its panel is gone: how a command whose
   * answer was lost was settled ("no answer from shard-c …", "commit took effect on shard-c …: not
   * sent again"). The line renderers print every decision; the panel showed these only while the
   * step ran (issue 39, point 8).
   */
  #kept(index: number): string[] {
    const lines = this.model
      .decisionsOf(index)
      .filter((d) => d.kind === "reconcile")
      .map((d) => decisionLine(d, this.opts.colors));
    if (lines.length <= KEPT_MAX) return lines;
    const more = `… and ${lines.length - (KEPT_MAX - 1)} more (the journal and \`syncbook report\` have every one)`;
    return [...lines.slice(0, KEPT_MAX - 1), this.opts.colors.yellow(more)];
  }

  /** The runner moved on to step `index`: anything before it that was never settled is over. */
  #advanceTo(index: number): void {
    for (const slot of this.#order) {
      if (slot.index >= index) break;
      if (!slot.settle) this.#settle(slot, { kind: "skipped", reason: `${slot.title} — no outcome reported` });
    }
  }

  #settle(slot: Slot, s: Settle): void {
    slot.settle = s;
    slot.wake?.();
  }

  #start(steps: { index: number; title: string }[]): void {
    if (this.#listr) return;
    const { out } = this.opts;
    const slots = steps.map((s): Slot => ({ index: s.index, title: s.title, queue: [] }));
    for (const s of slots) this.#slots.set(s.index, s);
    this.#order = slots;
    // Hijack both process streams while drawing (listr2 buffers stray writes and prints them
    // after the list ends), but draw on `out`. A custom `out` (tests) is used for both.
    const other = out === process.stderr ? process.stdout : out === process.stdout ? process.stderr : out;
    const processOutput = new ProcessOutput(out as NodeJS.WriteStream, other as NodeJS.WriteStream, {
      leaveEmptyLine: false,
    });
    const renderer = streamRenderer({
      notStarted: (id) =>
        this.#asking?.before && this.#asking.slot.task?.task.id === id
          ? this.opts.colors.yellow(ASKED_MARK)
          : undefined,
      beforeDraw: () => this.#refresh(),
      failed: (err) => {
        this.#drawFailed ??= errorMessage(err);
      },
      created: (draw) => {
        this.#frame = draw.frame;
        this.#drawNow = draw.now;
      },
      size: () => out as { columns?: number; rows?: number },
    });
    this.#listr = new Listr<object>(
      slots.map((slot) => ({
        title: slot.title,
        task: (_ctx: object, task: TaskWrapper) => this.#runSlot(slot, task),
        // keep only the newest panel: it is redrawn whole on each event
        rendererOptions: { outputBar: 1, persistentOutput: false },
      })),
      {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment -- a DefaultRenderer subclass is a valid renderer value; the generic signature cannot say so
        renderer: renderer as any,
        rendererOptions: {
          logger: new ListrLogger({ processOutput, useIcons: true }),
          collapseSkips: true,
          collapseErrors: false,
          showErrorMessage: true,
          formatOutput: "wrap",
          // listr2's own colors follow process.stdout at import time; ours follow `out` / --color
          color: iconColors(this.opts.colors),
        },
        fallbackRendererCondition: false,
        silentRendererCondition: false,
        // the runner owns Ctrl-C (undo hooks, journal): listr2 must not exit on SIGINT itself
        registerSignalListeners: false,
        exitOnError: false,
        concurrent: false,
      },
    );
    this.#done = this.#listr.run().then(
      () => this.#end(),
      () => this.#end(),
    );
  }

  async #runSlot(slot: Slot, task: TaskWrapper): Promise<void> {
    slot.task = task;
    this.#frame?.();
    for (;;) {
      const next = slot.queue.shift();
      if (next) {
        await next(task).catch(() => undefined);
        continue;
      }
      if (slot.settle) break;
      await new Promise<void>((resolve) => (slot.wake = resolve));
      slot.wake = undefined;
    }
    const s = slot.settle;
    if (s.kind === "ok")
      task.title = [`${slot.title} ${this.opts.colors.dim(formatDuration(s.durationMs))}`, ...s.notes].join("\n");
    else if (s.kind === "skipped") task.skip(s.reason);
    else throw new Error(s.message);
  }

  #end(): void {
    this.#ended = true;
    this.#tick();
    if (this.#drawFailed !== undefined)
      this.#after.unshift(
        this.opts.colors.yellow(
          this.model.rehearsal
            ? `live view: a frame could not be drawn (${this.#drawFailed}); the rehearsal went on, and its verdict below says what it found`
            : `live view: a frame could not be drawn (${this.#drawFailed}); the run went on, and the journal has every event (syncbook status, syncbook report)`,
        ),
      );
    if (this.#after.length > 0) this.opts.out.write(`${this.#after.join("\n")}\n`);
    this.#after = [];
  }

  /** Shows a prompt inside the step's task so the renderer draws it; directly when no list runs. */
  readonly promptHost: PromptHost = (spec, signal) => {
    // a question that names its step (--step's) is about a step not started yet
    const asked = spec.step;
    const before = asked !== undefined;
    const slot = before ? this.#slots.get(asked) : this.#host();
    if (!this.#listr || !slot || slot.settle) return directPromptHost(this.opts.input, this.opts.out)(spec, signal);
    if (before) this.#advanceTo(asked);
    return new Promise<unknown>((resolve, reject) => {
      slot.queue.push(async (task) => {
        if (signal.aborted) return reject(new Error("aborted"));
        const title = task.title;
        try {
          // the fleet, the clock and the write-stop window stay on screen above the question, live
          // (a "point of no return" is asked with them in view); a step asked about is not started
          this.#asking = { slot, before };
          if (before) task.title = `${slot.title} ${this.opts.colors.yellow("— not started: waiting for your answer")}`;
          this.#frame?.();
          resolve(await askInTask(task, spec, signal, this.opts.input, () => this.#drawNow?.()));
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        } finally {
          if (this.#asking?.slot === slot) this.#asking = undefined;
          if (before) task.title = title;
          this.#frame?.();
        }
      });
      slot.wake?.();
    });
  };

  async close(): Promise<void> {
    // a runner that died without run.finished must not leave the list (and the cursor) hanging
    for (const slot of this.#order)
      if (!slot.settle) this.#settle(slot, { kind: "skipped", reason: `${slot.title} — not run` });
    await this.#done;
    // the list can end before run.finished (its last step settled first): the summary waits for close
    const f = this.#finished;
    if (f) {
      const c = this.opts.colors;
      const word = f.aborted ? "aborted" : f.outcome;
      const outcome = f.outcome === "ok" || (f.aborted && f.exitCode === 0) ? c.green(word) : c.red(word);
      this.opts.out.write(
        `run ${outcome} in ${formatDuration(f.durationMs)}${cutoverTail(f)}${f.split ? ` · split: ${f.split}` : ` · ${commitWords(f)}`}${verifiedPart(f)} · exit ${f.exitCode}${f.message ? ` · ${this.model.toldAbove(f.message) ?? f.message}` : ""}\n`,
      );
      const stuck = this.model.writesLeftStopped();
      if (stuck) this.opts.out.write(`${writesStillStoppedLines(stuck, c.red).join("\n")}\n`);
      this.#finished = undefined;
    }
  }
}

function iconColors(c: Colors): Partial<Record<ListrDefaultRendererLogLevels, (s?: string) => string>> {
  const L = ListrDefaultRendererLogLevels;
  const f = (fn: (s: string) => string) => (s?: string) => fn(s ?? "");
  return {
    [L.SKIPPED_WITH_COLLAPSE]: f(c.yellow),
    [L.SKIPPED_WITHOUT_COLLAPSE]: f(c.yellow),
    [L.PENDING]: f(c.yellow),
    [L.COMPLETED]: f(c.green),
    [L.COMPLETED_WITH_FAILED_SUBTASKS]: f(c.yellow),
    [L.COMPLETED_WITH_FAILED_SISTER_TASKS]: f(c.red),
    [L.RETRY]: f(c.yellow),
    [L.ROLLING_BACK]: f(c.red),
    [L.ROLLED_BACK]: f(c.red),
    [L.FAILED]: f(c.red),
    [L.FAILED_WITH_FAILED_SUBTASKS]: f(c.red),
    [L.WAITING]: f(c.dim),
    [L.PAUSED]: f(c.yellow),
  };
}

/**
 * Runs one inquirer prompt as the task's prompt, drawn by the renderer. Same protocol as
 * `@listr2/prompt-adapter-inquirer`, minus its task-state listener: that one outlives the prompt
 * and, when the step is later skipped, "cancels" the finished prompt and restores the task to
 * running, so a skipped step ended up shown as completed.
 */
class InTaskPrompt extends ListrPromptAdapter {
  // the base class types `run` as variadic `any`; the one caller below passes exactly these
  async run<T = unknown>(...args: unknown[]): Promise<T> {
    const [spec, signal, input, drawNow] = args as [PromptSpec, AbortSignal, InputStream, () => void];
    const context = { input, output: this.wrapper.stdout(ListrTaskEventType.PROMPT), signal };
    this.reportStarted();
    try {
      // the renderer hears the question's output only once it has drawn the task as prompting
      drawNow();
      const answer =
        spec.kind === "confirm"
          ? await inquirerConfirm({ message: spec.message, default: false }, context)
          : await inquirerSelect({ message: spec.message, choices: spec.choices, default: "run" }, context);
      this.reportCompleted();
      return answer as T;
    } catch (e) {
      this.reportFailed();
      throw e;
    }
  }
}

function askInTask(
  task: TaskWrapper,
  spec: PromptSpec,
  signal: AbortSignal,
  input: InputStream,
  drawNow: () => void,
): Promise<unknown> {
  return task.prompt(InTaskPrompt).run<unknown>(spec, signal, input, drawNow);
}
