/**
 * A check the killed run sent and never judged. After a reverse the verifier must be restarted
 * with --clean for the sync that runs the other way; the restarted verifier shows the old
 * verification's counters until a check arrives (--clean acts at the first check: service facts),
 * so a check's first answers decide whether it started afresh (src/steps/kit/earned.ts
 * `freshStart`). A runner killed with that check on its way never read them; its `--resume` read
 * the verifier once it was past generation 0 and said "the check resumed a verification its
 * metadata held": a fresh verification gets there too (an adversarial run). It is refused still
 * (which it is cannot be told), said so, and the hint's way on verifies. The built CLI against
 * the simulator over loopback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cli, startCli } from "../support/run.js";
import {
  CHECK,
  cleanedUpAfterAll,
  cliCutover,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  REVERSE,
  START_REV,
  STOP,
  until,
  VERIFY,
  STOP_AGAIN,
  DRAINED_AGAIN,
  COMMIT_AGAIN,
} from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

const AGAIN =
  STOP_AGAIN +
  DRAINED_AGAIN +
  "  - { id: check-again, startVerification: {} }\n" +
  COMMIT_AGAIN +
  "  - { id: verify-again, verify: {} }\n";

async function generation(verifierUrl: string): Promise<number> {
  const r = await fetch(`${verifierUrl}/api/v1/progress`);
  const body = (await r.json()) as { progress?: { generation?: number } };
  return body.progress?.generation ?? -1;
}

describe("a check the killed run never judged, after a restart with --clean", () => {
  it("--resume past generation 0 cannot tell fresh from resumed: refused, said so (not 'resumed'); restarted again, --resume verifies", async () => {
    const c = await cliCutover(made, [], "");
    writeFileSync(
      c.file,
      readFileSync(c.file, "utf8") +
        START_REV +
        READY +
        CHECK +
        STOP +
        DRAINED +
        COMMIT +
        COMMITTED +
        VERIFY +
        REVERSE +
        AGAIN,
    );
    const checks = () => c.s.control.counts().verifier["POST /api/v1/check"] ?? 0;
    // the second check is refused: the verifier finished the verification before the reverse
    const first = await cli(c.args(), { cwd: c.dir });
    expect(first.code, first.all).toBe(1);
    expect(first.all, first.all).toMatch(/step check-again failed/);
    // the operator restarts it with --clean, as the hint says; the next check's answer is slow
    await c.s.control.restartVerifier({ clean: true });
    const slow = c.s.control.addFault("latency=3s@verifier/check");
    const second = startCli(c.args("--resume"), { cwd: c.dir });
    await until("the second check arrives", () => checks() === 2, 60_000);
    second.child.kill("SIGKILL");
    const killed = await second.done;
    c.s.control.removeFault(slow.id);
    // the check took effect on arrival: the verification goes on with no runner
    for (let i = 0; i < 400 && (await generation(c.s.verifierUrl)) < 1; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await generation(c.s.verifierUrl)).toBeGreaterThan(0);
    const third = await cli(c.args("--resume"), { cwd: c.dir });
    const where = `${killed.all}\n--- resume\n${third.all}`;
    expect(third.code, where).toBe(1);
    expect(third.all, where).toMatch(
      /the verifier's verification cannot be told to be this cutover's: after this run's check it shows generation \d+ by the first answer read: its first answers went unread \(the run or step that sent the check ended before them\)/,
    );
    expect(third.all, where).not.toMatch(/resumed a verification this cutover did not start/);
    expect(third.all, where).not.toMatch(/· verified/);
    expect(checks(), where).toBe(2);
    // the hint's way on: restart with --clean, then --resume: a new check, judged by its first answers
    await c.s.control.restartVerifier({ clean: true });
    const fourth = await cli(c.args("--resume"), { cwd: c.dir });
    const all = `${where}\n--- resume\n${fourth.all}`;
    expect(fourth.code, all).toBe(0);
    expect(fourth.all, all).toMatch(/· committed · verified ·/);
    expect(checks(), all).toBe(3);
  }, 150_000);
});
