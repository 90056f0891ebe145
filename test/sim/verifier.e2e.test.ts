/**
 * The migration verifier as its published source behaves (spec/service-facts.md "The migration
 * verifier"; the contract's "Verifier progress response"). Each test quotes the sentence it checks.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import {
  RS_TO_SHARDED,
  broadcast,
  call,
  frozen,
  post,
  progress,
  toCea,
  until,
  verifierInvariants,
  verifierProgress,
} from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

const check = (s: Simulator, body: unknown = {}): ReturnType<typeof call> =>
  call(`${s.verifierUrl}/api/v1/check`, "POST", body);
const writesOff = (s: Simulator, body: unknown = {}): ReturnType<typeof call> =>
  call(`${s.verifierUrl}/api/v1/writesOff`, "POST", body);
/** A check, and the setup after it (progress waits during the setup). */
async function checkAndSetUp(s: Simulator): Promise<void> {
  expect((await check(s)).json).toEqual({ success: true });
  s.control.advance(1);
}

/** Steps the clock, checking the invariants at every sample, until the verifier is idle. */
async function runToIdle(s: Simulator, step = 2, max = 400): Promise<Record<string, number>> {
  for (let k = 0; k < max; k++) {
    const p = await verifierProgress(s);
    verifierInvariants(p.verificationStatus);
    if (p.phase === "idle") return p.verificationStatus;
    s.control.advance(step);
  }
  throw new Error("the verifier never became idle");
}

/** The documented order: CEA, check, writes off, commit on every instance, COMMITTED, writesOff. */
async function documentedCutover(s: Simulator): Promise<void> {
  await toCea(s);
  await checkAndSetUp(s);
  s.control.advance(10);
  s.control.setWrites({ enabled: false });
  await broadcast(s, "commit");
  s.control.advance(5);
  expect((await progress(s)).progress.state).toBe("COMMITTED");
  expect((await writesOff(s)).json).toEqual({ success: true });
}

const refused = async (p: Promise<unknown>): Promise<void> => {
  await expect(p).rejects.toThrow();
};

describe("verifier: progress", () => {
  // facts: "Progress: `{ "progress": { phase, generation, generationStats, error, verificationStatus: {
  // totalTasks, addedTasks, processingTasks, failedTasks, completedTasks, metadataMismatchTasks },
  // srcChangeStats, dstChangeStats, … } }`" and "The verifier has six counters, not seven"
  it("answers the published shape, with six counters (no recheckTasks), idle before any check", async () => {
    sim = await frozen();
    const a = await call(`${sim.verifierUrl}/api/v1/progress`, "GET", undefined, {
      "content-type": "application/json",
    });
    expect(Object.keys(a.json)).toEqual(["progress"]);
    const p = a.json.progress;
    expect(p).toMatchObject({ phase: "idle", generation: 0, error: null });
    expect(p.verificationStatus).toEqual({
      totalTasks: 0,
      addedTasks: 0,
      processingTasks: 0,
      failedTasks: 0,
      completedTasks: 0,
      metadataMismatchTasks: 0,
    });
    for (const k of ["generationStats", "srcChangeStats", "dstChangeStats"])
      expect(p[k], k).toEqual(expect.any(Object));
    // the published source: totalSrcBytes is omitted while 0
    expect(Object.keys(p.generationStats).sort()).toEqual(
      ["docsCompared", "srcBytesCompared", "totalDocs", "totalNamespaces"].sort(),
    );
  });

  // facts: "A failure to read progress answers `{"error": …}` at the top level"
  it("a failure to read progress: HTTP 200 with a top-level error, no progress", async () => {
    sim = await frozen({ faults: ["verifier-progress-error=server selection timeout"] });
    const a = await call(`${sim.verifierUrl}/api/v1/progress`);
    expect(a.status).toBe(200);
    expect(a.json).toEqual({ error: "server selection timeout" });
  });

  // facts: "`check` answers success at once and starts later"
  it("check is answered at once; progress waits while the check sets itself up, then shows it", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    let answered = false;
    const pending = verifierProgress(sim).then((p) => ((answered = true), p));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    sim.control.advance(1);
    const p = await pending;
    expect(p.phase).toBe("check");
    expect(p.verificationStatus.totalTasks).toBeGreaterThan(0);
  });

  // issue 36: the source's setup holds the verifier's lock (check.go `CheckDriver`: `verifier.mux.Lock()` …
  // `verifier.mux.Unlock()`, then `CheckWorker` starts the workers) and progress takes it to read
  // (progress.go `GetProgress`: `verifier.mux.RLock()`): a read that waited is answered as the lock is
  // released, before any task ran; the next read sees the work since
  it("a progress read that waited for the check's setup is answered as the setup ends, before any task ran", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    const pending = verifierProgress(sim);
    await new Promise((r) => setTimeout(r, 20));
    sim.control.advance(30);
    const first = await pending;
    expect(first).toMatchObject({ phase: "check", generation: 0 });
    const s0 = first.verificationStatus as Record<string, number>;
    expect(s0.totalTasks).toBeGreaterThan(0);
    expect([s0.completedTasks, s0.failedTasks, s0.metadataMismatchTasks]).toEqual([0, 0, 0]);
    // 30 s of work since: generation 0 is over
    expect((await verifierProgress(sim)).generation).toBeGreaterThan(0);
  });

  // facts: "Phases: `idle`, `check`, `recheck`. `idle` means either "not started" or "finished""
  it("phases idle → check → recheck → idle; the counters are the current generation's", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    const phases: string[] = [];
    const generations = new Set<number>();
    let droppedOnce = false;
    let lastTotal = 0;
    for (let k = 0; k < 80; k++) {
      const p = await verifierProgress(sim);
      verifierInvariants(p.verificationStatus);
      if (phases.at(-1) !== p.phase) phases.push(p.phase);
      generations.add(p.generation);
      if (p.verificationStatus.totalTasks < lastTotal) droppedOnce = true;
      lastTotal = p.verificationStatus.totalTasks;
      if (k === 30) {
        sim.control.setWrites({ enabled: false });
        await post(sim, 0, "commit");
        sim.control.advance(5);
        await writesOff(sim);
      }
      sim.control.advance(1);
    }
    expect(phases).toEqual(["check", "recheck", "idle"]);
    expect(generations.size).toBeGreaterThan(2);
    // a new generation starts its counters over: not a running total
    expect(droppedOnce).toBe(true);
  });
});

