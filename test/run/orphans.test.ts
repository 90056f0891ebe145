/**
 * Issue 42, invariant 2, at the function boundary (src/run/orphans.ts): every means the journal
 * gives to tell whether a hook process an earlier run started still runs, each one alone, against
 * a scripted process table. The cases the machine cannot stage for real are pinned here: an
 * environment this user cannot read (sudo, a set-uid program: the runner here is root, who reads
 * every one), a system without /proc, a host of its own; the rest are also driven end to end in
 * test/crash/hook-lifetimes.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { HookCall } from "../../src/journal/index.js";
import type { ProcessInfo } from "../../src/processes.js";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  earlierHooksGate,
  judgeCalls,
  systemProbe,
  waitOutEarlierHooks,
  type OrphanProbe,
} from "../../src/run/orphans.js";
import { thisHost } from "../../src/journal/format.js";
import { processInfo } from "../../src/processes.js";
import { UserError } from "../../src/errors.js";
import { formatDuration } from "../../src/runbook/duration.js";

const SELF = { host: "h", pidns: "pid:[1]", boot: "b1", uid: 1000, pid: 1 };

interface Proc extends Partial<ProcessInfo> {
  pid: number;
  /** "gone": it exited between the listing and the read of its environment. */
  env?: string[] | "unreadable" | "gone";
  /** null: its uid cannot be read. */
  uid?: number | null;
}

/** A process table: each process with its group, session, start, environment and uid. */
function probe(
  procs: Proc[],
  o: { list?: false; self?: Partial<OrphanProbe["self"]>; alive?: number[] } = {},
): OrphanProbe {
  const info = (p: Proc): ProcessInfo => ({
    pid: p.pid,
    ppid: p.ppid ?? 1,
    pgid: p.pgid ?? p.pid,
    sid: p.sid ?? p.pid,
    start: p.start ?? 100,
    state: p.state ?? "S",
    kernel: p.kernel ?? false,
  });
  return {
    self: { ...SELF, ...o.self },
    list: () => (o.list === false ? undefined : procs.map(info)),
    environ: (pid) => {
      const env = procs.find((p) => p.pid === pid)?.env ?? [];
      return env === "gone" ? undefined : env;
    },
    uid: (pid) => {
      const uid = procs.find((p) => p.pid === pid)?.uid;
      return uid === null ? undefined : (uid ?? 1000);
    },
    alive: (pid) => (o.alive ?? []).includes(pid),
    groupAlive: (pgid) => (o.alive ?? []).includes(-pgid),
  };
}

const call = (over: Partial<HookCall> = {}): HookCall => ({
  token: "tok",
  stepIndex: 2,
  id: "stop-writes",
  use: "shell",
  undo: true,
  at: 0,
  processes: [{ pid: 500, pgid: 500, start: 100 }],
  finished: false,
  host: "h",
  pidns: "pid:[1]",
  boot: "b1",
  ...over,
});

const verdict = (calls: HookCall[], p: OrphanProbe) =>
  judgeCalls(calls, p).map((v) => ({ live: v.live, maybe: v.maybe, unknown: v.unknown }));

