/**
 * `syncbook watch`: a read-only live page of a cutover, in a process of its own. Once a second it
 * reads what grew of the cutover's journals (journal-feed.ts) and the fleet's and verifier's
 * progress itself (live.ts, GET only), judges the runner (runner.ts), builds the state
 * (state.ts) and sends it to every open page (server.ts). Nothing here sends a command; the one
 * file it writes is the dead-man's switch's claim beside the journal (dead-man.ts).
 */
import { hostname } from "node:os";
import type { FleetInstance } from "../fleet/index.js";
import type { WindowKindTraits } from "../fleet/window.js";
import { isPidAlive } from "../journal/index.js";
import { JournalFeed } from "./journal-feed.js";
import { LiveReader } from "./live.js";
import { runnerVerdict, type RunnerInput, type RunnerVerdict } from "./runner.js";
import { startWatchServer, type WatchServer } from "./server.js";
import { buildState, type WatchState } from "./state.js";
import type { DeadManRecord, DeadManSwitch } from "./dead-man.js";

export { WATCH_FORMAT, type WatchState } from "./state.js";
export { isLoopback } from "./server.js";
export type { RunnerVerdict } from "./runner.js";
export { DeadManSwitch, type DeadManRecord } from "./dead-man.js";

/** How often the journals and the fleet are read, and the pages told (the issue: within a second). */
export const WATCH_TICK_MS = 1000;
/**
 * Reads in a row that must find the runner gone before the notifiers are told: a runner that ends
 * well journals `run.finished` and then lets its lock go, and one read could fall between the two
 * (a line being written is not read until it ends). So they are told within this many ticks of the
 * death (about 2 s), plus the delivery; the page says it at the first.
 */
export const ALARM_CONFIRM_TICKS = 2;

export interface WatchOptions {
  folder: string;
  /** The runbook's path, when watch was given one (for the commands it suggests). */
  runbook?: string;
  /** The `--journal-dir` watch was given with it, as typed: the commands it suggests repeat it (src/next-run.ts `runbookArgs`). */
  journalDir?: string;
  /** Its hash as loaded: the commands it suggests say when the journal ran another text. */
  runbookHash?: string;
  /** The values a `--from` of it under `--allow-changed-runbook` names (src/watch/runner.ts `RunnerInput.goOnVars`). */
  goOnVars?: RunnerInput["goOnVars"];
  /** The runbook's instances and verifier (with their secrets: only the clients see them); else the journal's. */
  instances?: FleetInstance[];
  /** The runbook's first process among `instances` (src/runbook/can-write.ts). */
  canWriteFrom?: number;
  verifier?: string;
  lagBelowSeconds?: number;
  /** The cutover's start turned the embedded verifier off (src/model/readiness.ts). */
  embeddedVerifierOff?: boolean;
  traits: WindowKindTraits;
  redact: (s: string) => string;
  host: string;
  port: number;
  token?: string;
  /** Do not read the fleet or the verifier (the journal only). */
  noLive?: boolean;
  /** Called once per run whose runner is found gone or silent on `ALARM_CONFIRM_TICKS` reads in a row. */
  onAlarm?: (v: RunnerVerdict) => void;
  /** Tells the runbook's notifiers, once per run of the cutover (dead-man.ts). */
  deadMan?: DeadManSwitch;
  tickMs?: number;
  now?: () => number;
}

export interface Watch {
  readonly url: string;
  readonly server: WatchServer;
  /** One round now (tests; the loop calls it every tick). */
  tick(): Promise<WatchState>;
  close(): Promise<void>;
}