describe("verifier: check and writesOff", () => {
  // facts: "Routes: `POST /api/v1/check` (body `{}` or `{"filter": …}`)"; "Bad JSON: HTTP 400 `{"error": "…"}`."
  it("check takes {} or {filter}; bad JSON is HTTP 400 with {error} and no success field", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await check(sim, { filter: { x: { $gt: 1 } } })).json).toEqual({ success: true });
    sim.control.advance(1);
    for (const body of ["{", "", "[]", '{"filter": 3}']) {
      const a = await check(sim, body);
      expect(a.status, body).toBe(400);
      expect(Object.keys(a.json), body).toEqual(["error"]);
    }
    const w = await writesOff(sim, "{");
    expect(w.status).toBe(400);
    expect(w.json).toEqual({ error: expect.any(String) });
  });

  // facts: "a `check` after one already ran is answered success and ignored"
  it("a check while one runs is answered success and ignored", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.advance(3);
    const before = await verifierProgress(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    expect(await verifierProgress(sim)).toEqual(before);
    expect(sim.control.state().verifier.checks).toBe(1);
  });

  // the published source: the check's setup holds the verifier's internal lock, and writesOff takes it too
  it("a writesOff right after a check waits until the check has set itself up, then is answered", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    let answered = false;
    const pending = writesOff(sim).then((a) => ((answered = true), a));
    await until(() => sim.control.counts().verifier["POST /api/v1/writesOff"] === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    sim.control.advance(1);
    expect((await pending).json).toEqual({ success: true });
  });

  // spec: "A separate verifier compares documents, views and indexes between the clusters. It may run while the
  // sync is still running"; facts: its routes answer by its own state, not the sync's
  it("independent of the sync's state: check and writesOff are answered alike with the sync PAUSED", async () => {
    sim = await frozen();
    await toCea(sim);
    await post(sim, 0, "pause");
    expect((await progress(sim)).progress.state).toBe("PAUSED");
    await checkAndSetUp(sim);
    expect((await verifierProgress(sim)).phase).toBe("check");
    sim.control.setWrites({ enabled: false });
    expect((await writesOff(sim)).json).toEqual({ success: true });
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBe(0);
    // the sync never committed: the indexes it keeps different until commit are metadata mismatches
    expect(s.metadataMismatchTasks).toBe(4);
  });

  // facts: "`writesOff` a second time answers HTTP 200 `{"error": "writesOff already set"}` with no `success` field"
  it("writesOff a second time: HTTP 200 {error: 'writesOff already set'}, no success field", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    expect((await writesOff(sim)).json).toEqual({ success: true });
    const again = await writesOff(sim);
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ error: "writesOff already set" });
  });

  // facts: "a failure to read a cluster time answers `{"error": "failed to fetch source's cluster time: …"}` the same way"
  it("writesOff refused (cluster time): HTTP 200 {error}, yet it is set: a retry says 'already set' and the verifier never finishes", async () => {
    sim = await frozen({ faults: ["writes-off-refused=connection reset by peer"] });
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.setWrites({ enabled: false });
    const a = await writesOff(sim);
    expect(a.status).toBe(200);
    expect(a.json).toEqual({ error: "failed to fetch source's cluster time: connection reset by peer" });
    sim.control.clearFaults();
    expect((await writesOff(sim)).json).toEqual({ error: "writesOff already set" });
    sim.control.advance(3600);
    expect((await verifierProgress(sim)).phase).not.toBe("idle");
  });

  // facts: "`POST /api/v1/writesOff` (body `{}`)"; its source hands the writes-off time to the change readers a
  // check starts, and with no check yet dereferences a nil reader (its web framework answers the panic with a 500)
  it("writesOff before any check: an empty HTTP 500, and a later check never finishes", async () => {
    sim = await frozen();
    await toCea(sim);
    const a = await writesOff(sim);
    expect(a.status).toBe(500);
    expect(a.text).toBe("");
    await checkAndSetUp(sim);
    sim.control.setWrites({ enabled: false });
    sim.control.advance(3600);
    expect((await verifierProgress(sim)).phase).not.toBe("idle");
    expect((await writesOff(sim)).json).toEqual({ error: "writesOff already set" });
  });

  // facts: "Success: phase `idle` after a check ran, `error` null, `failedTasks` 0 and `metadataMismatchTasks` 0"
  it("the documented order (writesOff after COMMITTED) ends idle with failedTasks 0 and metadataMismatchTasks 0", async () => {
    sim = await frozen();
    await documentedCutover(sim);
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBe(0);
    expect(s.metadataMismatchTasks).toBe(0);
    expect(s.completedTasks).toBe(s.totalTasks);
    expect((await verifierProgress(sim)).error).toBeNull();
    expect(sim.control.state().writes.lost).toBe(0);
  });

  // facts: "Before commit the service keeps unique indexes non-unique, TTL indexes at their largest value and
  // hidden indexes visible on the destination, so index metadata differs by design until commit."
  it("writesOff before commit: the collections with unique, TTL or hidden indexes end in metadataMismatchTasks", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.setWrites({ enabled: false });
    sim.control.advance(10);
    expect((await writesOff(sim)).json).toEqual({ success: true });
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBe(0);
    expect(s.metadataMismatchTasks).toBe(4); // default data set: 2 unique, 1 TTL, 1 hidden
    const ns = await call(`${sim.verifierUrl}/api/v1/nsMismatches`);
    expect(ns.text.trim().split("\n")).toHaveLength(4);
    const ignored = await call(`${sim.verifierUrl}/api/v1/nsMismatches?indexSpecIgnore=unique,expireAfterSeconds`);
    expect(ignored.text.trim().split("\n")).toHaveLength(1);
  });

  it("the data set is configurable: without such indexes, writesOff before commit finds nothing", async () => {
    sim = await frozen({ dataSet: { unique: 0, ttl: 0, hidden: 0 } });
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.setWrites({ enabled: false });
    await writesOff(sim);
    const s = await runToIdle(sim);
    expect(s.metadataMismatchTasks).toBe(0);
    expect(s.failedTasks).toBe(0);
  });

  // "Writes that reach the source after commit is sent are counted as lost." (below 1.17)
  it("writes left on during commit are lost: failedTasks > 0", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    await post(sim, 0, "commit"); // the application still writes
    sim.control.advance(5);
    sim.control.setWrites({ enabled: false });
    await writesOff(sim);
    expect(sim.control.state().writes.lost).toBeGreaterThan(1000);
    const s = await runToIdle(sim);
    expect(s.failedTasks).toBeGreaterThan(0);
    const docs = await call(`${sim.verifierUrl}/api/v1/docMismatches`);
    expect(docs.text.trim().split("\n").length).toBe(s.failedTasks);
  });

  it("lost writes are found by a check started after the commit, too", async () => {
    sim = await frozen();
    await toCea(sim);
    await post(sim, 0, "commit");
    sim.control.advance(5);
    sim.control.setWrites({ enabled: false });
    await checkAndSetUp(sim);
    await writesOff(sim);
    expect((await runToIdle(sim)).failedTasks).toBeGreaterThan(0);
  });

  // "The verifier does not support DDL operations, so no DDL may run on the source while verification
  // is in progress." migration-verifier v0.2.1 change_stream.go lines 218-232: under the default
  // `--ddlHandling failAll` a DDL event is an UnknownEventError, and the verifier exits
  it("DDL during verification makes the verifier exit (failAll); DDL outside verification does not", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await call(`${sim.instances[0]!.url}/sim/ddl`, "POST", {})).json).toEqual({
      success: true,
      duringVerification: false,
    });
    await checkAndSetUp(sim);
    expect(sim.control.state().verifier).toMatchObject({ ddlHandling: "failAll", exited: null });
    expect((await call(`${sim.instances[0]!.url}/sim/ddl`, "POST", {})).json).toEqual({
      success: true,
      duringVerification: true,
    });
    expect(sim.control.state().verifier.exited).toBe(
      'received event with unknown optype: {"operationType": "createIndexes"}; to skip this event, run the verifier with `ddlHandling` set to `warnMost`',
    );
    await refused(verifierProgress(sim));
  });

  it("a fleet error (a pause that reached part of the fleet) fails the verification", async () => {
    sim = await frozen({ instances: 2, graceMs: 30 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(40);
    await checkAndSetUp(sim);
    await post(sim, 0, "pause"); // instance 1 never gets it
    await new Promise((r) => setTimeout(r, 60));
    await post(sim, 0, "resume");
    sim.control.setWrites({ enabled: false });
    sim.control.advance(5);
    expect(sim.control.state().fleetErrors.length).toBeGreaterThan(0);
    await broadcast(sim, "commit");
    sim.control.advance(5);
    await writesOff(sim);
    expect((await runToIdle(sim)).failedTasks).toBeGreaterThan(0);
  });

  // spec: "A separate verifier compares documents, views and indexes between the clusters. It may run while the
  // sync is still running": a document not copied yet differs (its source: rechecked in the next generation)
  it("a check during the copy fails tasks for documents not copied yet, rechecked later; success once they are", async () => {
    sim = await frozen();
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(5); // copying
    await checkAndSetUp(sim);
    sim.control.advance(2);
    expect((await verifierProgress(sim)).verificationStatus.failedTasks).toBeGreaterThan(0);
    sim.control.advance(40); // CEA
    sim.control.setWrites({ enabled: false });
    await post(sim, 0, "commit");
    sim.control.advance(5);
    await writesOff(sim);
    const s = await runToIdle(sim);
    expect(s).toMatchObject({ failedTasks: 0, metadataMismatchTasks: 0 });
  });

  // facts: "a failed check makes the verifier exit"
  it("a check before the destination has the collections fails, and the verifier exits", async () => {
    sim = await frozen();
    expect((await check(sim)).json).toEqual({ success: true });
    sim.control.advance(2);
    expect(sim.control.state().verifier.exited).toMatch(/exists only on the source/);
    await refused(fetch(`${sim.verifierUrl}/api/v1/progress`));
  });

  // the published source: a second check after a finished one starts the change handling again, which panics
  it("a check after a finished verification is answered success, then the verifier exits", async () => {
    sim = await frozen();
    await documentedCutover(sim);
    await runToIdle(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    sim.control.advance(1);
    await until(() => sim.control.state().verifier.exited !== null);
    await refused(fetch(`${sim.verifierUrl}/api/v1/progress`));
    // a new verifier process
    expect((await call(`${sim.instances[0]!.url}/sim/verifier/restart`, "POST", {})).json).toEqual({ success: true });
    expect((await verifierProgress(sim)).phase).toBe("idle");
  });
});

describe("verifier: one operational request at a time", () => {
  // facts: "`check` and `writesOff` share a lock. A second one while the first is being handled is answered
  // `{"success":false,"error":"APIError","errorDescription":"request in progress"}` and the verifier then
  // shuts its web server down and exits."
  it("a check while a slow writesOff holds the lock: APIError, the writesOff is still answered, then connections are refused", async () => {
    sim = await frozen({ faults: ["writes-off-slow=1s"] });
    await toCea(sim);
    await checkAndSetUp(sim);
    const slow = writesOff(sim);
    await until(() => sim.control.counts().verifier["POST /api/v1/writesOff"] === 1); // it holds the lock
    const second = await check(sim);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ success: false, error: "APIError", errorDescription: "request in progress" });
    expect((await slow).json).toEqual({ success: true });
    await until(async () => {
      try {
        await fetch(`${sim.verifierUrl}/api/v1/progress`);
        return false;
      } catch {
        return true;
      }
    });
    expect(sim.control.state().verifier.exited).toBe("request in progress");
    expect(sim.control.counts().verifier).toMatchObject({ "POST /api/v1/writesOff": 1, "POST /api/v1/check": 2 });
  });

  it("a second writesOff while the first is in flight (a client's timeout and blind resend) shuts it down too", async () => {
    sim = await frozen({ faults: ["writes-off-slow=1s"] });
    await toCea(sim);
    await checkAndSetUp(sim);
    const first = writesOff(sim);
    await until(() => sim.control.counts().verifier["POST /api/v1/writesOff"] === 1);
    expect((await writesOff(sim)).json).toMatchObject({ success: false, error: "APIError" });
    await first;
    await until(() => sim.control.state().verifier.exited !== null);
  });

  // an adversarial run: restarted while a slow writesOff held the old process's lock, the new
  // process refused its first check "request in progress" and exited
  it("a restart while a writesOff is in flight: the new process has no request in flight, and the old one's writesOff is not its", async () => {
    sim = await frozen({ faults: ["writes-off-slow=1s"] });
    await toCea(sim);
    await checkAndSetUp(sim);
    const slow = writesOff(sim).catch(() => undefined); // the old process's connection is cut
    await until(() => sim.control.counts().verifier["POST /api/v1/writesOff"] === 1);
    expect((await call(`${sim.instances[0]!.url}/sim/verifier/restart`, "POST", { clean: false })).json).toEqual({
      success: true,
    });
    await checkAndSetUp(sim); // answered success: no request of the new process was in flight
    await slow;
    expect(sim.control.state().verifier.exited).toBeNull();
    // the old process's writesOff did not reach the new one: a writesOff to it is its first
    expect((await writesOff(sim)).json).toEqual({ success: true });
  });

  it("verifier-exit: the process exits (connection refused), from `after` on", async () => {
    sim = await frozen({ faults: ["verifier-exit,after=10s"] });
    await post(sim, 0, "start", RS_TO_SHARDED);
    expect((await verifierProgress(sim)).phase).toBe("idle");
    sim.control.advance(11);
    await refused(fetch(`${sim.verifierUrl}/api/v1/progress`));
    expect(sim.control.state().verifier.exited).toBe("simulated exit");
  });
});

