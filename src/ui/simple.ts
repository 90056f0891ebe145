/**
 * The "simple" renderer: one timestamped line per meaningful event, for CI logs, pipes and
 * `--renderer simple`. It never redraws, so what it prints must already be worth keeping:
 * polls are folded (wait status on change or every 30 s, copy every 10 points, progress
 * reads only when they fail or a state changes).
 */
import { codeFrame } from "../text.js";
import type { Colors } from "picocolors/types.js";
import { instanceLabel, type RunEvent, type RunEventMap } from "../events.js";
import { commitWords, windowEndWords, windowLength } from "../writes-words.js";
import {
  commandName,
  formatBytes,
  formatClock,
  formatDuration,
  formatWaitStatus,
  waitStatusKey,
  verifiedPart,
  writesStillStoppedLines,
  cutoverTail,
} from "./format.js";
import { UiModel, decisionLine, windowSummary } from "./model.js";
import { readinessKey, type ReadinessPlan } from "../model/readiness.js";

export interface SimpleUiOptions {
  write: (text: string) => void;
  colors: Colors;
  /** Repeat an unchanged wait status this often (default 30 s). */
  waitRepeatMs?: number;
  /** Print copy progress every this many percentage points (default 10). */
  copyStepPercent?: number;
  /** The runbook's readiness plan (`readinessPlan`): what readiness measures against, as in the live view. */
  readiness?: ReadinessPlan;
}

interface CommandGroup {
  name: string;
  target: RunEventMap["request.sent"]["target"];
  expected: number;
  sent: number;
  ok: number;
  failures: string[];
  maxMs: number;
}

export class SimpleUi {
  readonly model: UiModel;
  #requests = new Map<number, { group?: CommandGroup; label: string; get: boolean }>();
  #groups = new Map<string, CommandGroup>();
  #lastWait = new Map<number, { key: string; at: number }>();
  #states = new Map<number, string>();
  /** Service warnings (1.19+) already printed, per instance and text: each is printed once. */
  #warned = new Set<string>();
  #readErrors = new Map<string, string>();
  #copyMark = -1;
  #copyResets = 0;
  #verifierKey?: string;
  #held: string[] | undefined;
  #outcomes = { ok: 0, failed: 0, skipped: 0, interrupted: 0 };
  /** Instances read since readiness was last judged: it is judged on whole reads of the fleet, never half of one. */
  #readSince = new Set<number>();
  /** Readiness as last printed (`readinessKey`); "" when not asked. */
  #readinessKey = "";

  constructor(private readonly opts: SimpleUiOptions) {
    this.model = new UiModel(undefined, opts.readiness ?? {});
  }

