/**
 * Issue 12, item 12: "Durations of 25 days or more overflow timers: `timeout: 30d` failed after
 * 8 ms, `pollInterval: 25d` sent 2,759 polls in 5 s. Bound or handle large durations." Node keeps
 * a timer's delay in 32 bits: past 2^31 − 1 ms (24.8 days) it fires after 1 ms. Every timer a
 * runbook duration feeds (step timeouts, polls, sleeps, request and hook timeouts, retry delays)
 * goes through src/timers.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { delay, delayUntil, MAX_TIMER_MS, setLongTimeout, timeoutSignal, timerMs } from "../../src/timers.js";
import { runbookFor, runYaml, sim, START } from "../support/run.js";
import { startServer } from "../support/http-server.js";

let sims: Simulator[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

const DAY = 24 * 3600_000;
const progressReads = (s: Simulator, i = 0): number => s.control.counts().instances[i]!["GET /api/v1/progress"] ?? 0;

describe("item 12: timers for any duration (src/timers.ts)", () => {
  it("setLongTimeout: 30 days fires after 30 days, not after the 32-bit overflow's 1 ms", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    setLongTimeout(fn, 30 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_MS - 1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledOnce();
  });

  it("setLongTimeout: clear() stops the chain, also between pieces", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const t = setLongTimeout(fn, 60 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    t.clear();
    vi.advanceTimersByTime(60 * DAY);
    expect(fn).not.toHaveBeenCalled();
  });

  it("delay rejects with the signal's own reason, never a bare 'The operation was aborted'", async () => {
    const ac = new AbortController();
    const reason = new Error("the step's time limit");
    setTimeout(() => ac.abort(reason), 20);
    await expect(delay(30 * DAY, ac.signal)).rejects.toBe(reason);
    await expect(delay(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it("delayUntil waits until the clock it is given says so, however early its timers fire", async () => {
    // a clock at half speed: one timer of the distance left always ends before the clock's `at`
    const t0 = performance.now();
    const clock = (): number => t0 + (performance.now() - t0) / 2;
    await delayUntil(t0 + 30, undefined, clock);
    expect(clock()).toBeGreaterThanOrEqual(t0 + 30);
    const reason = new Error("interrupted");
    await expect(delayUntil(clock() + 30 * DAY, AbortSignal.abort(reason), clock)).rejects.toBe(reason);
  });

  it("timeoutSignal takes any length (AbortSignal.timeout throws past 2^32 ms) and aborts with a TimeoutError", async () => {
    expect(() => AbortSignal.timeout(2 ** 32)).toThrow(RangeError);
    const long = timeoutSignal(30 * DAY);
    await new Promise((r) => setTimeout(r, 20));
    expect(long.signal.aborted).toBe(false);
    long.clear();
    const short = timeoutSignal(5);
    await new Promise((r) => setTimeout(r, 40));
    expect((short.signal.reason as Error).name).toBe("TimeoutError");
  });

  it("timerMs bounds a backstop to what one timer holds", () => {
    expect(timerMs(30 * DAY)).toBe(MAX_TIMER_MS);
    expect(timerMs(1500)).toBe(1500);
    expect(timerMs(-5)).toBe(0);
    expect(timerMs(Number.NaN)).toBe(0);
  });
});

describe("item 12: a runbook's long durations, end to end against the simulator", () => {
  it("a waitFor with `timeout: 30d` waits (it failed after a few ms)", async () => {
    const s = await sim();
    sims.push(s);
    const steps = `${START}  - { id: running, waitFor: { state: RUNNING, copyStarted: true, timeout: 30d } }\n`;
    const { result } = await runYaml(runbookFor(s, steps));
    expect(result.exitCode, result.message).toBe(0);
  });

  // a newcomer's rehearsal: `timeout: 12` (seconds) on a wait that could not end said "timed out after 240ms"
  it("on a faster clock (a rehearsal), a time limit is said as the runbook states it, with its wall time beside it", async () => {
    const s = await sim({ timeScale: 50 });
    sims.push(s);
    const wait = "  - { id: never, waitFor: { state: COMMITTED, timeout: 12 } }\n";
    const { result } = await runYaml(runbookFor(s, START + wait), { timeScale: 50 });
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /step never failed: timed out after 12s \(240ms of wall time on the rehearsal's faster clock\) waiting for state COMMITTED/,
    );
    const nap = await runYaml(runbookFor(s, "  - { id: nap, timeout: 1m, sleep: 30d }\n"), { timeScale: 50 });
    expect(nap.result.message).toMatch(
      /step nap failed: timed out after 1m 00s \(1\.2s of wall time on the rehearsal's faster clock\) waiting for a 30d 0h sleep/,
    );
  });

  it("`sleep: 30d` sleeps until the step's own time limit (it ended at once)", async () => {
    const s = await sim();
    sims.push(s);
    const t0 = Date.now();
    const { result } = await runYaml(runbookFor(s, "  - { id: nap, timeout: 400ms, sleep: 30d }\n"));
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(/step nap failed: timed out after 400ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
  });

  it("a step `timeout: 30d` does not fire at once, and a `pollInterval: 25d` polls once, not in a tight loop", async () => {
    const s = await sim();
    sims.push(s);
    // the condition never holds (IDLE): the first read, then a 25-day wait, ended by Ctrl-C after 1 s
    const ac = new AbortController();
    const steps = "  - { id: ready, waitFor: { canCommit: true, pollInterval: 25d, timeout: 30d } }\n";
    setTimeout(() => ac.abort(new Error("interrupted by SIGINT")), 1000);
    const { result } = await runYaml(runbookFor(s, steps), { signal: ac.signal });
    expect(result.outcome).toBe("interrupted");
    expect(progressReads(s)).toBeLessThanOrEqual(2);
  });

  it("`requestTimeout: 30d`: requests get their answers (every request failed after 1 ms)", async () => {
    const s = await sim();
    sims.push(s);
    const yaml = runbookFor(s, `${START}  - { id: running, waitFor: { state: RUNNING } }\n`).replace(
      "requestTimeout: 2s",
      "requestTimeout: 30d",
    );
    const { result } = await runYaml(yaml);
    expect(result.exitCode, result.message).toBe(0);
  });

  it("a hook with `timeout: 30d` (the step's and the shell's own) runs to its end", async () => {
    const s = await sim();
    sims.push(s);
    const hook = `  - id: slow-hook\n    hook: { use: shell, timeout: 30d, with: { command: [node, -e, "setTimeout(() => {}, 300)"], timeout: 30d } }\n`;
    const { result } = await runYaml(runbookFor(s, hook));
    expect(result.exitCode, result.message).toBe(0);
  });

  it("an http hook's `retryDelay: 25d` waits before its retry (it retried at once)", async () => {
    const s = await sim();
    sims.push(s);
    const server = await startServer((_req, _n, res) => res.writeHead(503).end());
    try {
      const url = `${server.url}/hook`;
      const hook = `  - { id: call, timeout: 800ms, hook: { use: http, with: { url: "${url}", retries: 1, retryDelay: 25d } } }\n`;
      const { result } = await runYaml(runbookFor(s, hook));
      expect(result.exitCode).toBe(1);
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
