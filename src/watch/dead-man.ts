/**
 * The dead-man's switch (issue 38 point 2): when the runner of an unfinished cutover is gone,
 * `syncbook watch`, the process that outlives it, tells the runbook's notifiers once what happened,
 * what state it left and the command that helps next (`RunnerLost`, src/plugin/api.ts).
 *
 * Once per run of the cutover, whatever the number of open pages, watch processes or restarts:
 * the telling is claimed by creating a file beside the journal (`watch-told.<cutover>.run<n>.json`,
 * `O_EXCL`: of two watch processes on one folder only one creates it), and the claim stays, so a
 * restarted watch sees it and sends nothing. What was delivered is written into it afterwards.
 * A folder watch cannot write to (a read-only mount on another machine) cannot hold the claim:
 * then watch tells anyway and says a restart may tell again (a page lost is the greater harm; a
 * pager's `dedup_key`, the cutover's, folds a repeat into the one alert).
 *
 * The cutover's id is the notifiers' (`ctx.cutover`), so PagerDuty's `dedup_key` is the one the
 * runner's own pages used: one cutover, one alert, which the resumed run's success resolves.
 */
import { open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../errors.js";
import type { RunnerLost } from "../plugin/api.js";
import { hearsRunnerLost } from "../plugin/events.js";
import { sendNotification, type PluginRunContext } from "../plugin/invoke.js";
import type { NotifyEntry } from "../plugin/deliveries.js";
import type { PluginRegistry } from "../plugin/registry.js";
import type { CutoverModel } from "../model/contract.js";
import { delay } from "../timers.js";
import type { RunnerVerdict } from "./runner.js";

/** Attempts per notifier, and the waits between them (a pager's own client retries inside each). */
const BACKOFF_MS = [1_000, 3_000] as const;

export interface DeadManOptions {
  folder: string;
  registry: PluginRegistry;
  entries: readonly NotifyEntry[];
  /** The runbook's plugin context (its name, folder, redaction, environment); the cutover id is added per alarm. */
  ctx: PluginRunContext;
  /** Where watch says what it did (its stderr). */
  say: (line: string) => void;
  signal?: AbortSignal;
}

/** What one alarm came to, as watch serves it (`/state.json` `told`). */
export interface DeadManRecord {
  run: number;
  cutover?: string;
  at: number;
  /** `sent` by this process, `already` told (the claim was there: another watch, or before a restart), `none` (no entry hears it). */
  by: "sent" | "already" | "none";
  delivered: string[];
  failed: string[];
  /** The claim could not be written: a restart of watch may tell again. */
  unclaimed?: string;
}

/** The claim's file name: the cutover id is made of letters, digits and dashes (src/journal/cutover.ts); anything else is replaced. */
export function claimFile(cutover: string | undefined, run: number): string {
  return `watch-told.${(cutover ?? "unknown").replace(/[^A-Za-z0-9_-]/g, "_")}.run${run}.json`;
}

/** The notification, from the runner's verdict and the model (pure). */
export function runnerLost(v: RunnerVerdict, m: CutoverModel, at: number): RunnerLost {
  const w = m.window;
  const writesStopped = (w?.open === true && w.closedBy === undefined) || m.writesLeft !== undefined;
  return {
    type: "runner.lost",
    at,
    how: v.state === "silent" ? "silent" : "dead",
    run: m.runs.at(-1)?.n ?? 0,
    headline: v.headline,
    left: v.left,
    ...(v.next !== undefined ? { next: v.next } : {}),
    critical: writesStopped || m.commits.length > 0 || m.commitRequested !== undefined,
  };
}

export class DeadManSwitch {
  readonly #o: DeadManOptions;
  readonly #entries: { index: number; entry: NotifyEntry }[];

  constructor(o: DeadManOptions) {
    this.#o = o;
    this.#entries = o.entries.flatMap((entry, index) => (hearsRunnerLost(entry.on) ? [{ index, entry }] : []));
  }

  /** How many of the runbook's entries hear of it. */
  get listeners(): number {
    return this.#entries.length;
  }

  /** Tells every entry that hears it, once per run of the cutover (see the file's header). Never throws. */
  async tell(v: RunnerVerdict, m: CutoverModel, now: number): Promise<DeadManRecord> {
    const n = runnerLost(v, m, now);
    const cutover = m.cutover.id;
    const base = { run: n.run, ...(cutover !== undefined ? { cutover } : {}), at: now };
    if (!this.#entries.length) return { ...base, by: "none", delivered: [], failed: [] };
    const file = join(this.#o.folder, claimFile(cutover, n.run));
    let unclaimed: string | undefined;
    try {
      const fh = await open(file, "wx");
      try {
        await fh.writeFile(
          `${JSON.stringify({ ...base, state: "telling", pid: process.pid, headline: n.headline })}\n`,
        );
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") {
        const was = await readFile(file, "utf8").catch(() => "");
        this.#o.say(
          `syncbook watch: the notifiers were already told that run ${n.run}'s runner is gone (${file}${was ? "" : ", being written"}); not again`,
        );
        return { ...base, by: "already", delivered: [], failed: [] };
      }
      unclaimed = this.#o.ctx.redact(errorMessage(err));
      this.#o.say(
        `syncbook watch: cannot record the telling beside the journal (${unclaimed}): the notifiers are told now, and a restarted watch may tell them again`,
      );
    }
    const ctx: PluginRunContext = { ...this.#o.ctx, ...(cutover !== undefined ? { cutover } : {}) };
    const delivered: string[] = [];
    const failed: string[] = [];
    await Promise.all(
      this.#entries.map(async ({ index, entry }) => {
        const label = `${entry.use} (notify #${index + 1})`;
        const call = entry.with ? { use: entry.use, with: entry.with } : { use: entry.use };
        for (let attempt = 0; ; attempt++) {
          const r = await sendNotification(this.#o.registry, call, n, ctx, {
            ...(this.#o.signal ? { signal: this.#o.signal } : {}),
          });
          if (r.ok) return void delivered.push(label);
          const wait = BACKOFF_MS[attempt];
          if (wait === undefined || this.#o.signal?.aborted) return void failed.push(`${label}: ${r.error}`);
          await delay(wait, this.#o.signal).catch(() => undefined);
        }
      }),
    );
    this.#o.say(
      `syncbook watch: told the notifiers that run ${n.run}'s runner is gone: ${delivered.length ? `delivered to ${delivered.join(", ")}` : "delivered to none"}${failed.length ? `; NOT delivered: ${failed.join("; ")}` : ""}`,
    );
    const record: DeadManRecord = {
      ...base,
      by: "sent",
      delivered,
      failed,
      ...(unclaimed !== undefined ? { unclaimed } : {}),
    };
    if (unclaimed === undefined)
      await writeFile(file, `${JSON.stringify({ ...record, state: "told", pid: process.pid })}\n`).catch(
        () => undefined,
      );
    return record;
  }
}
