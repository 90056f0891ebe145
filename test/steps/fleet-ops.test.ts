/**
 * Each decision of the command reconciliation (src/steps/kit/fleet-ops.ts `sendCommand`), pinned
 * against a scripted fleet (test/support/fleet-fake.ts): send, resend, skip (took effect), refuse,
 * stop. The identity interlock is pinned in fleet-identity.test.ts.
 * Every case cites the sentence it enforces:
 *
 * - [item 1] issue 12: "After any transport failure once the request may have reached the
 *   service, the command's effect is unknown until progress proves it *took* effect, or the
 *   service refuses a repeat; wait out a settle window before judging 'did not take effect', and
 *   prefer stopping with what was seen over a resend whenever in doubt."
 * - [block] service facts: "`commit` and `reverse` block until they have been called on every
 *   instance; send them to all at once".
 * - [design] DESIGN.md: "`start` and `commit` are not blindly retried — after a transport error
 *   the runner reads progress to learn whether they took effect."
 * - [spec-err] spec, Errors 1: "Every failing start or commit call returns success false
 *   together with an error name and a detailed description." (a refusal is an answer)
 * - [item 2] issue 12: "… refuse `commit`, `reverse`, `pause`, `resume` on a fleet that is not one."
 */
import { describe, expect, it } from "vitest";
import { commandTookEffect, type CommandOperation } from "../../src/api/index.js";
import type { Progress } from "../../src/api/types.js";
import { StepFailure, StepTimeout } from "../../src/steps/index.js";
import { observeIdentity, sendCommand } from "../../src/steps/kit/fleet-ops.js";
import { context, reasons, REQUEST_TIMEOUT, scripted, type Read } from "../support/fleet-fake.js";

const spec = (op: CommandOperation, accepted: number[] = []) => ({
  op,
  body: {},
  tookEffect: (p: Progress) => commandTookEffect(op, p.state),
  onAccepted: (n: number) => void accepted.push(n),
});
/** A blocking commit as the service runs it: RUNNING on every instance until the last one has received it. */
const held = ({ sends }: { sends: number[] }): Read => ({ state: sends[1]! >= 2 ? "COMMITTING" : "RUNNING" });