describe("judgeCalls: is any process of an earlier run's call alive?", () => {
  it("the journaled pid with its start time: alive; with another start time, another process reusing the pid", () => {
    expect(verdict([call()], probe([{ pid: 500, start: 100 }]))).toEqual([
      { live: [500], maybe: [], unknown: undefined },
    ]);
    expect(verdict([call()], probe([{ pid: 500, start: 999, pgid: 7, sid: 7 }]))).toEqual([]);
    // a journal from before start times were recorded: a live pid is taken at its word
    expect(verdict([call({ processes: [{ pid: 500 }] })], probe([{ pid: 500, start: 999, pgid: 7, sid: 7 }]))).toEqual([
      { live: [500], maybe: [], unknown: undefined },
    ]);
  });

  it("env -i or sudo: no token, found by its process group or session, if it started after the call's process", () => {
    const c = call();
    expect(verdict([c], probe([{ pid: 501, pgid: 500, sid: 500, start: 150 }]))).toEqual([
      { live: [501], maybe: [], unknown: undefined },
    ]);
    // its own group (setpgid), still in the session the spawn leads
    expect(verdict([c], probe([{ pid: 502, pgid: 502, sid: 500, start: 150 }]))).toEqual([
      { live: [502], maybe: [], unknown: undefined },
    ]);
    // a group or session number reused by a process older than the call's: not its
    expect(verdict([c], probe([{ pid: 503, pgid: 500, sid: 500, start: 50 }]))).toEqual([]);
  });

  it("setsid (a session of its own) or a daemon an undo left, carrying the token: found by the token, in every call, finished or not", () => {
    const daemon = { pid: 700, pgid: 700, sid: 700, start: 300, env: ["A=1", "SYNCBOOK_HOOK_TOKEN=tok"] };
    expect(verdict([call({ finished: true })], probe([daemon]))).toEqual([
      { live: [700], maybe: [], unknown: undefined },
    ]);
    expect(verdict([call({ token: "other" })], probe([daemon]))).toEqual([]);
  });

  it("zombies, kernel threads and the runner itself are never a call's process", () => {
    expect(
      verdict(
        [call()],
        probe([
          { pid: 500, start: 100, state: "Z" },
          { pid: 501, pgid: 500, start: 150, kernel: true },
          { pid: 1, pgid: 500, start: 150, env: ["SYNCBOOK_HOOK_TOKEN=tok"] },
        ]),
      ),
    ).toEqual([]);
  });

  it("an environment this user cannot read (sudo): a process of this user started after the call may be its; another user's is not", () => {
    const c = call();
    expect(verdict([c], probe([{ pid: 800, pgid: 800, sid: 800, start: 200, env: "unreadable", uid: 1000 }]))).toEqual([
      { live: [], maybe: [800], unknown: undefined },
    ]);
    expect(verdict([c], probe([{ pid: 800, pgid: 800, sid: 800, start: 200, env: "unreadable", uid: 0 }]))).toEqual([]);
    expect(verdict([c], probe([{ pid: 800, pgid: 800, sid: 800, start: 50, env: "unreadable", uid: 1000 }]))).toEqual(
      [],
    );
    // a call that journaled no process has no start to compare: never "maybe"
    expect(
      verdict([call({ processes: [] })], probe([{ pid: 800, pgid: 800, sid: 800, start: 200, env: "unreadable" }])),
    ).toEqual([]);
    // what commit asks right before it is sent leaves them out (the operator's own sudo, started since)
    expect(judgeCalls([c], probe([{ pid: 800, start: 200, env: "unreadable" }]), { maybe: false })).toEqual([]);
  });

  it("another host, another PID namespace: cannot be told (whatever this machine shows)", () => {
    const seen = probe([{ pid: 500, start: 100 }]);
    expect(verdict([call({ host: "b" })], seen)).toEqual([
      { live: [], maybe: [], unknown: "it ran on host b, not this one (h)" },
    ]);
    expect(verdict([call({ pidns: "pid:[2]" })], seen)).toEqual([
      {
        live: [],
        maybe: [],
        unknown: "it ran in another PID namespace (pid:[2]; this runner is in pid:[1]): its pids mean nothing here",
      },
    ]);
    // a journal from before namespaces were recorded: judged in this one
    expect(verdict([call({ pidns: undefined })], seen)).toEqual([{ live: [500], maybe: [], unknown: undefined }]);
  });

  it("an earlier boot of this host, or a finished call that started no process: nothing to look for", () => {
    const seen = probe([{ pid: 500, start: 100, env: ["SYNCBOOK_HOOK_TOKEN=tok"] }]);
    expect(verdict([call({ boot: "b0" })], seen)).toEqual([]);
    expect(verdict([call({ finished: true, processes: [] })], seen)).toEqual([]);
    // unfinished without a journaled process (killed between the spawn and its line): the token finds it
    expect(verdict([call({ processes: [] })], seen)).toEqual([{ live: [500], maybe: [], unknown: undefined }]);
    // another host's boot id says nothing of this one
    expect(verdict([call({ host: "b", boot: "b0" })], seen)[0]?.unknown).toMatch(/host b/);
  });

  it("no process list (no /proc): the journaled groups are asked; once they are gone, a process that left them cannot be seen", () => {
    expect(verdict([call()], probe([], { list: false, alive: [-500] }))).toEqual([
      { live: [500], maybe: [], unknown: undefined },
    ]);
    expect(verdict([call({ processes: [{ pid: 500 }] })], probe([], { list: false, alive: [500] }))).toEqual([
      { live: [500], maybe: [], unknown: undefined },
    ]);
    expect(verdict([call()], probe([], { list: false }))).toEqual([
      {
        live: [],
        maybe: [],
        unknown:
          "this system does not list processes and their environments (no /proc): a process it left outside its process group cannot be seen",
      },
    ]);
  });
});