describe("verifier: routes", () => {
  // facts: "also `GET /api/v1/summary`, `/docMismatches`, `/nsMismatches`. There is no `writesOn`."
  it("summary answers JSON; docMismatches and nsMismatches answer NDJSON; there is no writesOn", async () => {
    sim = await frozen();
    const s = await call(`${sim.verifierUrl}/api/v1/summary`);
    expect(s.json).toMatchObject({ nsMismatches: [], docMismatches: { total: 0 } });
    const d = await fetch(`${sim.verifierUrl}/api/v1/docMismatches`);
    expect(d.headers.get("content-type")).toBe("application/x-ndjson");
    expect(await d.text()).toBe("");
    expect((await call(`${sim.verifierUrl}/api/v1/summary?minDurationSecs=x`)).json).toEqual({
      error: expect.stringMatching(/minDurationSecs/),
    });
    // its web framework's own answers: plain text
    const none = await call(`${sim.verifierUrl}/api/v1/writesOn`, "POST", {});
    expect(none.status).toBe(404);
    expect(none.text).toBe("404 page not found");
    const wrong = await call(`${sim.verifierUrl}/api/v1/progress`, "POST", {});
    expect(wrong.status).toBe(405);
    expect(wrong.text).toBe("405 method not allowed");
  });
});