describe("sendCommand: send, resend, skip, refuse, stop", () => {
  it("[design] every instance answers: one send each, no progress read, nothing resent", async () => {
    const f = scripted({ sends: [{}], reads: [[{}], [{}]] });
    const { ctx } = context(f.fleet);
    const accepted: number[] = [];
    await expect(sendCommand(ctx, spec("start", accepted))).resolves.toEqual({ skewMs: 0, resent: [] });
    expect(f.sent).toEqual([[0], [0]]);
    expect(f.reads).toBe(0);
    expect(accepted.at(-1)).toBe(2);
  });

  it("[spec-err] a refusal is an answer: never resent, the step fails, the error is remembered for commit's no-errors", async () => {
    const f = scripted({ sends: [{ 1: "refused" }], reads: [[{}], [{}]] });
    const { ctx } = context(f.fleet);
    const err = await sendCommand(ctx, spec("pause")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepFailure);
    expect((err as Error).message).toMatch(/pause refused by .*the fleet is now split/);
    expect(f.sent).toEqual([[0], [0]]);
    expect(f.reads).toBe(0);
    expect(ctx.run.memory.serviceErrors).toHaveLength(1);
  });

  it("[item 1] a request that never left (refused at connect) on an instance showing the state it is sent in: sent again at once (no settle window)", async () => {
    const f = scripted({ sends: [{ 1: "not-sent" }, {}], reads: [[{ state: "IDLE" }], [{ state: "IDLE" }]] });
    const { ctx, events } = context(f.fleet);
    const t0 = Date.now();
    const r = await sendCommand(ctx, spec("start"));
    expect(Date.now() - t0).toBeLessThan(REQUEST_TIMEOUT);
    expect(r.resent).toEqual(["sync1"]);
    expect(f.sent).toEqual([[0], [0, 1]]);
    expect(reasons(events, "retry")[0]).toMatch(/start had not taken effect on sync1 \(the request never left\)/);
  });

  it("[item 1] a reset after the request left, before state shown: not judged before the settle window (the request's time limit), then one resend", async () => {
    const f = scripted({ sends: [{ 1: "reset" }, {}], reads: [[{ state: "RUNNING" }], [{ state: "RUNNING" }]] });
    const { ctx, events } = context(f.fleet);
    const t0 = Date.now();
    await sendCommand(ctx, spec("pause"));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(REQUEST_TIMEOUT - 5);
    expect(f.reads).toBeGreaterThan(1);
    expect(f.sent).toEqual([[0], [0, 1]]);
    expect(reasons(events, "retry")[0]).toMatch(/progress still shows RUNNING after/);
  });

  it("[item 1] a timeout: the settle window is twice the request's time limit (it may still be in flight)", async () => {
    const f = scripted({ sends: [{ 1: "timeout" }, {}], reads: [[{ state: "RUNNING" }], [{ state: "RUNNING" }]] });
    const { ctx } = context(f.fleet);
    const t0 = Date.now();
    await sendCommand(ctx, spec("pause"));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2 * REQUEST_TIMEOUT - 5);
    expect(f.sent).toEqual([[0], [0, 1]]);
  });

  it("[item 1] the effect shows late, within the window: resolved as taken, never resent", async () => {
    const f = scripted({
      sends: [{ 1: "reset" }],
      reads: [[{ state: "RUNNING" }], [{ state: "IDLE" }, { state: "IDLE" }, { state: "RUNNING" }]],
    });
    const { ctx, events } = context(f.fleet);
    const accepted: number[] = [];
    await sendCommand(ctx, spec("start", accepted));
    expect(f.sent).toEqual([[0], [0]]);
    expect(reasons(events, "reconcile").some((r) => /start took effect on sync1 \(state RUNNING\)/.test(r))).toBe(true);
    expect(accepted.at(-1)).toBe(2);
  });

  it("[item 1] the service refuses the repeat and progress then shows the effect: taken, and the refusal is not an error of the run", async () => {
    // RUNNING through the first settle window, PAUSED in the second
    const late = ({ ms }: { ms: number }): Read => ({ state: ms > 1.5 * REQUEST_TIMEOUT ? "PAUSED" : "RUNNING" });
    const f = scripted({ sends: [{ 1: "reset" }, { 1: "refused" }], reads: [[{ state: "PAUSED" }], late] });
    const { ctx, events } = context(f.fleet);
    await sendCommand(ctx, spec("pause"));
    expect(f.sent).toEqual([[0], [0, 1]]);
    expect(ctx.run.memory.serviceErrors).toEqual([]);
    expect(reasons(events, "reconcile").some((r) => /took effect on sync1 .*the repeat was refused/.test(r))).toBe(
      true,
    );
  });

  it("[item 1] the service refuses the repeat and progress still shows the old state: stop, no third send", async () => {
    const f = scripted({
      sends: [{ 1: "reset" }, { 1: "refused" }],
      reads: [[{ state: "PAUSED" }], [{ state: "RUNNING" }]],
    });
    const { ctx } = context(f.fleet);
    const err = (await sendCommand(ctx, spec("pause")).catch((e: unknown) => e)) as StepFailure;
    expect(err.reason).toBe("unsafe");
    expect(err.message).toMatch(/sync1 refused a repeat .* yet still shows state RUNNING/);
    expect(f.sent).toEqual([[0], [0, 1]]);
  });

  it("[block] a blocking commit whose answer was lost on an instance still RUNNING: never resent there (it may hold it); stop", async () => {
    const f = scripted({ sends: [{ 0: "timeout", 1: "reset" }], reads: [[{}], [{}]] });
    const { ctx } = context(f.fleet);
    const err = (await sendCommand(ctx, spec("commit")).catch((e: unknown) => e)) as StepFailure;
    expect(err.reason).toBe("unsafe");
    expect(err.message).toMatch(/sync0 gave no usable answer .* may be holding one/);
    expect(err.message).toMatch(/sync1 gave no usable answer/);
    expect(err.message).toMatch(/nothing was resent \(commit answered by no instance\)/);
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("[block] the same for reverse (COMMITTED proves nothing while it is held)", async () => {
    const f = scripted({ sends: [{ 1: "reset" }], reads: [[{ state: "RUNNING" }], [{ state: "COMMITTED" }]] });
    const { ctx } = context(f.fleet);
    await expect(sendCommand(ctx, spec("reverse"))).rejects.toThrow(/reverse blocks until every instance/);
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("[block] a blocking commit never sent to one instance while another may hold it: sent again to the one it never reached only", async () => {
    const f = scripted({
      sends: [{ 0: "timeout", 1: "not-sent" }, {}],
      // sync0 holds it (RUNNING) until sync1 has it too, then both commit
      reads: [held, held],
    });
    const { ctx } = context(f.fleet);
    const r = await sendCommand(ctx, spec("commit"));
    expect(r.resent).toEqual(["sync1"]);
    expect(f.sent).toEqual([[0], [0, 1]]);
  });

  it("[item 1] a command that does not block is not resent to anyone while another instance is in doubt", async () => {
    const f = scripted({
      sends: [{ 0: "reset", 1: "not-sent" }],
      reads: [[{ state: "COMMITTING" }], [{ state: "PAUSED" }]],
    });
    const { ctx } = context(f.fleet);
    await expect(sendCommand(ctx, spec("resume"))).rejects.toThrow(/cannot tell whether resume took effect on sync0/);
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("[design] a state that is neither before nor after (PAUSED for commit): cannot tell, stop", async () => {
    const f = scripted({ sends: [{ 1: "reset" }], reads: [[{ state: "COMMITTING" }], [{ state: "PAUSED" }]] });
    const { ctx } = context(f.fleet);
    await expect(sendCommand(ctx, spec("commit"))).rejects.toThrow(
      /cannot tell whether commit took effect on sync1 \(state PAUSED\)/,
    );
  });

  it("[design] a request that never left, and no progress answers: it never reached it, and nothing says it is safe to send", async () => {
    const f = scripted({ sends: [{ 1: "not-sent" }], reads: [[{ state: "RUNNING" }], ["error"]] });
    const { ctx } = context(f.fleet);
    await expect(sendCommand(ctx, spec("start"))).rejects.toThrow(
      /start never reached sync1 \(.*\), and progress does not show it is safe to send; nothing was resent/,
    );
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("[design] at most three resends, then stop with what was seen", async () => {
    const f = scripted({
      sends: [{ 1: "not-sent" }, { 1: "not-sent" }, { 1: "not-sent" }, { 1: "not-sent" }, {}],
      reads: [[{ state: "RUNNING" }], [{ state: "IDLE" }]],
    });
    const { ctx } = context(f.fleet);
    await expect(sendCommand(ctx, spec("start"))).rejects.toThrow(/after 3 resends/);
    expect(f.sent[1]).toHaveLength(4);
  });

  it("[item 2] a resend is refused when the fleet stopped being one fleet meanwhile", async () => {
    const f = scripted({
      sends: [{ 1: "not-sent" }],
      reads: [
        [{ state: "IDLE", mongosyncID: "a", coordinatorID: "a" }],
        [{ state: "IDLE", mongosyncID: "b", coordinatorID: "other" }],
      ],
    });
    const { ctx } = context(f.fleet);
    // the runner's fleet observes every read; here the snapshot is observed by hand
    const progress = f.fleet.progress.bind(f.fleet);
    ctx.run.fleet.progress = async (s) => {
      const snap = await progress(s);
      observeIdentity(ctx.run, snap);
      return snap;
    };
    await expect(sendCommand(ctx, spec("start"))).rejects.toThrow(/refused \(fleet-identity\)/);
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("[item 1] the step's time limit during the settle window: a StepFailure that says what was sent and seen", async () => {
    const f = scripted({ sends: [{ 1: "reset" }], reads: [[{}], [{}]] });
    const ac = new AbortController();
    const { ctx } = context(f.fleet, { signal: ac.signal });
    setTimeout(() => ac.abort(new StepTimeout(50)), 50);
    const accepted: number[] = [];
    const err = (await sendCommand(ctx, spec("commit", accepted)).catch((e: unknown) => e)) as StepFailure;
    expect(err).toBeInstanceOf(StepFailure);
    expect(err.message).toMatch(
      /commit was sent \(accepted by 1 instance\(s\)\); the step's time limit \(50ms\) passed while reading progress .* sync1 \(.*; last seen RUNNING\)/,
    );
    // the caller learns the commit was accepted even though the step failed
    expect(accepted.at(-1)).toBe(1);
  });

  it("an interruption (Ctrl-C) during the settle window is passed on as is", async () => {
    const f = scripted({ sends: [{ 1: "reset" }], reads: [[{}], [{}]] });
    const ac = new AbortController();
    const { ctx } = context(f.fleet, { signal: ac.signal });
    const why = new Error("interrupted by SIGINT");
    setTimeout(() => ac.abort(why), 30);
    await expect(sendCommand(ctx, spec("commit"))).rejects.toBe(why);
  });
});

describe("start is never sent twice", () => {
  it("a start that may have reached an instance (reset after it left) and still shows IDLE after the window: a doubt, never resent", async () => {
    const f = scripted({ sends: [{ 1: "reset" }, {}], reads: [[{ state: "RUNNING" }], [{ state: "IDLE" }]] });
    const { ctx } = context(f.fleet);
    const err = await sendCommand(ctx, spec("start")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepFailure);
    expect((err as StepFailure).reason).toBe("unsafe");
    expect((err as Error).message).toMatch(
      /a start can take effect later than its request's time limit, and start is never sent twice/,
    );
    expect(f.sent).toEqual([[0], [0]]);
  });

  it("a start that certainly never left (connect refused) is still sent again", async () => {
    const f = scripted({ sends: [{ 1: "not-sent" }, {}], reads: [[{ state: "RUNNING" }], [{ state: "IDLE" }]] });
    const { ctx } = context(f.fleet);
    await sendCommand(ctx, spec("start"));
    expect(f.sent).toEqual([[0], [0, 1]]);
  });
});