describe("judgeCalls: each means alone, at its edges (mutation testing found them unpinned)", () => {
  const TOKEN = "SYNCBOOK_HOOK_TOKEN=tok";
  it("a boot either side does not name is not another boot: the call is still judged", () => {
    const live = [{ live: [500], maybe: [], unknown: undefined }];
    expect(verdict([call({ boot: undefined })], probe([{ pid: 500 }]))).toEqual(live);
    expect(verdict([call()], probe([{ pid: 500 }], { self: { boot: undefined } }))).toEqual(live);
  });

  it("the journaled pid with its start is the call's even after it left its group and session", () => {
    expect(verdict([call()], probe([{ pid: 500, start: 100, pgid: 7, sid: 7 }]))).toEqual([
      { live: [500], maybe: [], unknown: undefined },
    ]);
  });

  it("another pid that happens to have the call's start time is not its", () => {
    expect(verdict([call()], probe([{ pid: 900, start: 100, pgid: 900, sid: 900 }]))).toEqual([]);
  });

  it("a member of the call's group in another session, or of its session in another group, is its", () => {
    expect(verdict([call()], probe([{ pid: 501, pgid: 500, sid: 42, start: 150 }]))).toEqual([
      { live: [501], maybe: [], unknown: undefined },
    ]);
    expect(verdict([call()], probe([{ pid: 502, pgid: 42, sid: 500, start: 150 }]))).toEqual([
      { live: [502], maybe: [], unknown: undefined },
    ]);
  });

  it("a group member started in the same tick as the call's process is its; a journal without start times takes every member", () => {
    expect(verdict([call()], probe([{ pid: 501, pgid: 500, sid: 500, start: 100 }]))).toEqual([
      { live: [501], maybe: [], unknown: undefined },
    ]);
    expect(
      verdict([call({ processes: [{ pid: 500, pgid: 500 }] })], probe([{ pid: 501, pgid: 500, sid: 500, start: 5 }])),
    ).toEqual([{ live: [501], maybe: [], unknown: undefined }]);
    // a process journaled without its group: no group is its
    expect(
      verdict([call({ processes: [{ pid: 500, start: 100 }] })], probe([{ pid: 501, pgid: 1, sid: 1, start: 150 }])),
    ).toEqual([]);
  });

  it("a dead process (state X) carrying the token is not alive", () => {
    expect(verdict([call()], probe([{ pid: 700, pgid: 700, sid: 700, state: "X", env: [TOKEN] }]))).toEqual([]);
    expect(verdict([call()], probe([{ pid: 700, pgid: 700, sid: 700, env: [TOKEN] }]))).toEqual([
      { live: [700], maybe: [], unknown: undefined },
    ]);
  });

  it("a process gone before its environment is read is skipped (and the rest still read)", () => {
    expect(
      verdict(
        [call()],
        probe([
          { pid: 700, pgid: 700, sid: 700, env: "gone" },
          { pid: 701, pgid: 701, sid: 701, env: [TOKEN] },
        ]),
      ),
    ).toEqual([{ live: [701], maybe: [], unknown: undefined }]);
  });

  it("an unreadable environment: from the call's earliest journaled start on (that tick included); not when this runner's uid is unknown", () => {
    const two = call({
      processes: [
        { pid: 500, pgid: 500, start: 100 },
        { pid: 600, pgid: 600, start: 200 },
      ],
    });
    expect(verdict([two], probe([{ pid: 700, pgid: 700, sid: 700, start: 150, env: "unreadable" }]))).toEqual([
      { live: [], maybe: [700], unknown: undefined },
    ]);
    expect(verdict([call()], probe([{ pid: 700, pgid: 700, sid: 700, start: 100, env: "unreadable" }]))).toEqual([
      { live: [], maybe: [700], unknown: undefined },
    ]);
    expect(
      verdict(
        [call()],
        probe([{ pid: 700, pgid: 700, sid: 700, start: 150, env: "unreadable", uid: null }], {
          self: { uid: undefined },
        }),
      ),
    ).toEqual([]);
  });

  it("what cannot be judged here (another host) is not looked for in the process table", () => {
    const p = probe([]);
    const noList: OrphanProbe = {
      ...p,
      list: () => {
        throw new Error("the process table was read");
      },
    };
    expect(judgeCalls([call({ host: "b" })], noList).map((v) => v.unknown)).toEqual([
      "it ran on host b, not this one (h)",
    ]);
    expect(judgeCalls([call({ finished: true, processes: [] })], noList)).toEqual([]);
  });
});

