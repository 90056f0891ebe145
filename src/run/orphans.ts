/**
 * Hook processes earlier runs left behind (issue 42). A runner killed while a hook or an undo runs
 * leaves that process running in its own process group and session (src/plugin/process.ts); an
 * undo can also exit 0 and leave a daemon. Either may turn application writes back on behind a
 * later run that has just stopped them again and sent commit. So before a run acts (every entry
 * point: `run`, `--resume`, `--from`, `--abort`), and again right before any commit, every process
 * any earlier run of the cutover started (every journal of the runbook's folder, every call,
 * finished or not) must be known to have exited, by every means the journal gives:
 * - the call's token, which every process it starts gets in its environment (children inherit it);
 * - each journaled pid with its start time (a live pid with another start is another process),
 *   and the process group and session each spawn leads: a member started since is the call's
 *   (found even when it cleared its environment: `env -i`, `sudo`);
 * - what cannot be told: a call journaled on another host, in another PID namespace (pids there
 *   mean nothing here), on a system without /proc (macOS, Windows: a process that left its
 *   group cannot be seen), and a live process of this user started after the call whose
 *   environment cannot be read (a set-uid program such as sudo): it may be the call's.
 * A call from an earlier boot has exited (no process outlives a reboot).
 *
 * A live one is waited out until its deadline (its start plus its time limit, as the dead runner
 * would have enforced it); one alive past that refuses, naming the processes. What cannot be told
 * is waited out likewise (the runner that started it would have stopped it by then), and then
 * left to commit: the runbook's `check:` reads the write switch right before it, and without one
 * commit is refused (src/steps/commit.ts, interlock `hook-processes`).
 *
 * What no means finds: a process that clears its environment and leaves its session (`setsid`
 * with `env -i`, a job queued through another service) once its own journaled ancestors have
 * exited. Only a `check:` can see what it did, and only once it did it (lint warns:
 * `undo-process-without-check`).
 */
import { userInfo } from "node:os";
import { ExitCode, UserError } from "../errors.js";
import type { HookCall } from "../journal/index.js";
import { isPidAlive } from "../journal/index.js";
import { HOOK_TOKEN_ENV } from "../plugin/process.js";
import { listProcesses, processEnviron, processUid, selfIdentity, type ProcessInfo } from "../processes.js";
import { thisHost } from "../journal/format.js";
import { formatDuration } from "../runbook/duration.js";
import { poll, pollResult } from "../steps/kit/poll.js";
import type { EarlierHooks } from "../steps/index.js";

/** What this machine tells of processes (the system's, or a test's). */
export interface OrphanProbe {
  /** This runner: its host, PID namespace, boot and uid. */
  self: { host: string; pidns?: string; boot?: string; uid?: number; pid: number };
  /** Every process (Linux: /proc); undefined where processes cannot be listed. */
  list(): ProcessInfo[] | undefined;
  environ(pid: number): string[] | "unreadable" | undefined;
  uid(pid: number): number | undefined;
  /** Where processes cannot be listed: is this pid, or any process of this group, alive (signal 0)? */
  alive(pid: number): boolean;
  groupAlive(pgid: number): boolean;
}

export function systemProbe(): OrphanProbe {
  const id = selfIdentity();
  let uid: number | undefined;
  try {
    uid = userInfo().uid;
  } catch {
    uid = process.getuid?.();
  }
  return {
    self: {
      host: thisHost(),
      pid: process.pid,
      ...(id.pidns !== undefined ? { pidns: id.pidns } : {}),
      ...(id.boot !== undefined ? { boot: id.boot } : {}),
      ...(uid !== undefined && uid >= 0 ? { uid } : {}),
    },
    list: listProcesses,
    environ: processEnviron,
    uid: processUid,
    alive: (pid) => pid > 0 && isPidAlive(pid),
    groupAlive: (pgid) => pgid > 0 && isPidAlive(-pgid),
  };
}

/** What is known of one call's processes now. */
export interface CallVerdict {
  call: HookCall;
  /** Its live processes (by token, journaled pid and start, process group or session). */
  live: number[];
  /** Live processes of this user, started after it, whose environment cannot be read: they may be its. */
  maybe: number[];
  /** Why its processes cannot be checked from here at all (another host, PID namespace, no /proc). */
  unknown?: string;
}

/** A call with nothing to look for: it finished and journaled no process (an HTTP hook), or it ran before this boot. */
function settled(call: HookCall, self: OrphanProbe["self"]): boolean {
  if (call.finished && call.processes.length === 0) return true;
  return call.host === self.host && call.boot !== undefined && self.boot !== undefined && call.boot !== self.boot;
}

/**
 * Every call whose processes are not known to have exited, and what is known of each. Journals
 * written before namespaces were recorded (no `pidns`) are judged as in this namespace.
 */