describe("verifier: generations, restarts and releases", () => {
  const restart = (s: Simulator, body: unknown = {}) => call(`${s.verifierUrl}/sim/verifier/restart`, "POST", body);

  // facts: "after `writesOff` the verifier finishes the generation it is in, then runs one more"
  it("a verification that finished after writesOff ends one generation past the one writesOff was accepted in", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.advance(10);
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    sim.control.advance(5);
    const w = (await verifierProgress(sim)).generation as number;
    expect((await writesOff(sim)).json).toEqual({ success: true });
    await runToIdle(sim);
    const end = await verifierProgress(sim);
    expect(end.generation).toBe(w + 1);
    expect(end.generation).toBeGreaterThanOrEqual(1);
  });

  // facts: "A process restarted **without** `--clean` answers `idle`, generation 0, with the persisted counters of
  // generation 0 (tasks may still be `added` or `processing`) until it gets a `check`, which **resumes** the
  // persisted verification."
  it("restarted without --clean in generation 0: idle, generation 0, its tasks still processing; a check resumes it", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    // some of the collections sized (generation 0's totalDocs counts them)
    sim.control.advance(0.3);
    const before = await verifierProgress(sim);
    expect(before).toMatchObject({ phase: "check", generation: 0 });
    expect(before.verificationStatus.processingTasks).toBeGreaterThan(0);
    expect((await restart(sim, { clean: false })).json).toEqual({ success: true });
    const after = await verifierProgress(sim);
    expect(after).toMatchObject({ phase: "idle", generation: 0, error: null });
    expect(after.verificationStatus).toEqual(before.verificationStatus);
    // and generation 0's amounts as its tasks left them (statistics.go reads them from the metadata)
    expect(before.generationStats.totalDocs).toBeGreaterThan(0);
    expect(after.generationStats).toEqual(before.generationStats);
    expect(after.gen0Stats).toBeUndefined();
    expect(sim.control.state().verifier).toMatchObject({
      holds: true,
      clean: false,
      resumed: false,
      writesOff: false,
      phase: "idle",
    });
    // a second restart before any check finds the same metadata
    await restart(sim, { clean: false });
    expect((await verifierProgress(sim)).verificationStatus).toEqual(before.verificationStatus);
    await checkAndSetUp(sim);
    expect(await verifierProgress(sim)).toMatchObject({ phase: "check", generation: 0 });
    expect(sim.control.state().verifier).toMatchObject({ resumed: true, holds: true });
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    sim.control.advance(5);
    expect((await writesOff(sim)).json).toEqual({ success: true });
    const s = await runToIdle(sim);
    expect([s.failedTasks, s.metadataMismatchTasks]).toEqual([0, 0]);
  });

  it("restarted without --clean after writesOff in a recheck generation: generation 0's counters, writesOff forgotten; the check resumes that generation", async () => {
    sim = await frozen();
    await documentedCutover(sim);
    // let it reach a recheck generation before it can finish: restart as soon as it does
    let g = 0;
    for (let k = 0; k < 200 && g === 0; k++) {
      sim.control.advance(0.5);
      g = (await verifierProgress(sim)).generation as number;
    }
    expect(g).toBeGreaterThan(0);
    await restart(sim, { clean: false });
    const after = await verifierProgress(sim);
    expect(after).toMatchObject({ phase: "idle", generation: 0 });
    expect(after.verificationStatus.totalTasks).toBeGreaterThan(0);
    expect(after.verificationStatus.addedTasks + after.verificationStatus.processingTasks).toBe(0);
    expect(sim.control.state().verifier.writesOff).toBe(false);
    // never finishes without a new writesOff
    await checkAndSetUp(sim);
    const resumed = await verifierProgress(sim);
    expect(resumed.generation).toBe(g);
    expect(resumed.phase).toBe("recheck");
    sim.control.advance(600);
    expect((await verifierProgress(sim)).phase).not.toBe("idle");
    const w = (await verifierProgress(sim)).generation as number;
    expect((await writesOff(sim)).json).toEqual({ success: true });
    await runToIdle(sim);
    expect((await verifierProgress(sim)).generation).toBe(w + 1);
  });

  // facts (corrections): "`--clean` drops the verifier's metadata only when the first `check` arrives
  // [verifier check.go `CheckDriver`: `if verifier.startClean { … Drop … }`; main only sets the
  // flag]. Until then a process started with `--clean` answers like one started without it (idle,
  // generation 0, the persisted counters)."
  it("restarted with --clean (the default): the old counters until its first check, then a fresh verification at generation 0", async () => {
    sim = await frozen();
    await documentedCutover(sim);
    // past generation 0, before it can finish
    let g = 0;
    for (let k = 0; k < 200 && g === 0; k++) {
      sim.control.advance(0.5);
      g = (await verifierProgress(sim)).generation as number;
    }
    expect(g).toBeGreaterThan(0);
    const gen0 = (await (async () => {
      await restart(sim, { clean: false });
      return verifierProgress(sim);
    })()) as { verificationStatus: Record<string, number> };
    for (const body of [{}, { clean: true }]) {
      expect((await restart(sim, body)).json).toEqual({ success: true });
      // the same answer as without --clean: nothing tells them apart before a check
      const p = await verifierProgress(sim);
      expect(p).toMatchObject({ phase: "idle", generation: 0 });
      expect(p.verificationStatus).toEqual(gen0.verificationStatus);
      expect(sim.control.state().verifier).toMatchObject({ holds: true, clean: true, resumed: false });
    }
    await checkAndSetUp(sim);
    // the check dropped the old metadata: generation 0, new tasks, none done
    const fresh = await verifierProgress(sim);
    expect(fresh).toMatchObject({ phase: "check", generation: 0 });
    const v = fresh.verificationStatus as Record<string, number>;
    expect(v.totalTasks).toBeGreaterThan(0);
    expect([v.completedTasks, v.failedTasks, v.metadataMismatchTasks]).toEqual([0, 0, 0]);
    expect(sim.control.state().verifier).toMatchObject({ holds: false, clean: true, resumed: false, writesOff: false });
    // and it verifies to the end
    const w = fresh.generation as number;
    expect((await writesOff(sim)).json).toEqual({ success: true });
    const end = await runToIdle(sim);
    expect([end.failedTasks, end.metadataMismatchTasks]).toEqual([0, 0]);
    expect((await verifierProgress(sim)).generation).toBeGreaterThan(w);
  });

  it("restarted with --clean, restarted again before its check: the metadata still holds the old verification", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    const before = (await verifierProgress(sim)).verificationStatus;
    await restart(sim, { clean: true });
    await restart(sim, { clean: false });
    expect((await verifierProgress(sim)).verificationStatus).toEqual(before);
    await checkAndSetUp(sim);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true });
  });

  it("on a new metadata database: no task at all before a check", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    for (const body of [{ newMetadata: true }, { newMetadata: true, clean: false }]) {
      expect((await restart(sim, body)).json).toEqual({ success: true });
      const p = await verifierProgress(sim);
      expect(p).toMatchObject({ phase: "idle", generation: 0 });
      expect(Object.values(p.verificationStatus as Record<string, number>).every((n) => n === 0)).toBe(true);
      expect(sim.control.state().verifier).toMatchObject({ holds: false, resumed: false });
    }
  });

  // migration-verifier v0.2.1 internal/verifier/change_reader.go: cumulativeEventCounts "tallies all
  // change events seen since the verifier first started. Unlike EventRecorder, this is never reset
  // and is persisted alongside the resume token so it survives restarts"
  it("change events counted since the verification first started: from 0 on new metadata, carried by a resumed one", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    const events = async () =>
      ((await verifierProgress(sim)).srcChangeStats as { eventCounts: { insert: number } }).eventCounts.insert;
    expect(await events()).toBe(0);
    sim.control.advance(5);
    const seen = await events();
    expect(seen).toBeGreaterThan(0);
    await restart(sim, { clean: false });
    await checkAndSetUp(sim);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true });
    expect(await events()).toBeGreaterThanOrEqual(seen);
    await restart(sim, { newMetadata: true });
    await checkAndSetUp(sim);
    expect(await events()).toBe(0);
  });

  it("the restart control refuses a body it does not know", async () => {
    sim = await frozen();
    expect((await restart(sim, { clean: "no" })).status).toBe(400);
    expect((await restart(sim, { newMetadata: "yes" })).status).toBe(400);
    expect((await restart(sim, { clear: false })).status).toBe(400);
    expect((await restart(sim, "[]")).status).toBe(400);
  });

  // facts: "Versions v0.1.6 to v0.2.0 answer `GET /progress` before the first `check` with an **empty HTTP 500**"
  it("--verifier-release v0.2.0: progress is an empty HTTP 500 until the first check, in every new process", async () => {
    sim = await frozen({ verifierRelease: "v0.2.0" });
    expect(sim.control.state().verifier.release).toBe("v0.2.0");
    const empty = async () => {
      const r = await call(`${sim.verifierUrl}/api/v1/progress`);
      expect([r.status, r.text]).toEqual([500, ""]);
    };
    await empty();
    await toCea(sim);
    await checkAndSetUp(sim);
    expect((await verifierProgress(sim)).phase).toBe("check");
    await restart(sim, { clean: false });
    await empty();
    await restart(sim);
    await empty();
    await restart(sim, { newMetadata: true });
    await empty();
    await expect(frozen({ verifierRelease: "v0.1.9" as "v0.2.0" })).rejects.toThrow(/verifierRelease must be one of/);
  });

  // facts: "Every process of those releases answers so before its first check, **including one that holds an
  // earlier verification in its metadata**: the 500 does not mean "nothing to resume", and a check to such a
  // process resumes the old verification [check.go "Resuming in-progress verification"]."
  it("--verifier-release v0.2.0 with an earlier verification in its metadata: the same empty 500, then its check resumes it (or, with --clean, starts afresh)", async () => {
    sim = await frozen({ verifierRelease: "v0.2.0" });
    await documentedCutover(sim);
    let g = 0;
    for (let k = 0; k < 200 && g === 0; k++) {
      sim.control.advance(0.5);
      g = (await verifierProgress(sim)).generation as number;
    }
    expect(g).toBeGreaterThan(0);
    await restart(sim, { clean: false });
    const r = await call(`${sim.verifierUrl}/api/v1/progress`);
    expect([r.status, r.text]).toEqual([500, ""]);
    expect(sim.control.state().verifier).toMatchObject({ holds: true, release: "v0.2.0" });
    await checkAndSetUp(sim);
    // the persisted generation at once, with what its finished tasks compared (the metadata holds it)
    const resumed = await verifierProgress(sim);
    expect(resumed).toMatchObject({ phase: "recheck", generation: g });
    expect(sim.control.state().verifier.resumed).toBe(true);
    // the same process history, restarted with --clean: the 500 again, then generation 0 afresh
    await restart(sim, { clean: true });
    const again = await call(`${sim.verifierUrl}/api/v1/progress`);
    expect([again.status, again.text]).toEqual([500, ""]);
    await checkAndSetUp(sim);
    expect(await verifierProgress(sim)).toMatchObject({ phase: "check", generation: 0 });
    expect(sim.control.state().verifier).toMatchObject({ holds: false, resumed: false });
  });
});