describe("waitOutEarlierHooks: before a run acts", () => {
  const run = (
    calls: HookCall[],
    table: () => Proc[],
    o: { deadline?: number; self?: Partial<OrphanProbe["self"]> } = {},
  ) => {
    let t = 0;
    const said: string[] = [];
    const p = probe([], { self: o.self ?? {} });
    const dynamic: OrphanProbe = {
      ...p,
      list: () => probe(table()).list(),
      environ: (pid) => probe(table()).environ(pid),
    };
    return {
      said,
      done: waitOutEarlierHooks(calls, {
        deadlineOf: () => o.deadline ?? 1000,
        say: (s) => said.push(s),
        probe: dynamic,
        everyMs: 0,
        now: () => (t += 100),
      }),
    };
  };

  it("nothing left: returns at once, nothing said, nothing acted", async () => {
    const r = run([call()], () => []);
    expect(await r.done).toEqual({ unknown: [], mayHaveActed: false });
    expect(r.said).toEqual([]);
  });

  it("a live process is waited out until it exits; what it may have done counts (mayHaveActed)", async () => {
    let reads = 0;
    const r = run([call()], () => (reads++ < 4 ? [{ pid: 500, start: 100 }] : []));
    expect(await r.done).toEqual({ unknown: [], mayHaveActed: true });
    expect(r.said[0]).toMatch(
      /^earlier runs: the undo of step 3 "stop-writes" \(shell; pid 500\) is still running: waiting for what an earlier run started to exit \(at most /,
    );
    expect(r.said.at(-1)).toBe("earlier runs: their hook processes have exited (or their time limits have passed)");
  });

  it("alive past its deadline: refused (exit 1), naming the pid, its group and the kill that stops them", async () => {
    const r = run([call()], () => [{ pid: 500, start: 100 }], { deadline: 300 });
    const err: unknown = await r.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(
      'the undo of step 3 "stop-writes" (shell; pid 500) was started by an earlier run and still runs past its time limit',
    );
    expect((err as UserError).exitCode).toBe(1);
    expect((err as UserError).hint).toMatch(
      /kill -TERM 500; its group: kill -TERM -- -500\) .* then run the same command again/,
    );
  });

  it("what cannot be told is waited out to its deadline, then left to commit (unknown), and may have acted", async () => {
    const r = run([call({ host: "b" })], () => [], { deadline: 500 });
    const v = await r.done;
    expect(v.mayHaveActed).toBe(true);
    expect(v.unknown).toEqual(['the undo of step 3 "stop-writes" (shell): it ran on host b, not this one (h)']);
    expect(r.said[0]).toMatch(/waited out to its time limit: waiting for what an earlier run started to exit/);
    expect(r.said.at(-1)).toMatch(
      /^earlier runs: cannot tell whether every process of the undo of step 3 .* has exited: commit will need a stopWrites' check: to decide$/,
    );
    // one long past its deadline: not waited for, nothing acted since
    const old = run([call({ host: "b" })], () => [], { deadline: 0 });
    expect((await old.done).mayHaveActed).toBe(false);
  });

  it("several calls that cannot be told for one reason are named once with it", async () => {
    const r = run([call({ host: "b" }), call({ host: "b", undo: false, stepIndex: 3, id: "hold" })], () => [], {
      deadline: 0,
    });
    expect((await r.done).unknown).toEqual([
      'the undo of step 3 "stop-writes" (shell), the hook of step 4 "hold" (shell): it ran on host b, not this one (h)',
    ]);
  });
});

