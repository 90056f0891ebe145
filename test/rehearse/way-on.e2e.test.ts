/**
 * A rehearsal's failure names no real run's way on (src/steps/kit/context.ts `wayOn`): its
 * verifier's hints said "restart the verifier, and run again with --resume", which pasted acts on
 * the runbook's real fleet, or is refused for want of a journal a rehearsal never writes. Driven
 * by the rehearsal's own verifier faults: writesOff refused for a cluster time (src/steps/kit/
 * verifier.ts `refused`) and a progress with an error (`VerifierReader.read`).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, CUTOVER, runbookFor, sim, tempDir, writeRunbook } from "../support/run.js";

const sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

/** The failing step's hint, as the rehearsal prints it. */
const hintOf = (all: string): string | undefined => /✖ \[\d+\/\d+\][^\n]*failed[\s\S]*?hint: (.*)/.exec(all)?.[1];

describe("a rehearsal that fails at the verifier", () => {
  for (const [fault, failed] of [
    ["writes-off-refused@verifier", /✖ \[\d+\/\d+\] [^\n]* failed in \d+ms: the verifier refused writesOff: /],
    ["verifier-error=boom@verifier", /✖ \[\d+\/\d+\] [^\n]* failed in \d+ms: the verifier failed: "boom"/],
  ] as const)
    it(`names the rehearsal again, never syncbook run nor --resume (${fault})`, async () => {
      const s = await sim({ instances: 1 });
      sims.push(s);
      const dir = tempDir();
      const file = writeRunbook(dir, runbookFor(s, CUTOVER).replace("timeout: 20s", "timeout: 20m"));
      const r = await cli(["rehearse", file, "--renderer", "simple", "--yes", "--fault", fault], { cwd: dir });
      expect(r.code, r.all).toBe(1);
      expect(r.all).toMatch(failed);
      expect(hintOf(r.all), r.all).toMatch(
        /The verifier is the simulator's, stopped with the rehearsal: see why above, then rehearse again\.$/,
      );
      expect(r.all).not.toContain("syncbook run");
      expect(r.all).not.toContain("--resume");
    }, 90_000);
});
