/**
 * The write-stop window of a runner killed past its commit. The commit takes effect while no
 * runner lives, and the next run sees it only when it starts: the destination took writes
 * somewhere in the time nobody read the fleet. An adversarial run: the run's end, its
 * notification and the report said "writes stopped 4m 30s" of a window that may have closed 20 s
 * in (only `status` said "at the latest"). They now say "at most", and how long no runner read the
 * fleet. The built CLI against the simulator over loopback.
 */
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, startCli } from "../support/run.js";
import {
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  STOP,
  until,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("a runner killed past its commit, resumed after the commit took effect", () => {
  it('the window is "at most" its measured length, with the time no runner read the fleet, in the run\'s end and the report', async () => {
    const { s, dir, args } = await cliCutover(
      made,
      ["latency=2s@0/commit"],
      START + READY + STOP + DRAINED + COMMIT + COMMITTED,
    );
    const commits = () => s.control.counts().instances[0]?.["POST /api/v1/commit"] ?? 0;
    const one = startCli(args(), { cwd: dir });
    await until("the commit arrives", () => commits() === 1, 30_000);
    one.child.kill("SIGKILL");
    await one.done;
    await until("COMMITTED", () => s.control.state().instances[0]?.state === "COMMITTED", 30_000);
    // nobody reads the fleet for a while
    await sleep(3000);
    const report = join(dir, "report");
    const two = await cli(args("--resume", "--report", report), { cwd: dir });
    expect(two.code, two.all).toBe(0);
    expect(commits(), two.all).toBe(1);
    expect(two.all, two.all).toMatch(
      /· writes stopped at most \d+(\.\d+)?s \(no runner read the fleet for \d+(\.\d+)?s of it\) · committed/,
    );
    const json = JSON.parse(readFileSync(join(report, "report.json"), "utf8")) as {
      window: { durationMs: number; unseenMs?: number };
    };
    expect(json.window.unseenMs, two.all).toBeGreaterThanOrEqual(3000);
    expect(json.window.unseenMs!).toBeLessThanOrEqual(json.window.durationMs);
    const html = readFileSync(join(report, "report.html"), "utf8");
    expect(html).toMatch(/at most \d+(\.\d+)?s \(writes stopped → canWrite on the first process, seen after /);
  }, 120_000);
});
