/**
 * `syncbook watch`: a read-only live page of a cutover, in a process of its own. Once a second it
 * reads what grew of the cutover's journals (journal-feed.ts) and the fleet's and verifier's
 * progress itself (live.ts, GET only), judges the runner (runner.ts), builds the state
 * (state.ts) and sends it to every open page (server.ts). Nothing here sends a command or
 * writes a file.
 */
import { hostname } from "node:os";
import type { FleetInstance } from "../fleet/index.js";
import type { WindowKindTraits } from "../fleet/window.js";
import { isPidAlive } from "../journal/index.js";
import { JournalFeed } from "./journal-feed.js";
import { LiveReader } from "./live.js";
import { runnerVerdict, type RunnerVerdict } from "./runner.js";
import { startWatchServer, type WatchServer } from "./server.js";
import { buildState, type WatchState } from "./state.js";

export { WATCH_FORMAT, type WatchState } from "./state.js";
export { isLoopback } from "./server.js";
export type { RunnerVerdict } from "./runner.js";

/** How often the journals and the fleet are read, and the pages told (the issue: within a second). */
export const WATCH_TICK_MS = 1000;

export interface WatchOptions {
  folder: string;
  /** The runbook's path, when watch was given one (for the commands it suggests). */
  runbook?: string;
  /** The runbook's instances and verifier (with their secrets: only the clients see them); else the journal's. */
  instances?: FleetInstance[];
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
  /** Called once each time the runner turns from alive to gone or silent (the dead-man's switch). */
  onAlarm?: (v: RunnerVerdict) => void;
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
  let alarmed = false;

  const ensureLive = (state: WatchState | undefined): void => {
    if (opts.noLive || live) return;
    if (opts.instances?.length || opts.verifier !== undefined) {
      live = new LiveReader({
        instances: opts.instances ?? [],
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
    const model = feed.fold.view(t);
    const runner = runnerVerdict({
      model,
      lock: feed.lock,
      now: t,
      host,
      isAlive: isPidAlive,
      ...(opts.runbook !== undefined ? { runbook: opts.runbook } : {}),
    });
    if (runner.alarm && !alarmed && runner.state !== "finished") opts.onAlarm?.(runner);
    alarmed = runner.alarm;
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
      ...(opts.embeddedVerifierOff === true ? { embeddedVerifierOff: true } : {}),
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