// The verifier's amounts by generation, against its source (mongodb-labs/migration-verifier tag v0.2.1;
// the same meaning from v0.1.6): internal/verifier/statistics.go `perNsStatsPipelineTemplate` sums the
// current generation's tasks: `docsCompared` "$found_source_documents_count" of its finished document
// tasks; `totalDocs` "In generation 0 … the total docs from the verify-collection tasks" (tasks/task.go:
// "the source collection's estimated docs count") and "In generation 1+ … the # of documents to
// recheck"; `totalBytes` the verify-collection tasks' sizes (api.go: `totalSrcBytes,omitempty`).
// api.go (from v0.1.10): `gen0Stats` "holds the final doc/byte counts from generation 0 … It is absent
// during generation 0 itself"; summary_api.go `buildCheckStats`: generationStats in generation 0,
// gen0Stats after.
describe("verifier: generationStats and gen0Stats by generation", () => {
  // 1 GiB of 1 KiB documents (frozen()'s data set), recheck tasks of 1000 documents (the model's default)
  const ALL = 2 ** 30 / 1024;
  const PER_TASK = 1000;
  const summary = async (s: Simulator) => (await call(`${s.verifierUrl}/api/v1/summary`)).json;
  type Stats = {
    docsCompared: number;
    totalDocs: number;
    srcBytesCompared: number;
    totalSrcBytes?: number;
    totalNamespaces: number;
  };

  it("generation 0, its rechecks (generation 1), later generations and the last: each field as the source defines it", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    // every answer until idle, by generation (writes on for a while: rechecks in several generations)
    const byGen = new Map<number, { stats: Stats; gen0?: Stats; check?: Stats; phase: string }[]>();
    let sentOff = false;
    for (let k = 0; k < 600; k++) {
      const p = await verifierProgress(sim);
      const sum = await summary(sim);
      const list = byGen.get(p.generation) ?? [];
      list.push({ stats: p.generationStats, gen0: p.gen0Stats, check: sum.checkStats, phase: p.phase });
      byGen.set(p.generation, list);
      if (p.phase === "idle") break;
      if (!sentOff && p.generation >= 3) {
        sim.control.setWrites({ enabled: false });
        await broadcast(sim, "commit");
        sim.control.advance(5);
        expect((await writesOff(sim)).json).toEqual({ success: true });
        sentOff = true;
      }
      sim.control.advance(0.25);
    }
    const gens = [...byGen.keys()].sort((a, b) => a - b);
    expect(gens[0]).toBe(0);
    expect(gens.length).toBeGreaterThanOrEqual(4);
    const last = byGen.get(gens.at(-1)!)!.at(-1)!;
    expect(last.phase).toBe("idle");

    // generation 0: no gen0Stats; the total is the collections sized so far, growing to every document
    const g0 = byGen.get(0)!;
    let prev = 0;
    for (const a of g0) {
      expect(a.gen0).toBeUndefined();
      expect(a.check).toEqual(a.stats);
      expect(a.stats.docsCompared).toBeLessThanOrEqual(a.stats.totalDocs);
      expect(a.stats.totalDocs).toBeGreaterThanOrEqual(prev);
      expect(a.stats.totalDocs).toBeLessThanOrEqual(ALL);
      expect(a.stats.totalNamespaces).toBe(12);
      prev = a.stats.totalDocs;
    }
    expect(g0.some((a) => a.stats.totalDocs > 0 && a.stats.totalDocs < ALL)).toBe(true);
    expect(g0.some((a) => a.stats.docsCompared > 0 && a.stats.docsCompared < ALL)).toBe(true);

    // generation 0's final amounts: every document, every byte, the 12 collections
    const final0: Stats = {
      docsCompared: ALL,
      totalDocs: ALL,
      srcBytesCompared: 2 ** 30,
      totalSrcBytes: 2 ** 30,
      totalNamespaces: 12,
    };
    for (const g of gens.slice(1)) {
      const answers = byGen.get(g)!;
      const total = answers[0]!.stats.totalDocs;
      let seen = 0;
      for (const a of answers) {
        // gen0Stats from generation 1 on, and it is /summary's checkStats
        expect(a.gen0).toEqual(final0);
        expect(a.check).toEqual(final0);
        // this generation's only: the documents to recheck (whole recheck tasks), never a running total
        expect(a.stats.totalDocs).toBe(total);
        expect(total % PER_TASK).toBe(0);
        expect(a.stats.docsCompared).toBeLessThanOrEqual(total);
        expect(a.stats.docsCompared).toBeGreaterThanOrEqual(seen);
        expect(a.stats.srcBytesCompared).toBe(a.stats.docsCompared * 1024);
        // only collection tasks count in totalSrcBytes: before the commit, the 4 collections whose index
        // metadata differs (DEFAULT_DATA_SET) are checked again, a twelfth of the bytes each; after, none
        // (omitempty: absent)
        expect([undefined, ...[1, 2, 3, 4].map((n) => Math.round((2 ** 30 * n) / 12))]).toContain(
          a.stats.totalSrcBytes,
        );
        expect(a.stats.totalNamespaces).toBe(total > 0 ? 12 : a.stats.totalNamespaces === 0 ? 0 : 4);
        seen = a.stats.docsCompared;
      }
    }
    // generation 1 rechecks what changed during generation 0: fewer documents than generation 0's
    const g1 = byGen.get(1)!;
    expect(g1[0]!.stats.totalDocs).toBeGreaterThan(0);
    expect(g1[0]!.stats.totalDocs).toBeLessThan(ALL);
    // a later generation with documents to recheck (its counts, checked above, are its own)
    const later = gens.filter((g) => g >= 2 && byGen.get(g)![0]!.stats.totalDocs > 0);
    expect(later.length).toBeGreaterThan(0);
    // the result: the last generation compared all it had to recheck, and says nothing of generation 0
    expect(last.stats.docsCompared).toBe(last.stats.totalDocs);
    expect(last.stats.totalDocs).toBeLessThan(ALL);
  });

  it("a generation with nothing to recheck: all zero, totalSrcBytes and namespaces none", async () => {
    sim = await frozen();
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    sim.control.advance(5);
    await checkAndSetUp(sim);
    sim.control.advance(30);
    const p = await verifierProgress(sim);
    expect(p.generation).toBeGreaterThan(0);
    expect(p.generationStats).toEqual({ docsCompared: 0, totalDocs: 0, srcBytesCompared: 0, totalNamespaces: 0 });
    expect(p.gen0Stats).toMatchObject({ docsCompared: ALL, totalDocs: ALL });
  });

  it("generation 1+ re-verifies a collection's metadata: its size counts in totalSrcBytes, not in totalDocs", async () => {
    // writesOff before commit: the collections with unique, TTL or hidden indexes differ in every generation
    sim = await frozen();
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    await checkAndSetUp(sim);
    sim.control.advance(10);
    // a generation of 4 collection tasks: step through one until they are all done
    const seen = new Set<number | undefined>();
    let p = await verifierProgress(sim);
    for (let k = 0; k < 40; k++) {
      expect(p.generation).toBeGreaterThan(0);
      expect(p.generationStats).toMatchObject({
        docsCompared: 0,
        totalDocs: 0,
        srcBytesCompared: 0,
        totalNamespaces: 4,
      });
      seen.add(p.generationStats.totalSrcBytes);
      sim.control.advance(0.01);
      p = await verifierProgress(sim);
    }
    // 4 of the 12 collections (DEFAULT_DATA_SET: 2 unique, 1 TTL, 1 hidden), each a twelfth of the bytes, as each
    // is sized (the fourth ends the generation: the next one begins at none)
    expect([...seen], JSON.stringify([...seen])).toEqual([
      undefined,
      ...[1, 2, 3].map((n) => Math.round((2 ** 30 * n) / 12)),
    ]);
  });

  it("a restart: generation 0's amounts before the check; resumed, the same gen0Stats; with --clean, none until generation 1", async () => {
    const restart = (s: Simulator, body: unknown = {}) => call(`${s.verifierUrl}/sim/verifier/restart`, "POST", body);
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    let p = await verifierProgress(sim);
    for (let k = 0; k < 200 && p.generation < 2; k++) {
      sim.control.advance(0.5);
      p = await verifierProgress(sim);
    }
    expect(p.generation).toBe(2);
    const gen0 = p.gen0Stats as Stats;
    expect(gen0).toMatchObject({ docsCompared: ALL, totalDocs: ALL });
    // before its check a process reads generation 0 from the metadata: its amounts are generationStats
    await restart(sim, { clean: false });
    const idle = await verifierProgress(sim);
    expect(idle).toMatchObject({ phase: "idle", generation: 0, generationStats: gen0 });
    expect(idle.gen0Stats).toBeUndefined();
    expect((await summary(sim)).checkStats).toEqual(gen0);
    // resumed: the persisted generation, and generation 0 as the earlier process left it
    await checkAndSetUp(sim);
    const resumed = await verifierProgress(sim);
    expect(resumed).toMatchObject({ phase: "recheck", generation: 2, gen0Stats: gen0 });
    expect(resumed.generationStats.totalDocs).toBeLessThan(ALL);
    // --clean: the old metadata dropped at the check, a fresh generation 0 without gen0Stats
    await restart(sim, { clean: true });
    await checkAndSetUp(sim);
    const fresh = await verifierProgress(sim);
    expect(fresh).toMatchObject({ phase: "check", generation: 0 });
    expect(fresh.gen0Stats).toBeUndefined();
    expect(fresh.generationStats.docsCompared).toBe(0);
    // a process on a new metadata database: nothing at all
    await restart(sim, { newMetadata: true });
    const none = await verifierProgress(sim);
    expect(none.generationStats).toEqual({ docsCompared: 0, totalDocs: 0, srcBytesCompared: 0, totalNamespaces: 0 });
    expect(none.gen0Stats).toBeUndefined();
    expect((await summary(sim)).checkStats).toEqual(none.generationStats);
  });
});