describe("waitOutEarlierHooks: its deadlines, its words and its pace", () => {
  /** A wait whose clock is its reads: the k-th read happens at k × 100 ms. */
  const clocked = (calls: HookCall[], table: (read: number) => Proc[], deadlineOf: (c: HookCall) => number) => {
    let reads = 0;
    const said: string[] = [];
    const base = probe([]);
    const p: OrphanProbe = {
      ...base,
      list: () => probe(table(++reads)).list(),
      environ: (pid) => probe(table(reads)).environ(pid),
    };
    const done = waitOutEarlierHooks(calls, {
      deadlineOf,
      say: (x) => said.push(x),
      probe: p,
      everyMs: 0,
      now: () => reads * 100,
    });
    return { said, done, reads: () => reads };
  };
  const A = call();
  const B = call({
    token: "t2",
    stepIndex: 4,
    id: "warm",
    undo: false,
    processes: [{ pid: 600, pgid: 600, start: 100 }],
  });
  const C = call({ token: "t3", stepIndex: 3, id: "hold", undo: false, host: "b" });
  const D = call({ token: "t4", stepIndex: 5, id: "tell", undo: false, host: "c" });
  const MAYBE: Proc = { pid: 700, pgid: 700, sid: 700, start: 150, env: "unreadable" };

  it("a live process at its deadline exactly is past it: refused", async () => {
    const r = clocked(
      [A],
      (k) => (k <= 3 ? [{ pid: 500, start: 100 }] : []),
      () => 300,
    );
    await expect(r.done).rejects.toBeInstanceOf(UserError);
    expect(r.reads()).toBe(3);
  });

  it("one that may be the call's is waited for until its deadline, not after: then left to decide, and counted as having maybe acted", async () => {
    // at the 4th read it would show the token: a wait that went on past the deadline would refuse
    const r = clocked(
      [A],
      (k) => (k <= 3 ? [MAYBE] : [{ ...MAYBE, env: ["SYNCBOOK_HOOK_TOKEN=tok"] }]),
      () => 300,
    );
    expect(await r.done).toEqual({
      unknown: [
        'the undo of step 3 "stop-writes" (shell): pid 700 is a process of this user started after it whose environment cannot be read, so it may be one of its',
      ],
      mayHaveActed: true,
    });
    const past = clocked(
      [A],
      () => [MAYBE],
      () => 0,
    );
    expect((await past.done).mayHaveActed).toBe(true);
  });

  it("refusing several: each named, their pids and groups in the kill (a process journaled without its group: its pid)", async () => {
    const noGroup = call({ processes: [{ pid: 500, start: 100 }] });
    const r = clocked(
      [noGroup, B],
      () => [
        { pid: 500, start: 100, pgid: 7, sid: 7 },
        { pid: 600, start: 100 },
      ],
      () => 0,
    );
    const err = (await r.done.catch((e: unknown) => e)) as UserError;
    expect(err.message).toBe(
      'the undo of step 3 "stop-writes" (shell; pid 500); the hook of step 5 "warm" (shell; pid 600) were started by an earlier run and still run past their time limit',
    );
    expect(err.hint).toContain("(kill -TERM 500 600; its group: kill -TERM -- -500 -600)");
  });

  it("refusing a call whose spawn was never journaled (only its token finds the daemon): its pid, no group to kill", async () => {
    const unjournaled = call({ processes: [] });
    const r = clocked(
      [unjournaled],
      () => [{ pid: 700, pgid: 700, sid: 700, env: ["SYNCBOOK_HOOK_TOKEN=tok"] }],
      () => 0,
    );
    const err = (await r.done.catch((e: unknown) => e)) as UserError;
    expect(err.message).toMatch(/^the undo of step 3 "stop-writes" \(shell; pid 700\) was started/);
    expect(err.hint).toContain("(kill -TERM 700) and check what it did");
  });

  it("what it waits for, said once per change: the running and those waited out blind, each group with its reason, and the longest wait left", async () => {
    const deadline = (c: HookCall): number => ({ t3: 3000, t4: 2000 })[c.token as "t3"] ?? 1000;
    const r = clocked(
      [A, B, C, D],
      (k) =>
        k <= 2
          ? [
              { pid: 500, start: 100 },
              { pid: 600, start: 100 },
            ]
          : [],
      deadline,
    );
    expect(await r.done).toEqual({
      unknown: [
        'the hook of step 4 "hold" (shell): it ran on host b, not this one (h)',
        'the hook of step 6 "tell" (shell): it ran on host c, not this one (h)',
      ],
      mayHaveActed: true,
    });
    const blind =
      'the hook of step 4 "hold" (shell): it ran on host b, not this one (h); the hook of step 6 "tell" (shell): it ran on host c, not this one (h)';
    const tail = "before this run acts, so that nothing it does lands behind this run";
    expect(r.said).toEqual([
      `earlier runs: the undo of step 3 "stop-writes" (shell; pid 500); the hook of step 5 "warm" (shell; pid 600) are still running; ${blind}: waited out to their time limit: waiting for what an earlier run started to exit (at most ${formatDuration(2900)}) ${tail}`,
      `earlier runs: ${blind}: waited out to their time limit: waiting for what an earlier run started to exit (at most ${formatDuration(2700)}) ${tail}`,
      // D's time is up: C alone
      `earlier runs: the hook of step 4 "hold" (shell): it ran on host b, not this one (h): waited out to its time limit: waiting for what an earlier run started to exit (at most ${formatDuration(1000)}) ${tail}`,
      "earlier runs: their hook processes have exited (or their time limits have passed)",
      `earlier runs: cannot tell whether every process of the hook of step 4 "hold" (shell): it ran on host b, not this one (h) has exited: commit will need a stopWrites' check: to decide`,
      `earlier runs: cannot tell whether every process of the hook of step 6 "tell" (shell): it ran on host c, not this one (h) has exited: commit will need a stopWrites' check: to decide`,
    ]);
    expect(r.reads()).toBe(30);
  });

  it("reads every 200 ms unless told otherwise", async () => {
    let reads = 0;
    const p = probe([]);
    const t0 = performance.now();
    await waitOutEarlierHooks([A], {
      deadlineOf: () => Date.now() + 60_000,
      say: () => {},
      probe: { ...p, list: () => probe(++reads < 3 ? [{ pid: 500, start: 100 }] : []).list() },
    });
    expect(reads).toBe(3);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(390);
  });
});