  get #c(): Colors {
    return this.opts.colors;
  }

  #line(at: number, text: string, more: string[] = []): void {
    const out = `${this.#c.dim(formatClock(at))} ${text}\n${more.map((m) => `         ${m}\n`).join("")}`;
    if (this.#held) this.#held.push(out);
    else this.opts.write(out);
  }

  /** While a prompt is on screen, lines wait; interleaving them would garble the question. */
  hold(): void {
    this.#held ??= [];
  }

  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const l of held) this.opts.write(l);
  }

  #stepTag(index: number): string {
    return `[${index + 1}/${this.model.steps.length}]`;
  }

  listener = (e: RunEvent): void => {
    this.model.apply(e);
    const c = this.#c;
    switch (e.type) {
      case "run.started": {
        const names = e.instances.map(instanceLabel);
        const shown = names.length > 6 ? `${names.slice(0, 6).join(", ")}, … (${names.length})` : names.join(", ");
        this.#line(
          e.at,
          `${c.bold("▶ run")} ${e.runbook} (${e.abort === true ? "--abort" : e.mode}) · ${e.steps.length} steps · ${e.instances.length} instance${e.instances.length === 1 ? "" : "s"}: ${shown}`,
        );
        break;
      }
      case "step.started":
        this.#line(e.at, `${c.cyan("▶")} ${this.#stepTag(e.index)} ${e.kind} ${c.bold(e.title)}`);
        break;
      case "step.finished": {
        this.#flushGroups(e.at);
        this.#outcomes[e.outcome]++;
        const title = this.model.stepOf(e.index)?.title ?? e.id;
        const icon = e.outcome === "ok" ? c.green("✔") : e.outcome === "skipped" ? c.yellow("↓") : c.red("✖");
        const tail = e.error ? (e.outcome === "interrupted" ? ` (${e.error})` : `: ${e.error}`) : "";
        const text = `${icon} ${this.#stepTag(e.index)} ${title} ${e.outcome} in ${formatDuration(e.durationMs)}${tail}`;
        this.#line(e.at, e.outcome === "ok" || e.outcome === "skipped" ? text : c.red(text), [
          ...(e.place ? codeFrame(e.place, { gutter: c.blue, caret: c.red }) : []),
          ...(e.hint ? [c.dim(`hint: ${e.hint}`)] : []),
        ]);
        break;
      }
      case "step.skipped": {
        this.#outcomes.skipped++;
        const title = this.model.stepOf(e.index)?.title ?? e.id;
        this.#line(e.at, `${c.yellow("↓")} ${this.#stepTag(e.index)} ${title} skipped: ${e.reason}`);
        break;
      }
      case "request.sent":
        this.#sent(e);
        break;
      case "response.received":
        this.#received(e);
        break;
      case "progress.sampled":
        this.#readOk(instanceLabel(e.instance), e.at);
        this.#progress(e);
        this.#readiness(e.instance.index, e.at);
        break;
      case "poll.failed": {
        // a progress read that fails is printed once per new error, and once when it recovers
        const label = e.instance ? instanceLabel(e.instance) : "verifier";
        if (this.#readErrors.get(label) !== e.error) this.#line(e.at, c.yellow(`read ${label} failed: ${e.error}`));
        this.#readErrors.set(label, e.error);
        if (e.instance) this.#readiness(e.instance.index, e.at);
        break;
      }
      case "window.opened":
        this.#line(
          e.at,
          c.magenta(`⏱ writes stopped (${e.id}): the write-stop window is open until the destination takes writes`),
        );
        break;
      case "window.closed": {
        const w = this.model.window.current(e.seenAt);
        this.#line(
          e.at,
          c.magenta(
            e.reason === "undone"
              ? `⏱ writes are back on the source (undo): no cutover${w ? `; they were stopped ${windowSummary(w)}` : ""}`
              : e.reason === "by-hand"
                ? `⏱ write stop ${windowEndWords(e.reason)}: writes stay stopped until a person turns them back on${w ? `; stopped ${windowSummary(w)} so far` : ""}; no cutover`
                : `⏱ ${windowEndWords(e.reason)}: the destination takes writes${w ? `; writes were stopped ${windowSummary(w)}` : ""}`,
          ),
        );
        break;
      }
      case "window.writes-on": {
        // only the window this hook ended: one its undo closed had writes back on at the undo
        const w = this.model.window.current(e.at);
        const ended = w?.writesOnAt !== undefined ? w : undefined;
        this.#line(
          e.at,
          c.magenta(
            `⏱ application writes on again (${e.id})${ended ? `: ${windowSummary(ended)} without writes` : ""}`,
          ),
        );
        break;
      }
      case "verifier.sampled": {
        this.#readOk("verifier", e.at);
        const v = this.model.verifier;
        const key = v
          ? `${v.phase}|${v.generation ?? ""}|${String(v.error)}|${v.counters.failedTasks ?? 0}|${v.counters.metadataMismatchTasks ?? 0}`
          : "";
        if (key !== this.#verifierKey) {
          this.#verifierKey = key;
          const line = this.model.verifierLine(c);
          if (line) this.#line(e.at, line);
        }
        break;
      }
      case "wait.status": {
        if (e.met) {
          this.#lastWait.delete(e.index);
          break;
        }
        const key = waitStatusKey(e);
        const last = this.#lastWait.get(e.index);
        if (last && last.key === key && e.at - last.at < (this.opts.waitRepeatMs ?? 30_000)) break;
        this.#lastWait.set(e.index, { key, at: e.at });
        this.#line(e.at, `${c.yellow("…")} waiting (${e.id}):`, formatWaitStatus(e));
        break;
      }
      case "wait.slow":
        this.#line(e.at, c.yellow(`⚠ no progress for ${formatDuration(e.stalledForMs)} (${e.id}): ${e.detail}`));
        break;
      case "decision":
        this.#line(e.at, decisionLine(e, c));
        break;
      case "commit.sent":
        this.#line(
          e.at,
          `${c.bold("commit sent")} to ${e.instances.length} instance${e.instances.length === 1 ? "" : "s"} (skew ${formatDuration(e.skewMs)})`,
        );
        break;
      case "hook.started":
        this.#line(e.at, `${e.undo ? "undo " : ""}hook ${e.use} started (${e.id})`);
        break;
      case "hook.finished": {
        const text = `${e.undo ? "undo " : ""}hook ${e.use} ${e.ok ? "ok" : "failed"} in ${formatDuration(e.durationMs)}${e.error ? `: ${e.error}` : ""}`;
        this.#line(e.at, e.ok ? text : c.red(text));
        break;
      }
      case "log":
        if (e.level === "debug") break;
        this.#line(
          e.at,
          e.level === "error"
            ? c.red(`error: ${e.message}`)
            : e.level === "warn"
              ? c.yellow(`warn: ${e.message}`)
              : e.message,
        );
        break;
      case "run.finished": {
        this.#flushGroups(e.at);
        const o = this.#outcomes;
        const counts = [
          `${o.ok} ok`,
          o.failed ? `${o.failed} failed` : "",
          o.skipped ? `${o.skipped} skipped` : "",
          o.interrupted ? `${o.interrupted} interrupted` : "",
        ]
          .filter(Boolean)
          .join(", ");
        const head = `■ run ${e.aborted ? "aborted" : e.outcome} in ${formatDuration(e.durationMs)}${cutoverTail(e)}${e.split ? ` · split: ${e.split}` : ` · ${commitWords(e)}`}${verifiedPart(e)} · exit ${e.exitCode} · steps: ${counts}`;
        const open = this.model.window.open ? this.model.window.current(e.at) : undefined;
        const stuck = this.model.writesLeftStopped();
        this.#line(e.at, e.outcome === "ok" || (e.aborted && e.exitCode === 0) ? c.green(head) : c.red(head), [
          ...(e.message ? [this.model.toldAbove(e.message) ?? e.message] : []),
          ...(stuck ? writesStillStoppedLines(stuck, c.red) : []),
          ...(open && !stuck
            ? [
                c.magenta(
                  `⏱ no read has shown the destination taking writes: writes stopped ${windowLength(open.measuredMs, { atLeast: open.openedAt === undefined })} ago and the window is still open`,
                ),
              ]
            : []),
        ]);
        break;
      }
    }
  };

  #sent(e: RunEventMap["request.sent"] & { at: number }): void {
    const label = e.instance ? instanceLabel(e.instance) : e.target;
    if (e.method === "GET") {
      this.#requests.set(e.id, { label, get: true });
      return;
    }
    const key = `${e.target} ${e.method} ${e.path}`;
    let group = this.#groups.get(key);
    if (!group) {
      const expected = e.target === "service" ? Math.max(1, this.model.instances.size) : 1;
      group = { name: commandName(e.path), target: e.target, expected, sent: 0, ok: 0, failures: [], maxMs: 0 };
      this.#groups.set(key, group);
    }
    group.sent++;
    this.#requests.set(e.id, { group, label, get: false });
  }

  #received(e: RunEventMap["response.received"] & { at: number }): void {
    const req = this.#requests.get(e.id);
    this.#requests.delete(e.id);
    if (!req) return;
    const why = e.error ?? (e.status !== undefined ? `HTTP ${e.status}` : "failed");
    if (req.get) {
      // a progress read that fails is printed once per new error, and once when it recovers
      const prev = this.#readErrors.get(req.label);
      if (!e.ok && prev !== why) this.#line(e.at, this.#c.yellow(`read ${req.label} failed: ${why}`));
      if (e.ok && prev !== undefined) this.#line(e.at, `read ${req.label} ok again`);
      if (e.ok) this.#readErrors.delete(req.label);
      else this.#readErrors.set(req.label, why);
      return;
    }
    const g = req.group;
    if (!g) return;
    if (e.ok) g.ok++;
    else g.failures.push(`${req.label}: ${why}`);
    g.maxMs = Math.max(g.maxMs, e.durationMs);
    if (g.ok + g.failures.length >= Math.max(g.expected, g.sent)) this.#flushGroup(g, e.at);
  }

  /**
   * Whether each instance is ready to commit, in the words of the live view, `status` and watch
   * (`UiModel.readinessLines`, src/model/readiness.ts), printed when it changes (`readinessKey`:
   * a verdict, or what holds an instance back; not a lag's figure), judged once every instance
   * has been read again, so a fleet read half-way never prints.
   */
  #readiness(index: number, at: number): void {
    this.#readSince.add(index);
    if (this.#readSince.size < this.model.instances.size) return;
    this.#readSince.clear();
    const rs = this.model.readiness(at);
    const key = rs ? rs.map(readinessKey).join("\u0001") : "";
    if (key === this.#readinessKey) return;
    this.#readinessKey = key;
    if (rs) this.#line(at, this.#c.dim("ready to commit?"), this.model.readinessLines(6, at));
  }

  #readOk(label: string, at: number): void {
    if (!this.#readErrors.has(label)) return;
    this.#readErrors.delete(label);
    this.#line(at, `read ${label} ok again`);
  }

  #flushGroup(g: CommandGroup, at: number): void {
    for (const [k, v] of this.#groups) if (v === g) this.#groups.delete(k);
    const answered = g.ok + g.failures.length;
    const pending = g.sent - answered;
    const text = `${g.name} → ${g.ok}/${g.sent} ok${pending > 0 ? `, ${pending} unanswered` : ""} (${formatDuration(g.maxMs)})`;
    this.#line(at, g.failures.length === 0 && pending === 0 ? text : this.#c.red(text), g.failures);
  }

  #flushGroups(at: number): void {
    for (const g of [...this.#groups.values()]) if (g.sent > 0) this.#flushGroup(g, at);
  }

  #progress(e: RunEventMap["progress.sampled"] & { at: number }): void {
    const view = this.model.instances.get(e.instance.index);
    const state = view?.state;
    if (state !== undefined && this.#states.get(e.instance.index) !== state) {
      const prev = this.#states.get(e.instance.index);
      this.#states.set(e.instance.index, state);
      this.#line(e.at, `${instanceLabel(e.instance)} ${prev ? `${prev} → ` : ""}${this.#c.bold(state)}`);
    }
    for (const w of view?.warnings ?? []) {
      const text = typeof w === "string" ? w : JSON.stringify(w);
      const key = `${e.instance.index}\0${text}`;
      if (this.#warned.has(key)) continue;
      this.#warned.add(key);
      this.#line(e.at, this.#c.yellow(`${instanceLabel(e.instance)} service warning: ${text}`));
    }
    if (this.model.copy.resets !== this.#copyResets) {
      this.#copyResets = this.model.copy.resets;
      // a changed estimate or a restart at 0 of 1 makes old marks meaningless: start counting again
      if (this.model.copy.resetKind !== "began" && this.model.copy.resetKind !== "joined") {
        if (this.#copyMark >= 0)
          this.#line(e.at, this.#c.yellow(`copy progress reset: ${this.model.copy.resetReason ?? "changed"}`));
        this.#copyMark = -1;
      }
    }
    const v = this.model.copyView();
    if (!v.started || v.fraction === undefined) return;
    const step = this.opts.copyStepPercent ?? 10;
    const mark = Math.floor((v.fraction * 100) / step) * step;
    if (mark <= this.#copyMark) return;
    this.#copyMark = mark;
    const eta = v.done ? "done" : `ETA ${v.eta}`;
    this.#line(e.at, `copy ${mark}% ${formatBytes(v.copied)} / ${formatBytes(v.total)} ${eta}`);
  }
}