// migration-verifier v0.2.1 internal/verifier/check.go lines 500-505, `CreateInitialTasksIfNeeded`: "if
// !verifier.verifyAll { if len(verifier.srcNamespaces) == 0 { return nil } …": started without
// --verifyAll or --srcNamespace, a fresh verification's generation 0 has no task; progress.go lines
// 81-97 send generation 0's statistics (gen0Stats) from generation 1 on, and summary.go lines 362-365
// "if len(stats) == 0 { return comparisonStatistics{}, nil }" makes them all 0. Its change readers are
// not limited to namespaces (change_stream.go `GetChangeStreamFilter`), so writes made meanwhile are
// rechecked in later generations (check.go `ensureCreateRecheckTaskIfNeeded`).
describe("verifier: started without --verifyAll or --srcNamespace (verifierNamespaces: none)", () => {
  const ZERO = { docsCompared: 0, totalDocs: 0, srcBytesCompared: 0, totalNamespaces: 0 };
  const ZERO_STATUS = {
    totalTasks: 0,
    addedTasks: 0,
    processingTasks: 0,
    failedTasks: 0,
    completedTasks: 0,
    metadataMismatchTasks: 0,
  };
  const summary = async (s: Simulator) => (await call(`${s.verifierUrl}/api/v1/summary`)).json;
  const restart = (s: Simulator, body: unknown) => call(`${s.verifierUrl}/sim/verifier/restart`, "POST", body);

  it("no writes: generation 0 has no task, every generation is empty, gen0Stats all 0; writesOff finishes it (idle)", async () => {
    sim = await frozen({ verifierNamespaces: "none" });
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    sim.control.advance(5);
    expect(sim.control.state().verifier).toMatchObject({ namespaces: "none", filterMatchesNothing: false });
    expect((await check(sim)).json).toEqual({ success: true });
    // the read that waited for the setup: generation 0, no task at all
    const pending = verifierProgress(sim);
    await new Promise((r) => setTimeout(r, 20));
    sim.control.advance(1);
    const first = await pending;
    expect(first).toMatchObject({ phase: "check", generation: 0, generationStats: ZERO, error: null });
    expect(first.verificationStatus).toEqual(ZERO_STATUS);
    expect(first.gen0Stats).toBeUndefined();
    // its generations end at once: recheck, no task, generation 0's amounts all 0
    for (let k = 0; k < 10; k++) {
      sim.control.advance(3);
      const p = await verifierProgress(sim);
      expect(p).toMatchObject({ phase: "recheck", generationStats: ZERO, gen0Stats: ZERO });
      expect(p.generation).toBeGreaterThan(0);
      expect(p.verificationStatus).toEqual(ZERO_STATUS);
      expect((await summary(sim)).checkStats).toEqual(ZERO);
    }
    expect((await writesOff(sim)).json).toEqual({ success: true });
    sim.control.advance(5);
    const end = await verifierProgress(sim);
    expect(end).toMatchObject({ phase: "idle", generationStats: ZERO, gen0Stats: ZERO, error: null });
    expect(end.verificationStatus).toEqual(ZERO_STATUS);
    expect(sim.control.state().verifier).toMatchObject({ phase: "idle", running: false, exited: null });
  });

  it("writes during the check: gen0Stats still all 0, later generations recheck the written documents", async () => {
    sim = await frozen({ verifierNamespaces: "none" });
    await toCea(sim);
    await checkAndSetUp(sim);
    // the most documents a generation had to recheck
    let rechecked = 0;
    let sentOff = false;
    for (let k = 0; k < 400; k++) {
      const p = await verifierProgress(sim);
      verifierInvariants(p.verificationStatus);
      if (p.generation > 0) expect(p.gen0Stats).toEqual(ZERO);
      rechecked = Math.max(rechecked, p.generationStats.totalDocs);
      if (p.generationStats.totalDocs > 0) expect(p.generationStats.totalNamespaces).toBe(12);
      if (p.phase === "idle") {
        expect(sentOff).toBe(true);
        expect(p.verificationStatus.failedTasks).toBe(0);
        break;
      }
      if (!sentOff && k === 20) {
        sim.control.setWrites({ enabled: false });
        await broadcast(sim, "commit");
        sim.control.advance(5);
        expect((await writesOff(sim)).json).toEqual({ success: true });
        sentOff = true;
      }
      sim.control.advance(0.25);
    }
    const end = await verifierProgress(sim);
    expect(end.phase).toBe("idle");
    expect(rechecked).toBeGreaterThan(0);
    // the result compared what its last generation had to recheck: gen0Stats is what says nothing was verified
    expect(end.generationStats.docsCompared).toBe(end.generationStats.totalDocs);
    expect((await summary(sim)).checkStats).toEqual(ZERO);
  });

  it("a restart keeps the process's namespaces unless told; with --verifyAll and --clean its check verifies every collection", async () => {
    sim = await frozen({ verifierNamespaces: "none" });
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.advance(5);
    expect((await verifierProgress(sim)).gen0Stats).toEqual(ZERO);
    expect((await restart(sim, { namespaces: "some" })).status).toBe(400);
    expect((await restart(sim, {})).json).toEqual({ success: true });
    expect(sim.control.state().verifier).toMatchObject({ namespaces: "none", clean: true });
    expect((await restart(sim, { namespaces: "all" })).json).toEqual({ success: true });
    expect(sim.control.state().verifier).toMatchObject({ namespaces: "all", clean: true });
    await checkAndSetUp(sim);
    sim.control.advance(60);
    const p = await verifierProgress(sim);
    expect(p.generation).toBeGreaterThan(0);
    expect(p.gen0Stats).toMatchObject({ totalNamespaces: 12, docsCompared: 2 ** 20, totalDocs: 2 ** 20 });
  });

  it("the option is checked", async () => {
    await expect(frozen({ verifierNamespaces: "some" as "none" })).rejects.toThrow(/verifierNamespaces must be one of/);
    await expect(frozen({ checkFilterMatches: "some" as "none" })).rejects.toThrow(/checkFilterMatches must be/);
  });
});