describe("earlierHooksGate: what commit asks right before it is sent", () => {
  it("live calls now, and the unknown the wait left plus those that cannot be told at all, each once", () => {
    const gate = earlierHooksGate(
      [call(), call({ token: "t2", host: "b" })],
      ["from the wait", 'the undo of step 3 "stop-writes" (shell): it ran on host b, not this one (h)'],
      probe([{ pid: 500, start: 100 }]),
    );
    expect(gate.judge()).toEqual({
      live: ['the undo of step 3 "stop-writes" (shell; pid 500)'],
      unknown: ["from the wait", 'the undo of step 3 "stop-writes" (shell): it ran on host b, not this one (h)'],
    });
    expect(earlierHooksGate([call()], [], probe([])).judge()).toEqual({ live: [], unknown: [] });
  });
});

describe("earlierHooksGate: at commit, from the process table now", () => {
  it("a call that cannot be told now is named even when the wait did not name it; a live one is not among them", () => {
    const C = call({ token: "t3", stepIndex: 3, id: "hold", undo: false, host: "b" });
    expect(earlierHooksGate([call(), C], [], probe([{ pid: 500, start: 100 }])).judge()).toEqual({
      live: ['the undo of step 3 "stop-writes" (shell; pid 500)'],
      unknown: ['the hook of step 4 "hold" (shell): it ran on host b, not this one (h)'],
    });
  });

  it("never asks whose an unreadable environment is (that was judged before the run; one since is the operator's own)", () => {
    const p = probe([{ pid: 700, pgid: 700, sid: 700, start: 150, env: "unreadable" }]);
    const gate = earlierHooksGate([call()], [], {
      ...p,
      uid: () => {
        throw new Error("asked");
      },
    });
    expect(gate.judge()).toEqual({ live: [], unknown: [] });
  });
});

