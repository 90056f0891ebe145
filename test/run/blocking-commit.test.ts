/**
 * Reconciling a commit whose answers were lost, when commit blocks (service facts: "`commit` and
 * `reverse` block until they have been called on every instance; send them to all at once").
 * One instance's commit is lost before the service handled it; the other's is handled and waits
 * for it, so its answer times out while its request is still in the service. Progress shows both
 * RUNNING, but only the first may be sent commit again: the second is in the round already.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { runRunbook } from "../../src/run/runner.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { COMMIT, posts, READY, runbookFor, sim, START, STOP } from "../support/run.js";

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("a blocked commit is not sent twice", () => {
  it("the lost one is sent again, the one blocked in the round is not: both commit, each got commit once", async () => {
    s = await sim({ instances: 2, faults: ["non-json=1@0/commit"] });
    const sim0 = s;
    const loaded = await parseRunbook(runbookFor(sim0, START + READY + STOP + COMMIT), "rb.yaml", { env: {} });
    const { registry } = await loadRunbookPlugins(loaded);
    const events: RunEvent[] = [];
    const result = await runRunbook({
      loaded,
      registry,
      print: () => undefined,
      listeners: [
        (e) => void events.push(e),
        (e) => {
          // the resend of the lost commit gets through
          if (e.type === "decision" && e.kind === "reconcile" && e.index === 3) sim0.control.clearFaults();
        },
      ],
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(sim0, "commit")).toEqual([2, 1]);
    expect(sim0.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
    const decisions = events.filter((e): e is RunEventOf<"decision"> => e.type === "decision");
    expect(decisions.some((d) => /commit had not taken effect on sync0 \(/.test(d.reason))).toBe(true);
    expect(decisions.some((d) => /commit took effect on sync1/.test(d.reason))).toBe(true);
  });
});