// a check's filter applies to its document tasks (check.go `CheckDriver`: `verifier.globalFilter =
// filter`); the collections' estimated counts (totalDocs in generation 0) are not filtered
describe("verifier: a check filter that matches no document (checkFilterMatches: none)", () => {
  it("generation 0 verifies every collection's metadata and compares 0 documents of all of them", async () => {
    sim = await frozen({ checkFilterMatches: "none" });
    await toCea(sim);
    expect((await check(sim, { filter: { tenant: "nobody" } })).json).toEqual({ success: true });
    sim.control.advance(1);
    expect(sim.control.state().verifier).toMatchObject({ filterMatchesNothing: true });
    sim.control.advance(60);
    const p = await verifierProgress(sim);
    expect(p.generation).toBeGreaterThan(0);
    expect(p.gen0Stats).toEqual({
      docsCompared: 0,
      totalDocs: 2 ** 20,
      srcBytesCompared: 0,
      totalSrcBytes: 2 ** 30,
      totalNamespaces: 12,
    });
    expect(p.verificationStatus.failedTasks).toBe(0);
  });

  it("a check without a filter, or with an empty one, compares every document", async () => {
    for (const body of [{}, { filter: {} }]) {
      sim = await frozen({ checkFilterMatches: "none" });
      await toCea(sim);
      expect((await check(sim, body)).json).toEqual({ success: true });
      sim.control.advance(61);
      const p = await verifierProgress(sim);
      expect(sim.control.state().verifier).toMatchObject({ filterMatchesNothing: false });
      expect(p.gen0Stats).toMatchObject({ docsCompared: 2 ** 20, totalNamespaces: 12 });
      await sim.close();
    }
  });
});