describe("systemProbe: what this machine tells", () => {
  it("this runner: its host, pid, PID namespace, boot and uid", () => {
    expect(systemProbe().self).toEqual({
      host: thisHost(),
      pid: process.pid,
      pidns: readlinkSync("/proc/self/ns/pid"),
      boot: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(),
      uid: process.getuid!(),
    });
  });

  it("signal 0 to a pid, and to a group (alive while any member is, after its leader is gone); never to pid 0 or a negative one", async () => {
    const p = systemProbe();
    expect(p.alive(process.pid)).toBe(true);
    // kill(0) and kill(-1) would ask about this process's group or every process: never
    expect(p.alive(0)).toBe(false);
    expect(p.alive(-1)).toBe(false);
    expect(p.groupAlive(0)).toBe(false);
    expect(p.groupAlive(-processInfo(process.pid)!.pgid)).toBe(false);
    // a group whose leader has exited, a member still running
    const file = join(mkdtempSync(join(tmpdir(), "syncbook-orphans-")), "member");
    const leader = spawn("sh", ["-c", `sleep 30 >/dev/null 2>&1 & echo $! > ${file}`], {
      detached: true,
      stdio: "ignore",
    });
    await new Promise((r) => leader.once("exit", r));
    const member = Number(readFileSync(file, "utf8").trim());
    try {
      expect(p.alive(leader.pid!)).toBe(false);
      expect(p.groupAlive(leader.pid!)).toBe(true);
    } finally {
      process.kill(member, "SIGKILL");
    }
    const end = Date.now() + 5000;
    while (p.groupAlive(leader.pid!) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(p.groupAlive(leader.pid!)).toBe(false);
    expect(p.list()!.some((x) => x.pid === process.pid)).toBe(true);
    expect(p.uid(process.pid)).toBe(process.getuid!());
    expect(Array.isArray(p.environ(process.pid))).toBe(true);
  });
});

describe("the words for several pids, and a namespace this runner cannot name", () => {
  it("a call's live pids, and the pids that may be its, are listed with commas", () => {
    const r = judgeCalls(
      [call()],
      probe([
        { pid: 500, start: 100 },
        { pid: 501, pgid: 500, sid: 500, start: 150 },
      ]),
    );
    expect(r.map((v) => v.live)).toEqual([[500, 501]]);
    const gate = earlierHooksGate(
      [call()],
      [],
      probe([
        { pid: 500, start: 100 },
        { pid: 501, pgid: 500, start: 150 },
      ]),
    );
    expect(gate.judge().live).toEqual(['the undo of step 3 "stop-writes" (shell; pid 500, 501)']);
  });

  it("the pids that may be a call's, with commas; another namespace when this runner's own cannot be named", async () => {
    const maybe = (pid: number): Proc => ({ pid, pgid: pid, sid: pid, start: 150, env: "unreadable" });
    const said: string[] = [];
    const v = await waitOutEarlierHooks([call()], {
      deadlineOf: () => 0,
      say: (x) => said.push(x),
      probe: probe([maybe(700), maybe(701)]),
      everyMs: 0,
    });
    expect(v.unknown).toEqual([
      'the undo of step 3 "stop-writes" (shell): pid 700, 701 is a process of this user started after it whose environment cannot be read, so it may be one of its',
    ]);
    expect(verdict([call({ pidns: "pid:[2]" })], probe([], { self: { pidns: undefined } }))).toEqual([
      {
        live: [],
        maybe: [],
        unknown:
          "it ran in another PID namespace (pid:[2]; this runner is in one it cannot name): its pids mean nothing here",
      },
    ]);
  });
});