export function judgeCalls(
  calls: readonly HookCall[],
  probe: OrphanProbe,
  opts: { maybe?: boolean } = {},
): CallVerdict[] {
  const self = probe.self;
  const open = calls.filter((c) => !settled(c, self));
  const out: CallVerdict[] = [];
  const here: HookCall[] = [];
  for (const call of open) {
    if (call.host !== self.host)
      out.push({ call, live: [], maybe: [], unknown: `it ran on host ${call.host}, not this one (${self.host})` });
    else if (call.pidns !== undefined && call.pidns !== self.pidns)
      out.push({
        call,
        live: [],
        maybe: [],
        unknown: `it ran in another PID namespace (${call.pidns}; this runner is in ${self.pidns ?? "one it cannot name"}): its pids mean nothing here`,
      });
    else here.push(call);
  }
  if (here.length === 0) return out;
  const procs = probe.list();
  if (!procs) {
    // no process list: only the journaled pids and groups can be asked, not where a child went
    for (const call of here) {
      const live = call.processes
        .filter((p) => (p.pgid !== undefined ? probe.groupAlive(p.pgid) : probe.alive(p.pid)))
        .map((p) => p.pid);
      out.push({
        call,
        live,
        maybe: [],
        ...(live.length
          ? {}
          : {
              unknown:
                "this system does not list processes and their environments (no /proc): a process it left outside its process group cannot be seen",
            }),
      });
    }
    return out;
  }
  const byToken = new Map(here.map((c) => [`${HOOK_TOKEN_ENV}=${c.token}`, c]));
  const found = new Map<HookCall, { live: Set<number>; maybe: Set<number> }>(
    here.map((c) => [c, { live: new Set(), maybe: new Set() }]),
  );
  // the earliest start of each call's journaled processes: a process started before it is not its
  const startOf = new Map(
    here.map((c) => [c, Math.min(...c.processes.map((p) => p.start ?? Number.POSITIVE_INFINITY))]),
  );
  for (const p of procs) {
    if (p.pid === self.pid || p.kernel || p.state === "Z" || p.state === "X") continue;
    for (const call of here) {
      const mine = call.processes.some(
        (j) =>
          (j.pid === p.pid && (j.start === undefined || j.start === p.start)) ||
          // a process journaled without its group matches none (a listed process always has one)
          ((p.pgid === j.pgid || p.sid === j.pgid) && (j.start === undefined || p.start >= j.start)),
      );
      if (mine) found.get(call)!.live.add(p.pid);
    }
    const env = probe.environ(p.pid);
    if (env === undefined) continue;
    if (env === "unreadable") {
      if (opts.maybe === false || self.uid === undefined || probe.uid(p.pid) !== self.uid) continue;
      for (const call of here)
        // (a call that journaled no process, or none with its start, starts at +Infinity: none is its)
        if (p.start >= startOf.get(call)! && !found.get(call)!.live.has(p.pid)) found.get(call)!.maybe.add(p.pid);
      continue;
    }
    for (const v of env) {
      const call = byToken.get(v);
      if (call) found.get(call)!.live.add(p.pid);
    }
  }
  for (const call of here) {
    const f = found.get(call)!;
    for (const pid of f.live) f.maybe.delete(pid);
    if (f.live.size || f.maybe.size) out.push({ call, live: [...f.live], maybe: [...f.maybe] });
  }
  return out;
}

/** `the undo of step 3 "stop-writes" (shell; pid 42)`, as every message names a call. */
export function callName(c: HookCall, pids: readonly number[] = []): string {
  return `${c.undo ? "the undo of" : "the hook of"} step ${c.stepIndex + 1} "${c.id}" (${c.use}${pids.length ? `; pid ${pids.join(", ")}` : ""})`;
}

/**
 * The calls, each as people read it: a live one with its pids; one that may have a process with
 * the pids it may be; those that cannot be checked grouped by why (one reason said once).
 */
function describe(vs: readonly CallVerdict[]): string[] {
  const parts: string[] = [];
  const groups = new Map<string, string[]>();
  for (const v of vs) {
    if (v.live.length) parts.push(callName(v.call, v.live));
    else if (v.maybe.length)
      parts.push(
        `${callName(v.call)}: pid ${v.maybe.join(", ")} is a process of this user started after it whose environment cannot be read, so it may be one of its`,
      );
    else {
      const why = v.unknown ?? "its processes cannot be checked";
      groups.set(why, [...(groups.get(why) ?? []), callName(v.call)]);
    }
  }
  for (const [why, names] of groups) parts.push(`${names.join(", ")}: ${why}`);
  return parts;
}

/** What a wait left that cannot be told, and whether any earlier process was alive while it waited. */
export interface EarlierHooksVerdict {
  /** Calls whose processes cannot be known to have exited: commit needs a `check:` to decide (or `--force=hook-processes`). */
  unknown: string[];
  /**
   * A process of an earlier run was alive (or could not be told from one) when this run began:
   * whatever it did since may have turned writes back on, so the write stop a journal records is
   * not trusted (the stop runs again).
   */
  mayHaveActed: boolean;
}

