/**
 * The one table of the service's commands and states (src/api/commands.ts) that the runner's
 * interlocks, its reconcile after a lost answer and `--resume` all read. Spec "Errors" 5: "Start
 * fails when the service is not in state IDLE"; service facts: commit only in RUNNING, pause in
 * RUNNING, resume in PAUSED, reverse after COMMITTED (COMMITTED → REVERSING → RUNNING);
 * INITIALIZING (1.20) comes before IDLE: "not ready for /start".
 */
import { describe, expect, it } from "vitest";
import {
  blocksUntilEveryInstance,
  COMMAND_EFFECT,
  COMMAND_OPERATIONS,
  commandTookEffect,
  isCommandOperation,
} from "../../src/api/index.js";
import { SPONTANEOUS, closeStates, sentOnceOnly, settledStates } from "../../src/api/commands.js";
import { SYNC_STATES } from "../../src/api/types.js";

describe("command effects", () => {
  it("each command is sent in one state and leaves it; the table names only real states", () => {
    expect(COMMAND_EFFECT.start.before).toEqual(["IDLE"]);
    expect(COMMAND_EFFECT.start.result).toEqual(["RUNNING"]);
    expect(COMMAND_EFFECT.start.after).not.toContain("INITIALIZING");
    expect(COMMAND_EFFECT.commit).toEqual({
      before: ["RUNNING"],
      after: ["COMMITTING", "COMMITTED"],
      result: ["COMMITTING"],
    });
    expect(COMMAND_EFFECT.pause).toEqual({ before: ["RUNNING"], after: ["PAUSED"], result: ["PAUSED"] });
    expect(COMMAND_EFFECT.resume).toEqual({ before: ["PAUSED"], after: ["RUNNING"], result: ["RUNNING"] });
    expect(COMMAND_EFFECT.reverse).toEqual({
      before: ["COMMITTED"],
      after: ["REVERSING", "RUNNING", "PAUSED", "COMMITTING"],
      result: ["REVERSING"],
    });
    for (const op of COMMAND_OPERATIONS) {
      const { before, after } = COMMAND_EFFECT[op];
      for (const s of [...before, ...after]) expect(SYNC_STATES, `${op}: ${s}`).toContain(s);
      expect(
        before.filter((s) => after.includes(s)),
        op,
      ).toEqual([]);
    }
  });

  it("took effect: yes after, certainly not before, cannot tell otherwise (never a guess)", () => {
    // INITIALIZING is before IDLE (a restarted service): it cannot tell whether a start arrived
    expect(commandTookEffect("start", "INITIALIZING")).toBeUndefined();
    expect(commandTookEffect("start", "RUNNING")).toBe(true);
    expect(commandTookEffect("reverse", "REVERSING")).toBe(true);
    expect(commandTookEffect("start", "IDLE")).toBe(false);
    expect(commandTookEffect("start", "SOMETHING_NEW")).toBeUndefined();
    expect(commandTookEffect("commit", "COMMITTING")).toBe(true);
    expect(commandTookEffect("commit", "RUNNING")).toBe(false);
    expect(commandTookEffect("commit", "PAUSED")).toBeUndefined();
    expect(commandTookEffect("commit", undefined)).toBeUndefined();
    expect(commandTookEffect("reverse", "COMMITTED")).toBe(false);
  });

  it("the service's own moves: INITIALIZING → IDLE, COMMITTING → COMMITTED, REVERSING → RUNNING", () => {
    expect(SPONTANEOUS).toEqual({ INITIALIZING: "IDLE", COMMITTING: "COMMITTED", REVERSING: "RUNNING" });
    expect(settledStates("reverse")).toEqual(["REVERSING", "RUNNING"]);
    expect(settledStates("commit")).toEqual(["COMMITTING", "COMMITTED"]);
    expect(settledStates("start")).toEqual(["RUNNING"]);
    expect([...closeStates(["INITIALIZING"])]).toEqual(["INITIALIZING", "IDLE"]);
  });

  it("names the commands and nothing else", () => {
    expect([...COMMAND_OPERATIONS].sort()).toEqual(["commit", "pause", "resume", "reverse", "start"]);
    expect(isCommandOperation("commit")).toBe(true);
    expect(isCommandOperation("progress")).toBe(false);
    expect(isCommandOperation("toString")).toBe(false);
  });

  // facts: "`commit` and `reverse` block until they have been called on every instance"; "`pause` applies per
  // instance": a blocking command's old state after a lost answer proves nothing (fleet-ops.ts sendCommand)
  it("commit and reverse block until every instance has them; start, pause, resume do not", () => {
    expect(COMMAND_OPERATIONS.filter(blocksUntilEveryInstance).sort()).toEqual(["commit", "reverse"]);
  });
});

describe("which commands are never sent twice to an instance they may have reached", () => {
  it("start (it can take effect after its time limit), commit and reverse (held until every instance has them); pause and resume may be resent once their state proves the first did not take effect", () => {
    expect(COMMAND_OPERATIONS.filter((op) => sentOnceOnly(op))).toEqual(["start", "commit", "reverse"]);
    expect(COMMAND_OPERATIONS.filter((op) => !sentOnceOnly(op))).toEqual(["pause", "resume"]);
  });
});
