/**
 * Hook processes a dead runner left behind. A runner killed while a hook or an undo runs leaves
 * that process running in its own process group (src/plugin/process.ts): an undo that turns
 * application writes back on would do so behind a resumed run that has just stopped them again
 * and sent commit. So before `--resume` reads the fleet or acts, every hook call the journal
 * shows started and never finished is looked for:
 * - Linux: every process whose environment carries the call's token (its children inherit it,
 *   and a process spawned in the instant before its pid reached the journal carries it too);
 * - elsewhere: the process groups the journal recorded, by signal 0.
 * One that is alive is waited out until its deadline (its start plus its time limit, as the dead
 * runner would have enforced it); one alive past that refuses the resume, naming the processes.
 */
import { readdirSync, readFileSync } from "node:fs";
import { ExitCode, UserError } from "../errors.js";
import type { HookCall } from "../journal/index.js";
import { isPidAlive } from "../journal/index.js";
import { HOOK_TOKEN_ENV } from "../plugin/process.js";
import { formatDuration } from "../runbook/duration.js";
import { poll } from "../steps/kit/poll.js";

export interface LiveCall {
  call: HookCall;
  pids: number[];
}

export interface OrphanProbe {
  /** Live pids carrying each token (Linux: /proc); undefined where processes cannot be listed. */
  scan(tokens: readonly string[]): Map<string, number[]> | undefined;
  /** Is any process of this group (pgid > 0) alive? */
  groupAlive(pgid: number): boolean;
}

/** Reads /proc/<pid>/environ of every process this user can read. */
export function procScan(tokens: readonly string[]): Map<string, number[]> | undefined {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const wanted = new Map(tokens.map((t) => [`${HOOK_TOKEN_ENV}=${t}`, t]));
  const found = new Map<string, number[]>();
  if (wanted.size === 0) return found;
  for (const n of names) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${n}/environ`, "latin1");
    } catch {
      continue; // gone, or another user's: not a process this runner's hooks started
    }
    for (const v of env.split("\0")) {
      const t = wanted.get(v);
      if (t !== undefined) found.set(t, [...(found.get(t) ?? []), Number(n)]);
    }
  }
  return found;
}

export const systemProbe: OrphanProbe = {
  scan: procScan,
  groupAlive: (pgid) => pgid > 0 && isPidAlive(-pgid),
};

/** The unfinished hook calls of `calls` whose processes are still alive. */
export function liveCalls(calls: readonly HookCall[], probe: OrphanProbe = systemProbe): LiveCall[] {
  const open = calls.filter((c) => !c.finished);
  if (open.length === 0) return [];
  const scanned = probe.scan(open.map((c) => c.token));
  const live: LiveCall[] = [];
  for (const call of open) {
    const pids = scanned
      ? (scanned.get(call.token) ?? [])
      : call.processes.filter((p) => p.pgid !== undefined && probe.groupAlive(p.pgid)).map((p) => p.pid);
    if (pids.length) live.push({ call, pids });
  }
  return live;
}

const what = (l: LiveCall): string =>
  `${l.call.undo ? "the undo of" : "the hook of"} step ${l.call.stepIndex + 1} "${l.call.id}" (${l.call.use}; pid ${l.pids.join(", ")})`;

/**
 * Waits until no process of an unfinished hook call is alive. `deadlineOf` gives the time (epoch
 * ms) past which a call's process is not waited for any more: the resume is refused.
 */
export async function waitOutOrphans(
  calls: readonly HookCall[],
  opts: {
    deadlineOf: (c: HookCall) => number;
    say: (s: string) => void;
    signal?: AbortSignal | undefined;
    probe?: OrphanProbe;
    everyMs?: number;
    now?: () => number;
  },
): Promise<void> {
  const probe = opts.probe ?? systemProbe;
  const now = opts.now ?? Date.now;
  let said = "";
  // the one polling loop (src/steps/kit/poll.ts): read the live calls, judge, wait, again
  await poll({
    read: () => Promise.resolve(liveCalls(calls, probe)),
    judge: (live) => (live.length === 0 ? true : void report(live)),
    every: opts.everyMs ?? 200,
    signal: opts.signal ?? new AbortController().signal,
  });
  if (said) opts.say("resume: the interrupted run's hook processes have exited");

  /** A call past its time limit refuses the resume; otherwise say what is still waited for, once per change. */
  function report(live: LiveCall[]): void {
    const late = live.filter((l) => now() >= opts.deadlineOf(l.call));
    if (late.length) {
      const groups = late.flatMap((l) => l.call.processes.map((p) => p.pgid ?? p.pid));
      throw new UserError(
        `cannot resume: ${late.map(what).join("; ")} ${late.length === 1 ? "was" : "were"} started by the interrupted run and still ${late.length === 1 ? "runs" : "run"} past ${late.length === 1 ? "its" : "their"} time limit`,
        {
          exitCode: ExitCode.failed,
          hint: `a process left by a dead runner can still change the application (an undo turns writes back on): wait for it, or stop it yourself (${groups.length ? `kill -TERM -- ${groups.map((g) => `-${g}`).join(" ")}` : `kill -TERM ${late.flatMap((l) => l.pids).join(" ")}`}) and check what it did, then run --resume again`,
        },
      );
    }
    const text = live.map(what).join("; ");
    if (text !== said) {
      said = text;
      const until = Math.max(...live.map((l) => opts.deadlineOf(l.call))) - now();
      opts.say(
        `resume: ${text} ${live.length === 1 ? "is" : "are"} still running, started by the interrupted run: waiting for ${live.length === 1 ? "it" : "them"} to exit (at most ${formatDuration(until)}) before reading the fleet, so that nothing it does lands behind this run`,
      );
    }
  }
}
