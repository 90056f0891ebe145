/**
 * What a journal says of commit (src/run/earlier.ts): `commitEvidence`, any commit of the cutover
 * (what `--abort` and the undos go by), and `currentSyncCommit`, the commit of the sync that runs
 * now: a reverse that took effect starts a new sync whose commit is its own, as a run's memory
 * after its reverse step says (src/steps/lifecycle.ts). An adversarial run found a resumed
 * reverse reported "committed" where the same run without a kill said "not committed".
 */
import { describe, expect, it } from "vitest";
import { commitEvidence, currentSyncCommit } from "../../src/run/earlier.js";
import { cmd, state } from "../support/reconcile-fixtures.js";

const none = { sent: false, accepted: false };
const both = { sent: true, accepted: true };

describe("currentSyncCommit", () => {
  it("a commit, then a reverse that took effect: the current sync has none; the cutover had one", () => {
    for (const reverse of [cmd("reverse", 3, "ok"), cmd("reverse", 3, "unknown")]) {
      // the reverse's step ended ok, or its answer said ok
      const s = state(["ok", "ok", "ok", reverse.answered === "ok" ? "-" : "ok"], [cmd("commit", 2, "ok"), reverse]);
      expect(currentSyncCommit(s, false)).toEqual(none);
      expect(commitEvidence(s)).toEqual(both);
    }
  });
  it("a reverse that did not take effect (refused, or no answer and its step not ended) starts nothing", () => {
    for (const reverse of [cmd("reverse", 3, "error"), cmd("reverse", 3, "unknown")]) {
      const s = state(["ok", "ok", "ok", "cut"], [cmd("commit", 2, "ok"), reverse]);
      expect(currentSyncCommit(s, false)).toEqual(both);
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
    expect(currentSyncCommit(s, false)).toEqual({ sent: true, accepted: true });
    const refused = state(
      ["ok", "ok", "failed", "ok"],
      [cmd("commit", 2, "ok"), cmd("reverse", 3, "ok"), cmd("commit", 2, "error")],
    );
    expect(currentSyncCommit(refused, false)).toEqual(none);
  });
});