// migration-verifier v0.2.1 internal/verifier/change_stream.go lines 218-232 and change_reader.go
// `allowedSrcDDLOpTypes`: under `--ddlHandling warnMost` a source DDL event of those types is warned of
// and counted (api/change_event_counts.go, `cumulativeEventCounts` "persisted alongside the resume
// token"), not verified; drop and rename still crash it; under failAll any DDL crashes it.
describe("verifier: DDL on the source (verifierDdlHandling)", () => {
  const DDL0 = {
    create: 0,
    modify: 0,
    createIndexes: 0,
    dropIndexes: 0,
    shardCollection: 0,
    reshardCollection: 0,
    refineCollectionShardKey: 0,
  };
  const ddl = (s: Simulator, body: unknown) => call(`${s.verifierUrl}/sim/ddl`, "POST", body);
  const restart = (s: Simulator, body: unknown) => call(`${s.verifierUrl}/sim/verifier/restart`, "POST", body);

  it("warnMost: counted in srcChangeStats.eventCounts, not in dstChangeStats, no task fails; writesOff finishes it", async () => {
    sim = await frozen({ verifierDdlHandling: "warnMost" });
    await toCea(sim);
    // before a check: not read, not counted
    expect((await ddl(sim, { type: "create" })).json).toEqual({ success: true, duringVerification: false });
    await checkAndSetUp(sim);
    expect((await ddl(sim, { type: "createIndexes", count: 2 })).json).toEqual({
      success: true,
      duringVerification: true,
    });
    expect((await ddl(sim, { type: "refineCollectionShardKey" })).json).toEqual({
      success: true,
      duringVerification: true,
    });
    sim.control.advance(2);
    let p = await verifierProgress(sim);
    expect(p.srcChangeStats.eventCounts).toMatchObject({ ...DDL0, createIndexes: 2, refineCollectionShardKey: 1 });
    expect(p.dstChangeStats.eventCounts).toMatchObject(DDL0);
    expect(Object.keys(p.srcChangeStats.eventCounts)).toEqual([
      "insert",
      "update",
      "replace",
      "delete",
      ...Object.keys(DDL0),
    ]);
    sim.control.setWrites({ enabled: false });
    await broadcast(sim, "commit");
    sim.control.advance(5);
    await writesOff(sim);
    const end = await runToIdle(sim);
    expect(end.failedTasks).toBe(0);
    expect(end.metadataMismatchTasks).toBe(0);
    p = await verifierProgress(sim);
    expect(p.srcChangeStats.eventCounts).toMatchObject({ createIndexes: 2, refineCollectionShardKey: 1 });
    // after the writes-off timestamp the change reader reads no more
    expect((await ddl(sim, { type: "modify" })).json).toEqual({ success: true, duringVerification: false });
    expect(sim.control.state().verifier).toMatchObject({
      ddlHandling: "warnMost",
      ddlDuringVerification: 3,
      exited: null,
    });
  });

  it("warnMost: drop and rename still make it exit", async () => {
    for (const type of ["drop", "rename", "dropDatabase"]) {
      sim = await frozen({ verifierDdlHandling: "warnMost" });
      await toCea(sim);
      await checkAndSetUp(sim);
      expect((await ddl(sim, { type })).json).toEqual({ success: true, duringVerification: true });
      expect(sim.control.state().verifier.exited).toBe(
        `received event with unknown optype: {"operationType": "${type}"}`,
      );
      await refused(verifierProgress(sim));
      await sim.close();
    }
  });

  it("failAll: DDL read during the check's setup makes it exit at the setup's end", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    expect(sim.control.ddl({ type: "modify" })).toEqual({ duringVerification: true });
    expect(sim.control.state().verifier.exited).toBeNull();
    sim.control.advance(1);
    expect(sim.control.state().verifier.exited).toMatch(
      /^received event with unknown optype: \{"operationType": "modify"\}; to skip/,
    );
    await refused(verifierProgress(sim));
  });

  it("the counts survive a restart that resumes (clean: false), and start from 0 after --clean; the handling is kept unless told", async () => {
    sim = await frozen({ verifierDdlHandling: "warnMost" });
    await toCea(sim);
    await checkAndSetUp(sim);
    sim.control.ddl({ type: "dropIndexes", count: 3 });
    sim.control.advance(2);
    expect((await verifierProgress(sim)).srcChangeStats.eventCounts.dropIndexes).toBe(3);
    expect((await restart(sim, { clean: false })).json).toEqual({ success: true });
    expect(sim.control.state().verifier).toMatchObject({ ddlHandling: "warnMost" });
    // before its check a new process shows none
    expect((await verifierProgress(sim)).srcChangeStats.eventCounts.dropIndexes).toBe(0);
    await checkAndSetUp(sim);
    sim.control.ddl({ type: "dropIndexes" });
    sim.control.advance(2);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true });
    expect((await verifierProgress(sim)).srcChangeStats.eventCounts.dropIndexes).toBe(4);
    expect((await restart(sim, { clean: true, ddlHandling: "sometimes" })).status).toBe(400);
    expect((await restart(sim, { clean: true })).json).toEqual({ success: true });
    await checkAndSetUp(sim);
    sim.control.advance(2);
    expect(sim.control.state().verifier).toMatchObject({ resumed: false, ddlHandling: "warnMost" });
    expect((await verifierProgress(sim)).srcChangeStats.eventCounts).toMatchObject(DDL0);
    expect((await restart(sim, { ddlHandling: "failAll" })).json).toEqual({ success: true });
    expect(sim.control.state().verifier).toMatchObject({ ddlHandling: "failAll" });
  });

  // migration-verifier v0.2.1: the UnknownEventError returns before its batch (and resume token) reaches
  // the persistor (change_stream.go lines 217-230, 262-269), and a restart without --clean starts its
  // change stream after the persisted token (lines 383-411): it reads that DDL again
  // the verifier's port is closed once it exited: restarted through an instance's control API
  const restartGone = (s: Simulator, body: unknown) =>
    call(`${s.instances[0]!.url}/sim/verifier/restart`, "POST", body);

  it("failAll: a restart without --clean reads the DDL it exited on again and exits again; --clean starts after it", async () => {
    sim = await frozen();
    await toCea(sim);
    await checkAndSetUp(sim);
    expect(sim.control.ddl({ type: "createIndexes" })).toEqual({ duringVerification: true });
    const EXIT =
      'received event with unknown optype: {"operationType": "createIndexes"}; to skip this event, run the verifier with `ddlHandling` set to `warnMost`';
    expect(sim.control.state().verifier.exited).toBe(EXIT);
    // resumed: the same DDL, at the end of its check's setup
    for (let k = 0; k < 2; k++) {
      expect((await restartGone(sim, { clean: false })).json).toEqual({ success: true });
      expect(sim.control.state().verifier).toMatchObject({ exited: null, holds: true });
      await checkAndSetUp(sim);
      expect(sim.control.state().verifier).toMatchObject({ resumed: true, exited: EXIT });
      await refused(verifierProgress(sim));
    }
    // resumed under warnMost: read again, counted and skipped (the way its error suggests)
    expect((await restartGone(sim, { clean: false, ddlHandling: "warnMost" })).json).toEqual({ success: true });
    await checkAndSetUp(sim);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true, exited: null });
    expect((await verifierProgress(sim)).srcChangeStats.eventCounts.createIndexes).toBe(1);
    // --clean under failAll: the metadata (the token with it) dropped, the DDL is not read again
    expect((await restartGone(sim, { clean: true, ddlHandling: "failAll" })).json).toEqual({ success: true });
    await checkAndSetUp(sim);
    sim.control.advance(5);
    expect(sim.control.state().verifier).toMatchObject({ resumed: false, exited: null, ddlHandling: "failAll" });
    expect((await verifierProgress(sim)).srcChangeStats.eventCounts.createIndexes).toBe(0);
  });

  it("failAll: DDL read during the setup, then exited on: a resumed check's setup meets it again", async () => {
    sim = await frozen();
    await toCea(sim);
    expect((await check(sim)).json).toEqual({ success: true });
    expect(sim.control.ddl({ type: "modify" })).toEqual({ duringVerification: true });
    sim.control.advance(1);
    const EXIT = /^received event with unknown optype: \{"operationType": "modify"\}; to skip/;
    expect(sim.control.state().verifier.exited).toMatch(EXIT);
    expect((await restartGone(sim, { clean: false })).json).toEqual({ success: true });
    await checkAndSetUp(sim);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true, exited: expect.stringMatching(EXIT) });
  });

  it("warnMost: a drop it exited on is met again by a resumed check (still no count); new metadata starts after it", async () => {
    sim = await frozen({ verifierDdlHandling: "warnMost" });
    await toCea(sim);
    await checkAndSetUp(sim);
    expect(sim.control.ddl({ type: "drop" })).toEqual({ duringVerification: true });
    const EXIT = 'received event with unknown optype: {"operationType": "drop"}';
    expect(sim.control.state().verifier.exited).toBe(EXIT);
    expect((await restartGone(sim, { clean: false })).json).toEqual({ success: true });
    await checkAndSetUp(sim);
    expect(sim.control.state().verifier).toMatchObject({ resumed: true, exited: EXIT });
    expect((await restartGone(sim, { newMetadata: true })).json).toEqual({ success: true });
    await checkAndSetUp(sim);
    sim.control.advance(5);
    expect(sim.control.state().verifier).toMatchObject({ resumed: false, exited: null });
  });

  it("the option and the control body are checked", async () => {
    await expect(frozen({ verifierDdlHandling: "sometimes" as "warnMost" })).rejects.toThrow(
      /verifierDdlHandling must be one of failAll, warnMost/,
    );
    sim = await frozen();
    expect((await ddl(sim, { type: "truncate" })).status).toBe(400);
    expect((await ddl(sim, { count: 0 })).status).toBe(400);
    expect((await ddl(sim, { count: 1, why: "x" })).status).toBe(400);
    expect(() => sim.control.ddl({ count: 1.5 })).toThrow(/count must be an integer/);
  });
});