export async function startWatch(opts: WatchOptions): Promise<Watch> {
  const now = opts.now ?? Date.now;
  const feed = new JournalFeed(opts.folder, opts.traits);
  let live: LiveReader | undefined;
  const stop = new AbortController();
  const host = hostname();
  let json = "{}";
  let last: WatchState | undefined;
  // the dead-man's switch: the run (cutover id and run number) found gone, on how many reads in a row
  let suspect: { key: string; reads: number } | undefined;
  const fired = new Set<string>();
  let told: DeadManRecord | undefined;

  const ensureLive = (state: WatchState | undefined): void => {
    if (opts.noLive || live) return;
    if (opts.instances?.length || opts.verifier !== undefined) {
      live = new LiveReader({
        instances: opts.instances ?? [],
        ...(opts.canWriteFrom !== undefined ? { canWriteFrom: opts.canWriteFrom } : {}),
        ...(opts.verifier !== undefined ? { verifier: opts.verifier } : {}),
        traits: opts.traits,
        redact: opts.redact,
      });
      return;
    }
    // a journal folder: the instances and the verifier its run named (their URLs as journaled)
    const m = state?.model;
    if (m && (m.instances.length || m.verifierUrl)) {
      live = new LiveReader({
        instances: m.instances.map((i) => ({ url: i.url, ...(i.name !== undefined ? { name: i.name } : {}) })),
        ...(m.canWriteFrom !== undefined ? { canWriteFrom: m.canWriteFrom } : {}),
        ...(m.verifierUrl !== undefined ? { verifier: m.verifierUrl } : {}),
        traits: opts.traits,
        redact: opts.redact,
      });
    }
  };

  const tick = async (): Promise<WatchState> => {
    await feed.refresh();
    ensureLive(last);
    await live?.read(stop.signal).catch(() => undefined);
    const t = now();
    const seen = feed.fold.view(t);
    const verdict = (
      earlierCommit?: string,
      resumeRefused?: true,
      passedOver?: Awaited<ReturnType<JournalFeed["passedOver"]>>,
    ) =>
      runnerVerdict({
        model: seen,
        lock: feed.lock,
        now: t,
        host,
        isAlive: isPidAlive,
        ...(opts.runbook !== undefined ? { runbook: opts.runbook } : {}),
        ...(opts.journalDir !== undefined ? { journalDir: opts.journalDir } : {}),
        ...(opts.runbookHash !== undefined ? { runbookHash: opts.runbookHash } : {}),
        ...(opts.goOnVars ? { goOnVars: opts.goOnVars } : {}),
        ...(earlierCommit !== undefined ? { earlierCommit } : {}),
        ...(resumeRefused ? { resumeRefused } : {}),
        ...(passedOver ? { passedOver } : {}),
      });
    // the folder's other journals asked only where a way on is said (no runner seen working: one
    // gone, silent, or a run that ended); a live run's growing journal is not read again each round
    let runner = verdict();
    let earlierSentTo: string[] = [];
    if (runner.state !== "running" && runner.state !== "no-run") {
      const earlier = await feed.earlierCommit();
      const ownRefused = (await feed.resumeRefusedOwn()) ? (true as const) : undefined;
      // a refused run --resume passes over (a --new-cutover is another cutover, not folded here)
      const passedOver = await feed.passedOver();
      if (earlier !== undefined || ownRefused || passedOver)
        runner = verdict(earlier !== undefined ? opts.redact(earlier.why) : undefined, ownRefused, passedOver);
      if (earlier !== undefined) earlierSentTo = earlier.reached;
    }
    // its process gone without an end: the window's time since its last line is no runner's, not
    // the share of the step it died in (the page said the service's)
    const model = runner.state === "dead" ? feed.fold.view(t, { runnerGone: true }) : seen;
    // a finished run told its own notifiers; only a run without an end has a runner to lose
    if (runner.alarm && runner.state !== "finished") {
      const key = `${model.cutover.id ?? ""}#${model.runs.at(-1)?.n ?? 0}`;
      suspect = suspect?.key === key ? { key, reads: suspect.reads + 1 } : { key, reads: 1 };
      if (suspect.reads >= ALARM_CONFIRM_TICKS && !fired.has(key)) {
        fired.add(key);
        opts.onAlarm?.(runner);
        // in the background: a slow pager never holds the page's updates
        void opts.deadMan?.tell(runner, model, t).then((r) => (told = r));
      }
    } else suspect = undefined;
    last = buildState({
      now: t,
      folder: opts.folder,
      ...(opts.runbook !== undefined ? { runbook: opts.runbook } : {}),
      journals: feed.files,
      skippedLines: feed.skipped,
      model,
      live: live?.view() ?? { instances: [], copy: model.fleet.copy },
      runner,
      ...(opts.lagBelowSeconds !== undefined ? { lagBelowSeconds: opts.lagBelowSeconds } : {}),
      ...(told !== undefined ? { told } : {}),
      ...(opts.embeddedVerifierOff === true ? { embeddedVerifierOff: true } : {}),
      ...(earlierSentTo.length ? { earlierSentTo } : {}),
      redact: opts.redact,
    });
    json = JSON.stringify(last);
    return last;
  };

  await tick();
  const server = await startWatchServer({
    host: opts.host,
    port: opts.port,
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    state: () => json,
  });
  let running = false;
  const timer = setInterval(() => {
    if (running) return; // one round at a time: a slow read skips a tick, never piles up
    running = true;
    tick()
      .then(() => server.broadcast(json))
      .catch(() => undefined)
      .finally(() => (running = false));
  }, opts.tickMs ?? WATCH_TICK_MS);
  return {
    url: server.url,
    server,
    tick,
    async close(): Promise<void> {
      clearInterval(timer);
      stop.abort();
      await server.close();
      await live?.close();
    },
  };
}