/**
 * Waits until no process of an earlier run's hook call is alive. `deadlineOf` gives the time
 * (epoch ms) past which a call's process is not waited for any more: a live one refuses (thrown),
 * one that cannot be told is returned as unknown.
 */
export async function waitOutEarlierHooks(
  calls: readonly HookCall[],
  opts: {
    deadlineOf: (c: HookCall) => number;
    say: (s: string) => void;
    signal?: AbortSignal | undefined;
    probe?: OrphanProbe;
    everyMs?: number;
    now?: () => number;
  },
): Promise<EarlierHooksVerdict> {
  const probe = opts.probe ?? systemProbe();
  const now = opts.now ?? Date.now;
  let said = "";
  let mayHaveActed = false;
  // the one polling loop (src/steps/kit/poll.ts): judge the calls, wait, again
  const r = await poll({
    read: () => Promise.resolve(judgeCalls(calls, probe)),
    judge: (verdicts) => judge(verdicts),
    every: opts.everyMs ?? 200,
    signal: opts.signal ?? new AbortController().signal,
  });
  return pollResult(r);

  /** A live call past its time limit refuses; none left to wait for ends the wait; else say what is waited for, once per change. */
  function judge(verdicts: CallVerdict[]): EarlierHooksVerdict | undefined {
    const late = verdicts.filter((v) => now() >= opts.deadlineOf(v.call));
    const lateLive = late.filter((v) => v.live.length > 0);
    if (lateLive.length) {
      const groups = [...new Set(lateLive.flatMap((v) => v.call.processes.map((p) => p.pgid ?? p.pid)))];
      const n = lateLive.length;
      throw new UserError(
        `${describe(lateLive).join("; ")} ${n === 1 ? "was" : "were"} started by an earlier run and still ${n === 1 ? "runs" : "run"} past ${n === 1 ? "its" : "their"} time limit`,
        {
          exitCode: ExitCode.failed,
          hint: `a process an earlier run left can still change the application (an undo turns writes back on): wait for it, or stop it yourself (kill -TERM ${lateLive.flatMap((v) => v.live).join(" ")}${groups.length ? `; its group: kill -TERM -- ${groups.map((g) => `-${g}`).join(" ")}` : ""}) and check what it did, then run the same command again`,
        },
      );
    }
    const waiting = verdicts.filter((v) => now() < opts.deadlineOf(v.call));
    if (verdicts.some((v) => v.live.length || v.maybe.length) || waiting.length) mayHaveActed = true;
    if (waiting.length === 0) {
      if (said) opts.say("earlier runs: their hook processes have exited (or their time limits have passed)");
      const unknown = describe(verdicts);
      for (const u of unknown)
        opts.say(
          `earlier runs: cannot tell whether every process of ${u} has exited: commit will need a stopWrites' check: to decide`,
        );
      return { unknown, mayHaveActed };
    }
    const running = waiting.filter((v) => v.live.length || v.maybe.length);
    const blind = waiting.filter((v) => !v.live.length && !v.maybe.length);
    const text = [
      ...(running.length
        ? [`${describe(running).join("; ")} ${running.length === 1 ? "is" : "are"} still running`]
        : []),
      ...(blind.length
        ? [`${describe(blind).join("; ")}: waited out to ${blind.length === 1 ? "its" : "their"} time limit`]
        : []),
    ].join("; ");
    if (text !== said) {
      said = text;
      const until = Math.max(...waiting.map((v) => opts.deadlineOf(v.call))) - now();
      opts.say(
        `earlier runs: ${text}: waiting for what an earlier run started to exit (at most ${formatDuration(Math.max(0, until))}) before this run acts, so that nothing it does lands behind this run`,
      );
    }
    return undefined;
  }
}

/**
 * What commit asks right before it is sent (no wait): earlier calls with a live process, and the
 * calls the wait before the run could not tell.
 */
export type EarlierHooksGate = EarlierHooks;

export function earlierHooksGate(
  calls: readonly HookCall[],
  unknown: readonly string[],
  probe: OrphanProbe = systemProbe(),
): EarlierHooksGate {
  return {
    judge() {
      // a process of this user whose environment cannot be read was judged before the run; one
      // started since (the operator's own sudo) is not an earlier run's
      const now = judgeCalls(calls, probe, { maybe: false });
      return {
        live: describe(now.filter((v) => v.live.length)),
        // (a verdict that cannot be told has no live process: judgeCalls gives one or the other)
        unknown: [...unknown, ...describe(now.filter((v) => v.unknown))].filter((u, i, all) => all.indexOf(u) === i),
      };
    },
  };
}
