/**
 * What the journal keeps of the run's verification, for `--resume` (issue: "The journal records
 * what the verifier was asked and its baseline; --resume adopts a check or a writesOff that was
 * already accepted instead of resending it, and judges movement against the journaled baseline").
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openJournal, readJournalState } from "../../src/journal/index.js";
import type { RunEvent } from "../../src/events.js";
import { eventFactory, tempDir } from "../support/journal.js";
import { traitsOf } from "../../src/steps/index.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

function journalOf(events: RunEvent[]): string {
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  for (const e of events) j.write(e);
  j.close();
  return j.file;
}

const FRESH = {
  phase: "idle",
  generation: 0,
  error: null,
  verificationStatus: {
    totalTasks: 0,
    addedTasks: 0,
    processingTasks: 0,
    failedTasks: 0,
    completedTasks: 0,
    metadataMismatchTasks: 0,
  },
};
const STEPS = [
  { index: 0, id: "check", kind: "startVerification", title: "check" },
  { index: 1, id: "verify", kind: "verify", title: "verify" },
];

describe("the verifier in the journal", () => {
  it("a reverse sent (it may reach an instance, however its step ends) ends the verification: its check, writesOff and verified no longer count; a new baseline begins another", async () => {
    const steps = [
      ...STEPS,
      { index: 2, id: "rollback", kind: "reverse", title: "reverse" },
      { index: 3, id: "check2", kind: "startVerification", title: "check" },
    ];
    // each journal its own: seq numbers without a gap (a gap reads as tampered)
    const verified = (ev = eventFactory()) => ({
      ev,
      events: [
        ev("run.started", { runbook: "sales", file: "f", hash: "abc", instances: [], mode: "run", steps }),
        ev("step.started", steps[0]!),
        ev("verifier.baseline", { index: 0, id: "check", progress: FRESH, adopted: false, fromStart: true }),
        ev("request.sent", { id: 1, target: "verifier", method: "POST", path: "/api/v1/check", body: {} }),
        ev("response.received", {
          id: 1,
          target: "verifier",
          status: 200,
          ok: true,
          body: { success: true },
          durationMs: 2,
        }),
        ev("step.finished", { index: 0, id: "check", outcome: "ok", durationMs: 5 }),
        // another command of the service (a commit) leaves the verification as it is
        ev("request.sent", {
          id: 3,
          target: "service",
          method: "POST",
          path: "/api/v1/commit",
          body: {},
          instance: { index: 0, url: "http://a" },
        }),
        ev("step.started", steps[1]!),
        ev("verifier.verified", {
          index: 1,
          id: "verify",
          progress: { ...FRESH, generation: 3 },
          writesOffGeneration: 2,
        }),
        ev("step.finished", { index: 1, id: "verify", outcome: "ok", durationMs: 5 }),
        ev("step.started", steps[2]!),
      ],
    });
    const fold = async (events: RunEvent[]) => (await readJournalState(journalOf(events), traitsOf)).verifier;
    const before = await fold(verified().events);
    expect(before).toMatchObject({ check: { answered: "ok" }, verified: { generation: 3 } });
    const sent = (ev: ReturnType<typeof eventFactory>) =>
      ev("request.sent", {
        id: 2,
        target: "service",
        method: "POST",
        path: "/api/v1/reverse",
        body: {},
        instance: { index: 0, url: "http://a" },
      });
    // refused by an interlock before anything was sent: nothing changes
    let j = verified();
    expect(
      await fold([...j.events, j.ev("step.finished", { index: 2, id: "rollback", outcome: "failed", durationMs: 5 })]),
    ).toEqual(before);
    // sent: it may reach an instance, whatever its step's end (refused, split, the runner killed)
    j = verified();
    expect(await fold([...j.events, sent(j.ev)])).toEqual({ reversed: "rollback" });
    j = verified();
    expect(
      await fold([
        ...j.events,
        sent(j.ev),
        j.ev("step.finished", { index: 2, id: "rollback", outcome: "failed", durationMs: 5 }),
      ]),
    ).toEqual({ reversed: "rollback" });
    j = verified();
    expect(
      await fold([
        ...j.events,
        sent(j.ev),
        j.ev("step.finished", { index: 2, id: "rollback", outcome: "ok", durationMs: 5 }),
      ]),
    ).toEqual({ reversed: "rollback" });
    // a reverse line outside any step (a journal from elsewhere): named by its place
    const lone = eventFactory();
    expect(
      await fold([
        lone("run.started", { runbook: "sales", file: "f", hash: "abc", instances: [], mode: "run", steps }),
        sent(lone),
      ]),
    ).toEqual({ reversed: "step 0" });
    j = verified();
    const again = [
      ...j.events,
      sent(j.ev),
      j.ev("step.finished", { index: 2, id: "rollback", outcome: "ok", durationMs: 5 }),
      j.ev("step.started", steps[3]!),
      j.ev("verifier.baseline", { index: 3, id: "check2", progress: FRESH, adopted: false, fromStart: true }),
    ];
    expect((await readJournalState(journalOf(again), traitsOf)).verifier).toEqual({
      baseline: FRESH,
      adopted: false,
      fromStart: true,
      highestGeneration: 0,
    });
  });

  it("a --from run's journal begins with the memory it carried (verifier.carried): its --resume reads the same check, and what came after", async () => {
    const ev = eventFactory();
    const carried = {
      baseline: FRESH,
      adopted: false,
      fromStart: true,
      highestGeneration: 342,
      check: { answered: "ok" as const, at: 1000 },
    };
    const events = [
      ev("run.started", { runbook: "sales", file: "f", hash: "abc", instances: [], mode: "run", steps: STEPS }),
      ev("verifier.carried", { memory: carried, from: "/j/earlier.jsonl" }),
      ev("step.started", STEPS[1]!),
      ev("request.sent", { id: 1, target: "verifier", method: "POST", path: "/api/v1/writesOff", body: {} }),
    ];
    const st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toEqual({ ...carried, writesOff: { answered: "unknown", at: events[3]!.at, inFlight: true } });
  });

  it("an accepted check with its baseline, and a writesOff whose answer never came (the runner died)", async () => {
    const ev = eventFactory();
    const events = [
      ev("run.started", { runbook: "sales", file: "f", hash: "abc", instances: [], mode: "run", steps: STEPS }),
      ev("step.started", STEPS[0]!),
      ev("verifier.baseline", { index: 0, id: "check", progress: FRESH, adopted: false }),
      ev("request.sent", { id: 1, target: "verifier", method: "POST", path: "/api/v1/check", body: {} }),
      ev("response.received", {
        id: 1,
        target: "verifier",
        status: 200,
        ok: true,
        body: { success: true },
        durationMs: 2,
      }),
      ev("step.finished", { index: 0, id: "check", outcome: "ok", durationMs: 5 }),
      ev("step.started", STEPS[1]!),
      ev("request.sent", { id: 2, target: "verifier", method: "POST", path: "/api/v1/writesOff", body: {} }),
    ];
    const st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toEqual({
      baseline: FRESH,
      adopted: false,
      highestGeneration: 0,
      check: { answered: "ok", at: events[3]!.at },
      // no answer line: unknown, and in flight until its time limit; never resent blindly (the
      // resumed run judges by progress)
      writesOff: { answered: "unknown", at: events[7]!.at, inFlight: true },
    });
  });

  it("refusals and lost answers; an accepted one is never downgraded; a new baseline starts over", async () => {
    const ev = eventFactory();
    const sent = (id: number, op: string) =>
      ev("request.sent", { id, target: "verifier", method: "POST", path: `/api/v1/${op}`, body: {} });
    const events = [
      ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false }),
      sent(1, "check"),
      ev("response.received", {
        id: 1,
        target: "verifier",
        ok: false,
        error: "reset",
        errorKind: "transport",
        durationMs: 1,
      }),
      sent(2, "writesOff"),
      ev("response.received", {
        id: 2,
        target: "verifier",
        status: 200,
        ok: false,
        error: "http://v: verifier.writesOff refused: failed to fetch source's cluster time: x",
        errorKind: "service",
        durationMs: 1,
      }),
    ];
    let st = await readJournalState(journalOf(events), traitsOf);
    // a lost answer: the journal does not say whether it timed out (in flight) or was reset (not),
    // so it is read as in flight: a resumed run waits out its time limit before judging it lost
    expect(st.verifier?.check).toEqual({ answered: "unknown", at: events[1]!.at, error: "reset", inFlight: true });
    expect(st.verifier?.writesOff).toMatchObject({ answered: "error", error: expect.stringMatching(/cluster time/) });

    // the verifier restarted: a new verification begins, the earlier asks no longer count
    const running = { ...FRESH, phase: "check", verificationStatus: { ...FRESH.verificationStatus, totalTasks: 5 } };
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: running, adopted: true }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toEqual({
      baseline: running,
      adopted: true,
      highestGeneration: 0,
      check: { answered: "ok", at: events.at(-1)!.at },
    });
    // an accepted writesOff is not downgraded by a later lost send
    events.push(sent(3, "writesOff"));
    events.push(ev("response.received", { id: 3, target: "verifier", status: 200, ok: true, durationMs: 1 }));
    events.push(sent(4, "writesOff"));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier?.writesOff).toEqual({ answered: "ok", at: events.at(-3)!.at });
  });

  it("a lost answer is in flight as the run that lost it judged; a journal that does not say, in flight", async () => {
    let ev = eventFactory();
    const lost = (id: number, op: string, inFlight?: boolean) => [
      ev("request.sent", { id, target: "verifier", method: "POST", path: `/api/v1/${op}`, body: {} }),
      ev("response.received", {
        id,
        target: "verifier",
        ok: false,
        error: "lost",
        errorKind: "transport",
        ...(inFlight !== undefined ? { inFlight } : {}),
        durationMs: 1,
      }),
    ];
    const of = async (inFlight?: boolean) => {
      ev = eventFactory();
      const events = [ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false })];
      events.push(...lost(1, "check", inFlight), ...lost(2, "writesOff", inFlight));
      return (await readJournalState(journalOf(events), traitsOf)).verifier;
    };
    // the connection broke (a reset): the exchange ended, so a resumed run judges from progress at once
    expect(await of(false)).toMatchObject({
      check: { answered: "unknown", error: "lost" },
      writesOff: { answered: "unknown", error: "lost" },
    });
    expect((await of(false))?.check).not.toHaveProperty("inFlight");
    expect((await of(false))?.writesOff).not.toHaveProperty("inFlight");
    // timed out: it may still arrive, so a resumed run waits out its time limit before judging it lost
    expect((await of(true))?.check).toMatchObject({ answered: "unknown", inFlight: true });
    expect((await of(true))?.writesOff).toMatchObject({ answered: "unknown", inFlight: true });
    // a journal written before `inFlight` was journaled: read as in flight, the reading that fails safe
    expect((await of(undefined))?.check).toMatchObject({ answered: "unknown", inFlight: true });
  });

  // issue 23: a result is tied to writesOff's generation and to one process; --resume tells the same story
  it("the highest generation seen, writesOff's generation, and restarts: the old process's asks no longer count", async () => {
    const ev = eventFactory();
    const sampled = (generation: number, phase = "recheck") =>
      ev("verifier.sampled", { progress: { ...FRESH, phase, generation } });
    const stale = { ...FRESH, verificationStatus: { ...FRESH.verificationStatus, totalTasks: 6, processingTasks: 2 } };
    const events = [
      ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false, oldRelease: true }),
      ev("request.sent", { id: 1, target: "verifier", method: "POST", path: "/api/v1/check", body: {} }),
      ev("response.received", { id: 1, target: "verifier", status: 200, ok: true, durationMs: 1 }),
      sampled(1),
      sampled(3),
      sampled(2),
      ev("verifier.writesOff", { index: 1, id: "verify", generation: 3 }),
      ev("request.sent", { id: 2, target: "verifier", method: "POST", path: "/api/v1/writesOff", body: {} }),
      ev("response.received", { id: 2, target: "verifier", status: 200, ok: true, durationMs: 1 }),
    ];
    let st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toMatchObject({
      highestGeneration: 3,
      writesOffGeneration: 3,
      oldRelease: true,
      writesOff: { answered: "ok" },
    });
    expect(st.verifier).not.toHaveProperty("resuming");

    // a restart without --clean: the old process's check and writesOff are gone, the next check resumes
    events.push(sampled(0, "idle"));
    events.push(
      ev("verifier.restarted", { index: 1, id: "verify", progress: stale, why: "persisted", followed: 1, limit: 2 }),
    );
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toEqual({
      baseline: FRESH,
      adopted: false,
      oldRelease: true,
      highestGeneration: 0,
      resuming: true,
      restarts: 1,
    });
    // the resumed verification's baseline keeps resuming; its writesOff generation is the new one
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: stale, adopted: false, resumes: true }));
    events.push(sampled(3));
    events.push(ev("verifier.writesOff", { index: 1, id: "verify", generation: 3 }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toMatchObject({ resuming: true, restarts: 1, highestGeneration: 3, writesOffGeneration: 3 });
    // a verification from the start (no resume) forgets it; a restart without a generation leaves none
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("resuming");
    expect(st.verifier).not.toHaveProperty("writesOffGeneration");
    events.push(
      ev("verifier.restarted", {
        index: 1,
        id: "verify",
        progress: { phase: "idle" },
        why: "x",
        followed: 2,
        limit: 2,
      }),
    );
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("highestGeneration");
    expect(st.verifier?.restarts).toBe(2);
  });

  // issue 36: a check whose verifier could not tell a fresh start from a resume is judged by its
  // first answer (verifier.origin); a refusal outlives --resume; a verify that passed is kept
  it("a check judged by its first answer: unproven until verifier.origin; refused forgets the check and outlives --resume", async () => {
    const ev = eventFactory();
    const stale = { ...FRESH, verificationStatus: { ...FRESH.verificationStatus, totalTasks: 6, completedTasks: 4 } };
    const resumed = { ...FRESH, phase: "recheck", generation: 3 };
    const check = (id: number) => [
      ev("request.sent", { id, target: "verifier", method: "POST", path: "/api/v1/check", body: {} }),
      ev("response.received", { id, target: "verifier", status: 200, ok: true, durationMs: 1 }),
    ];
    const events = [
      ev("verifier.baseline", { index: 1, id: "verify", progress: stale, adopted: false, unproven: "persisted" }),
      ...check(1),
    ];
    let st = await readJournalState(journalOf(events), traitsOf);
    // the runner died before the first answer: --resume judges it then
    expect(st.verifier).toMatchObject({ unproven: "persisted", check: { answered: "ok" }, baseline: stale });
    events.push(ev("verifier.sampled", { progress: resumed }));
    events.push(ev("verifier.origin", { index: 1, id: "verify", progress: resumed, ours: false, why: "resumed" }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toEqual({ refused: "resumed" });
    // the verifier restarted with --clean: a new baseline (it still shows the old counters) keeps the refusal…
    events.push(
      ev("verifier.baseline", { index: 1, id: "verify", progress: stale, adopted: false, unproven: "persisted" }),
    );
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toMatchObject({ refused: "resumed", unproven: "persisted" });
    // …until its first answer shows a fresh verification
    events.push(...check(2));
    events.push(ev("verifier.origin", { index: 1, id: "verify", progress: FRESH, ours: true, why: "fresh" }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("refused");
    expect(st.verifier).not.toHaveProperty("unproven");
    expect(st.verifier).toMatchObject({ check: { answered: "ok" } });
    // a verify that passed; a new verification forgets it
    const done = { ...FRESH, generation: 2 };
    events.push(ev("verifier.verified", { index: 1, id: "verify", progress: done, writesOffGeneration: 1 }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier?.verified).toMatchObject({ generation: 2 });
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("verified");
    // a refusal, then a verifier with nothing to resume: the refusal no longer stands
    events.push(ev("verifier.origin", { index: 1, id: "verify", progress: resumed, ours: false, why: "again" }));
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("refused");
    // an adopted check does not clear it
    events.push(ev("verifier.origin", { index: 1, id: "verify", progress: resumed, ours: false, why: "again" }));
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: resumed, adopted: true }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toMatchObject({ refused: "again", adopted: true });
  });

  it("where this cutover's verification began (issue 36, point 3): fromStart from the baseline and a fresh origin, kept over a restart, gone with a refusal or an older journal", async () => {
    const ev = eventFactory();
    const stale = { ...FRESH, verificationStatus: { ...FRESH.verificationStatus, totalTasks: 6, completedTasks: 4 } };
    const events = [
      ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false, fromStart: true }),
    ];
    let st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier?.fromStart).toBe(true);
    // a restart, and the check that resumes this cutover's own: still from its start
    events.push(ev("verifier.restarted", { index: 1, id: "verify", progress: stale, why: "r", followed: 1, limit: 2 }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier?.fromStart).toBe(true);
    events.push(
      ev("verifier.baseline", {
        index: 1,
        id: "verify",
        progress: stale,
        adopted: false,
        resumes: true,
        fromStart: true,
      }),
    );
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toMatchObject({ fromStart: true, resuming: true });
    // refused (the verify step's guard, or a resumed check): gone
    events.push(ev("verifier.origin", { index: 1, id: "verify", progress: stale, ours: false, why: "not from start" }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).toEqual({ refused: "not from start", restarts: 1 });
    // a check whose verifier could not tell: not until its first answer shows a fresh start
    events.push(
      ev("verifier.baseline", {
        index: 1,
        id: "verify",
        progress: stale,
        adopted: false,
        unproven: "persisted",
        fromStart: false,
      }),
    );
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("fromStart");
    events.push(ev("verifier.origin", { index: 1, id: "verify", progress: FRESH, ours: true, why: "fresh" }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier?.fromStart).toBe(true);
    // a baseline that does not say (an older syncbook's journal): not known
    events.push(ev("verifier.baseline", { index: 1, id: "verify", progress: FRESH, adopted: false }));
    st = await readJournalState(journalOf(events), traitsOf);
    expect(st.verifier).not.toHaveProperty("fromStart");
  });

  it("no verification in the run: nothing", async () => {
    const ev = eventFactory();
    const st = await readJournalState(journalOf([ev("step.started", STEPS[0]!)]), traitsOf);
    expect(st.verifier).toEqual({});
  });
});
