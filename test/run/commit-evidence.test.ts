/**
 * What a journal says of commit (src/run/earlier.ts): `commitEvidence`, any commit of the cutover
 * (what `--abort` and the undos go by), and `currentSyncCommit`, the commit of the sync that runs
 * now: a reverse that took effect starts a new sync whose commit is its own, as a run's memory
 * after its reverse step says (src/steps/lifecycle.ts). An adversarial run found a resumed
 * reverse reported "committed" where the same run without a kill said "not committed".
 */
import { describe, expect, it } from "vitest";
import { commitEvidence, currentSyncCommit, lastReverse } from "../../src/run/earlier.js";
import { cmd, state } from "../support/reconcile-fixtures.js";

const none = { sent: false, accepted: false };
const both = { sent: true, accepted: true };

describe("currentSyncCommit", () => {
  it("a commit, then a reverse whose step ended ok: the current sync has none; the cutover had one", () => {
    for (const reverse of [cmd("reverse", 3, "ok"), cmd("reverse", 3, "unknown")]) {
      const s = state(["ok", "ok", "ok", "ok"], [cmd("commit", 2, "ok"), reverse]);
      expect(currentSyncCommit(s, false)).toEqual(none);
      expect(lastReverse(s)).toEqual({ at: 1, stepIndex: 3 });
      expect(commitEvidence(s)).toEqual(both);
    }
  });
  it("a reverse whose step did not end ok starts nothing, even one some instance accepted (as a run's memory: its step failed first)", () => {
    for (const [reverse, step] of [
      [cmd("reverse", 3, "error"), "failed"],
      [cmd("reverse", 3, "unknown"), "cut"],
      [cmd("reverse", 3, "ok", "error"), "failed"],
      [cmd("reverse", 3, "ok"), "cut"],
    ] as const) {
      const s = state(["ok", "ok", "ok", step], [cmd("commit", 2, "ok"), reverse]);
      expect(currentSyncCommit(s, false), `${reverse.answered} ${step}`).toEqual(both);
      expect(lastReverse(s)).toBeUndefined();
    }
  });
  it("a resume that adopts a reverse: the current sync has no commit, whatever the journal", () => {
    const s = state(["ok", "ok", "ok", "cut"], [cmd("commit", 2, "ok"), cmd("reverse", 3, "unknown")]);
    expect(currentSyncCommit(s, true)).toEqual(none);
  });
  it("a commit after the reverse is the current sync's", () => {
    const s = state(
      ["ok", "ok", "ok", "ok"],
      [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok"), cmd("commit", 2, "unknown")],
    );
    expect(currentSyncCommit(s, false)).toEqual(both);
    const refused = state(
      ["ok", "ok", "failed", "ok"],
      [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok"), cmd("commit", 2, "error")],
    );
    expect(currentSyncCommit(refused, false)).toEqual(none);
  });
});
