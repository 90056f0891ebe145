/**
 * The simulator emulates the service version it is started with (spec/service-facts.md: "the
 * simulator … emulates the version it is started with"). Each test quotes the facts it checks.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator, SimulatorOptions } from "../../src/sim/index.js";
import { RS_TO_SHARDED, broadcast, call, frozen, post, progress } from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

const RS_TO_RS = { cluster0: { topology: "replicaSet" as const }, cluster1: { topology: "replicaSet" as const } };
const BODY = { source: "cluster0", destination: "cluster1" };

/** A simulator of that version, past INITIALIZING (1.20+), replica set to replica set. */
async function at(version: string, opts: SimulatorOptions = {}): Promise<Simulator> {
  const s = await frozen({ serviceVersion: version, clusters: RS_TO_RS, ...opts });
  s.control.advance(2);
  return s;
}

/** Started and in change event application, indexes built, writes stopped. */
async function ready(s: Simulator, body: unknown = BODY): Promise<void> {
  expect((await broadcast(s, "start", body)).map((a) => a.json)).toEqual(s.instances.map(() => ({ success: true })));
  s.control.advance(40);
  s.control.setWrites({ enabled: false });
  s.control.advance(5);
}

describe("progress fields, by version", () => {
  // facts: the table "Progress fields, by version", every version it names (and 1.10 and 1.20, where
  // other facts change), read in change event application with the index builds done, writes stopped
  const base = ["state", "canCommit", "canWrite", "info", "lagTimeSeconds", "collectionCopy", "directionMapping"];
  const fieldsAt = (v: string): string[] => {
    const at = (since: string): boolean => {
      const [a, b] = v.split(".").map(Number);
      const [c, d] = since.split(".").map(Number);
      return a! > c! || (a === c && b! >= d!);
    };
    return [
      ...(at("1.3") ? ["mongosyncID", "coordinatorID"] : []),
      ...(at("1.8") ? ["totalEventsApplied"] : []),
      ...(at("1.9") ? ["verification"] : []),
      // "omitted outside change event application, or when lag has not decreased": here it applies
      ...(at("1.14") ? ["estimatedSecondsToCEACatchup"] : []),
      // "`source.pingLatencyMs`, `destination.pingLatencyMs` | 1.17"
      ...(at("1.17") ? ["source", "destination"] : []),
      // "only during change event application, with index builds after the copy" (afterDataCopy is the 1.17 default)
      ...(at("1.19") ? ["indexBuilding", "estimatedOplogTimeRemaining"] : []),
      ...(at("1.21") ? ["lag"] : []),
      ...(at("1.22") ? ["ceaStage"] : []),
    ];
  };
  for (const version of [
    "1.0.0",
    "1.3.0",
    "1.8.0",
    "1.9.0",
    "1.10.0",
    "1.14.0",
    "1.17.0",
    "1.19.0",
    "1.20.0",
    "1.21.0",
    "1.22.0",
  ]) {
    it(`${version}: ${fieldsAt(version).join(", ") || "the contract's fields only"}; no top-level pingLatencyMs, no empty warnings`, async () => {
      sim = await at(version);
      await ready(sim);
      sim.control.advance(10);
      const p = (await progress(sim)).progress;
      expect(Object.keys(p).sort()).toEqual([...base, ...fieldsAt(version)].sort());
      // "`warnings` | 1.19 | array of strings, **omitted when there are none**"
      expect(p).not.toHaveProperty("warnings");
      expect(p).not.toHaveProperty("pingLatencyMs");
      if (fieldsAt(version).includes("source")) {
        expect(p.source).toEqual({ pingLatencyMs: 1 });
        expect(p.destination).toEqual({ pingLatencyMs: 1 });
      }
      // IDLE: "all fields except `state` and `canCommit` are null"; the omitted ones are absent
      await sim.close();
      sim = await at(version);
      const idle = (await progress(sim)).progress;
      for (const [k, v] of Object.entries(idle)) if (k !== "state" && k !== "canCommit") expect(v, k).toBeNull();
      for (const f of [
        "estimatedSecondsToCEACatchup",
        "source",
        "indexBuilding",
        "warnings",
        "ceaStage",
        "estimatedOplogTimeRemaining",
      ])
        expect(idle, f).not.toHaveProperty(f);
    });
  }

  // facts: "`source.pingLatencyMs`, `destination.pingLatencyMs` | 1.17 | **absent** when under 1 ms"
  it("1.17: pingLatencyMs under 1 ms is absent", async () => {
    sim = await at("1.17.0", { model: { pingLatencyMs: 0.4 } });
    await ready(sim);
    const p = (await progress(sim)).progress;
    expect(p).not.toHaveProperty("source");
    expect(p).not.toHaveProperty("pingLatencyMs");
  });

  // facts: "omitted outside change event application" (estimatedSecondsToCEACatchup), "only during change event
  // application" (indexBuilding, ceaStage), "only in RUNNING before `canWrite` is true" (estimatedOplogTimeRemaining)
  it("1.22: the fields that apply only in change event application are absent during the copy and the commit", async () => {
    sim = await at("1.22.0");
    await post(sim, 0, "start", BODY);
    sim.control.advance(8);
    let p = (await progress(sim)).progress;
    expect(p.info).toBe("collection copy");
    for (const f of ["estimatedSecondsToCEACatchup", "indexBuilding", "ceaStage"]) expect(p, f).not.toHaveProperty(f);
    expect(p.estimatedOplogTimeRemaining).toBe("more than 72 hours");
    sim.control.advance(40);
    sim.control.setWrites({ enabled: false });
    sim.control.advance(10);
    expect((await post(sim, 0, "commit")).json).toEqual({ success: true });
    p = (await progress(sim)).progress;
    expect(p.state).toBe("COMMITTING");
    for (const f of [
      "estimatedSecondsToCEACatchup",
      "indexBuilding",
      "ceaStage",
      "estimatedOplogTimeRemaining",
      "warnings",
    ])
      expect(p, f).not.toHaveProperty(f);
  });

  // facts: "`estimatedOplogTimeRemaining` | 1.19 | a human string: `"12 hours"`, `"45 minutes"`, `"less than 15
  // minutes"`, `"more than 72 hours"`, `"not checked yet"`"
  it("1.19: estimatedOplogTimeRemaining takes the documented strings", async () => {
    const cases: [number | undefined, string][] = [
      [undefined, "more than 72 hours"],
      [12.5 * 3600, "12 hours"],
      [45.5 * 60 + 2, "45 minutes"],
      [10 * 60, "less than 15 minutes"],
    ];
    for (const [window, text] of cases) {
      sim = await at("1.19.0", window === undefined ? {} : { model: { oplogWindowSeconds: window } });
      await post(sim, 0, "start", BODY);
      expect((await progress(sim)).progress.estimatedOplogTimeRemaining).toBe("not checked yet");
      sim.control.advance(40);
      sim.control.setWrites({ enabled: false });
      sim.control.advance(10);
      expect((await progress(sim)).progress.estimatedOplogTimeRemaining, String(window)).toBe(text);
      await sim.close();
    }
  });

  // facts: "`warnings` | 1.19 | array of strings, **omitted when there are none**; one says the service blocks user
  // writes on the source"; "with dual write blocking (`"sourceAndDestination"`) the service also blocks **source**
  // writes after `/commit` is called"
  it("1.19: warnings appear only when the service blocks source writes (dual write blocking, after commit)", async () => {
    sim = await at("1.19.0");
    await ready(sim, { ...BODY, enableUserWriteBlocking: "sourceAndDestination" });
    expect((await progress(sim)).progress).not.toHaveProperty("warnings");
    await post(sim, 0, "commit");
    const w = (await progress(sim)).progress.warnings;
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(/blocking user writes on the source/);
    await sim.close();
    sim = await at("1.18.0");
    await ready(sim, { ...BODY, enableUserWriteBlocking: "sourceAndDestination" });
    await post(sim, 0, "commit");
    expect((await progress(sim)).progress).not.toHaveProperty("warnings");
  });

  // facts: "`ceaStage` | 1.22 | **only during change event application**: `"collection copy drain"` or `"steady state"`"
  it("1.22: ceaStage is the copy drain until the events buffered during the copy are applied, then steady state", async () => {
    sim = await at("1.22.0", { writes: { rate: 3000 } });
    await post(sim, 0, "start", BODY);
    sim.control.advance(3 + 16 + 1);
    let p = (await progress(sim)).progress;
    expect(p.info).toBe("change event application");
    expect(p.ceaStage).toBe("collection copy drain");
    sim.control.advance(120);
    p = (await progress(sim)).progress;
    expect(p.ceaStage).toBe("steady state");
    await sim.close();
    sim = await at("1.21.0", { writes: { rate: 3000 } });
    await post(sim, 0, "start", BODY);
    sim.control.advance(3 + 16 + 1);
    expect((await progress(sim)).progress).not.toHaveProperty("ceaStage");
  });

  // facts: "`ddlLagSeconds` null with a pre-6.0 source or before any DDL event, `crudLagSeconds` null before the
  // first CRUD timestamp; `lag` null while PAUSED"
  it("1.21: lag.crudLagSeconds and lag.ddlLagSeconds are null until there is such an event; lag is null while PAUSED", async () => {
    sim = await at("1.21.0", { writes: { enabled: false } });
    await post(sim, 0, "start", BODY);
    sim.control.advance(40);
    let p = (await progress(sim)).progress;
    expect(p.lag).toEqual({ overallLagSeconds: p.lagTimeSeconds, crudLagSeconds: null, ddlLagSeconds: null });
    sim.control.setWrites({ enabled: true });
    sim.control.ddl();
    sim.control.advance(1);
    p = (await progress(sim)).progress;
    expect(p.lag).toEqual({
      overallLagSeconds: p.lagTimeSeconds,
      crudLagSeconds: expect.any(Number),
      ddlLagSeconds: expect.any(Number),
    });
    await post(sim, 0, "pause");
    expect((await progress(sim)).progress.lag).toBeNull();
    await sim.close();
    // a 5.0 source: no ddlLagSeconds, DDL or not
    sim = await at("1.21.0", {
      clusters: { cluster0: { topology: "replicaSet", version: "5.0" }, cluster1: RS_TO_RS.cluster1 },
    });
    await post(sim, 0, "start", BODY);
    sim.control.ddl();
    sim.control.advance(40);
    expect((await progress(sim)).progress.lag.ddlLagSeconds).toBeNull();
  });

  // facts: "Before 1.21 `estimatedCopiedBytes` may exceed `estimatedTotalBytes` (the total is an estimate); from 1.21
  // the service raises `estimatedTotalBytes` when the copied bytes pass it [progress 1.21]"
  it("the copy total: exceeded before 1.21, raised to the copied bytes from 1.21", async () => {
    for (const [version, raised] of [
      ["1.20.0", false],
      ["1.21.0", true],
    ] as const) {
      sim = await at(version, { model: { estimatedTotalRatio: 0.5 } });
      await post(sim, 0, "start", BODY);
      sim.control.advance(3 + 14);
      const c = (await progress(sim)).progress.collectionCopy;
      expect(c.estimatedCopiedBytes, version).toBeGreaterThan(2 ** 29);
      if (raised) expect(c.estimatedTotalBytes, version).toBe(c.estimatedCopiedBytes);
      else expect(c.estimatedTotalBytes, version).toBe(2 ** 29);
      await sim.close();
    }
  });

  // facts: "top-level `success` | 1.8 | older answers have only `progress`: that is a successful answer"
  it("top-level success from 1.8; before, only progress", async () => {
    sim = await at("1.7.3");
    expect(Object.keys(await progress(sim))).toEqual(["progress"]);
    await sim.close();
    sim = await at("1.8.0");
    expect(Object.keys(await progress(sim))).toEqual(["success", "progress"]);
  });

  // facts: "`verification.source` / `.destination` | 1.9 | embedded verifier: … `phase` (`"not started"`,
  // `"initial hashing"`, `"stream hashing"`)" and "`verification: { enabled }` | 1.9 | embedded verifier, on by default"
  it("1.9: the embedded verifier's phases follow the sync; verification {enabled:false} keeps it not started", async () => {
    sim = await at("1.9.0");
    await post(sim, 0, "start", BODY);
    const phase = async (): Promise<string[]> => {
      const v = (await progress(sim)).progress.verification;
      return [v.source.phase, v.destination.phase];
    };
    expect(await phase()).toEqual(["not started", "not started"]);
    sim.control.advance(5);
    expect(await phase()).toEqual(["initial hashing", "initial hashing"]);
    sim.control.advance(40);
    expect(await phase()).toEqual(["stream hashing", "stream hashing"]);
    const v = (await progress(sim)).progress.verification.source;
    expect(Object.keys(v).sort()).toEqual(
      [
        "estimatedDocumentCount",
        "hashedDocumentCount",
        "lagTimeSeconds",
        "totalCollectionCount",
        "scannedCollectionCount",
        "phase",
      ].sort(),
    );
    await sim.close();
    sim = await at("1.9.0");
    await post(sim, 0, "start", { ...BODY, verification: { enabled: false } });
    sim.control.advance(45);
    expect(await phase()).toEqual(["not started", "not started"]);
  });

  // facts: "On by default: replica sets from 1.9, sharded clusters from 1.10" [embedded verification page; notes 1.10]
  for (const version of ["1.8.0", "1.9.0", "1.10.0", "1.17.0", "1.22.0"]) {
    it(`${version}: the embedded verifier by default, replica sets and sharded clusters`, async () => {
      const sharded = { topology: "sharded" as const, shards: 2 };
      for (const [clusters, on] of [
        [RS_TO_RS, version !== "1.8.0"],
        [{ cluster0: sharded, cluster1: sharded }, version !== "1.8.0" && version !== "1.9.0"],
      ] as const) {
        sim = await at(version, { clusters });
        await ready(sim);
        sim.control.advance(10);
        const v = (await progress(sim)).progress.verification;
        if (version === "1.8.0") expect(v).toBeUndefined();
        else
          expect([v.source.phase, v.destination.phase], JSON.stringify(clusters)).toEqual(
            on ? ["stream hashing", "stream hashing"] : ["not started", "not started"],
          );
        await sim.close();
      }
      if (version === "1.9.0") {
        // a start that asks for it gets it
        sim = await at(version, { clusters: { cluster0: sharded, cluster1: sharded } });
        await ready(sim, { ...BODY, verification: { enabled: true } });
        sim.control.advance(10);
        expect((await progress(sim)).progress.verification.source.phase).toBe("stream hashing");
      }
    });
  }

  // facts: "From 1.22 it starts at change event application and reports `"not started"` during the collection copy"
  it("1.22: the embedded verifier is not started through the copy, then hashes, then streams; 1.21 hashes during the copy", async () => {
    const phases = async (): Promise<string> => (await progress(sim)).progress.verification.source.phase;
    sim = await at("1.22.0");
    await post(sim, 0, "start", BODY);
    sim.control.advance(8);
    expect((await progress(sim)).progress.info).toBe("collection copy");
    expect(await phases()).toBe("not started");
    sim.control.advance(3 + 16 - 8 + 1);
    expect((await progress(sim)).progress.info).toBe("change event application");
    expect(await phases()).toBe("initial hashing");
    sim.control.advance(5);
    expect(await phases()).toBe("stream hashing");
    await sim.close();
    sim = await at("1.21.0");
    await post(sim, 0, "start", BODY);
    sim.control.advance(8);
    expect(await phases()).toBe("initial hashing");
  });

  // facts: "It cannot be resumed: after a pause and resume, or a restart of the service, verification starts again
  // from the beginning [verifier limitations]"; "`canCommit`: from 1.17 false until the embedded verifier is in a
  // state that allows commit [notes 1.17]"
  for (const version of ["1.16.0", "1.17.0", "1.19.0", "1.20.0", "1.22.0"]) {
    it(`${version}: after a pause and resume, or a restart, the embedded verifier starts over; canCommit ${version === "1.16.0" ? "does not wait" : "waits for it"}`, async () => {
      const waits = version !== "1.16.0";
      for (const how of ["pause-resume", "restart"]) {
        sim = await at(version);
        await ready(sim);
        sim.control.advance(10);
        let p = (await progress(sim)).progress;
        expect(p.verification.source.phase).toBe("stream hashing");
        expect(p.canCommit).toBe(true);
        if (how === "pause-resume") {
          await post(sim, 0, "pause");
          await post(sim, 0, "resume");
        } else {
          await sim.control.down(0);
          await expect(fetch(`${sim.instances[0]!.url}/api/v1/progress`)).rejects.toThrow();
          await sim.control.up(0);
          sim.control.advance(2); // INITIALIZING (1.20+) is over
        }
        p = (await progress(sim)).progress;
        expect(p.state, how).toBe("RUNNING");
        expect(p.verification.source.phase, how).toBe("initial hashing");
        expect(p.canCommit, how).toBe(!waits);
        sim.control.advance(5);
        p = (await progress(sim)).progress;
        expect(p.verification.source.phase, how).toBe("stream hashing");
        expect(p.canCommit, how).toBe(true);
        await sim.close();
      }
    });
  }

  // facts: "from 1.21 false while the service **or** the embedded verifier reports more than **30 s** of lag [notes
  // 1.21]"; "Documented refusals: … `commit` while `canCommit` is false [notes 1.21]"
  for (const version of ["1.20.0", "1.21.0", "1.22.0"]) {
    it(`${version}: 31 s of lag ${version === "1.20.0" ? "leaves canCommit true" : "makes canCommit false and commit refused"}; 30 s does not`, async () => {
      const limited = version !== "1.20.0";
      sim = await at(version, { faults: ["lag-floor=31"] });
      await ready(sim);
      sim.control.advance(10);
      let p = (await progress(sim)).progress;
      expect(p.lagTimeSeconds).toBe(31);
      expect(p.canCommit).toBe(!limited);
      if (limited) {
        const a = await post(sim, 0, "commit");
        expect(a.json).toMatchObject({ success: false });
        expect((await progress(sim)).progress.state).toBe("RUNNING");
      }
      await sim.close();
      sim = await at(version, { faults: ["lag-floor=30"] });
      await ready(sim);
      sim.control.advance(10);
      p = (await progress(sim)).progress;
      expect(p.lagTimeSeconds).toBe(30);
      expect(p.canCommit).toBe(true);
    });
  }

  // facts: "`info` values documented: `collection copy`, `change event application`,
  // `waiting for commit to complete`, `commit completed`."
  it("info takes the documented values through a cutover", async () => {
    sim = await frozen({ faults: ["lag-floor=4"] });
    const seen = new Set<string>();
    const note = async (): Promise<void> => {
      const i = (await progress(sim)).progress.info;
      if (i !== null) seen.add(i);
    };
    await post(sim, 0, "start", RS_TO_SHARDED);
    for (let k = 0; k < 30; k++) {
      await note();
      sim.control.advance(2);
    }
    sim.control.setWrites({ enabled: false });
    await post(sim, 0, "commit");
    await note();
    sim.control.advance(10);
    await note();
    expect([...seen].sort()).toEqual(
      ["collection copy", "change event application", "waiting for commit to complete", "commit completed"].sort(),
    );
  });
});

describe("states, by version", () => {
  // facts: "IDLE, INITIALIZING (1.20, before RUNNING)"; "Documented refusals: … `start` while INITIALIZING (1.20)"
  it("1.20: INITIALIZING first (start refused), then IDLE; a restart while IDLE initializes again", async () => {
    sim = await frozen({ serviceVersion: "1.20.0", clusters: RS_TO_RS });
    const p = (await progress(sim)).progress;
    expect(p.state).toBe("INITIALIZING");
    for (const [k, v] of Object.entries(p)) if (k !== "state" && k !== "canCommit") expect(v, k).toBeNull();
    const a = await post(sim, 0, "start", BODY);
    expect(a.json).toMatchObject({ success: false, error: "InvalidStateTransition" });
    expect(a.json.errorDescription).toMatch(/initializing/);
    sim.control.advance(2);
    expect((await progress(sim)).progress.state).toBe("IDLE");
    await sim.control.down(0);
    await expect(fetch(`${sim.instances[0]!.url}/api/v1/progress`)).rejects.toThrow();
    await sim.control.up(0);
    expect((await progress(sim)).progress.state).toBe("INITIALIZING");
  });

  it("below 1.20 there is no INITIALIZING", async () => {
    sim = await frozen({ serviceVersion: "1.19.0" });
    expect((await progress(sim)).progress.state).toBe("IDLE");
  });

  // facts: "`reverse` (only in COMMITTED, only if `start` had `reversible: true`): COMMITTED → REVERSING → RUNNING in
  // the opposite direction (`directionMapping` swaps Source and Destination)." and "`commit` and `reverse` block
  // until they have been called on every instance"
  it("reverse blocks until every instance has it, then REVERSING → RUNNING the other way on all", async () => {
    const sharded = { topology: "sharded" as const, shards: 2 };
    sim = await at("1.20.0", { instances: 2, clusters: { cluster0: sharded, cluster1: sharded } });
    await ready(sim, { ...BODY, reversible: true });
    await broadcast(sim, "commit");
    sim.control.advance(10);
    const zero = post(sim, 0, "reverse");
    await new Promise((r) => setTimeout(r, 50));
    expect((await progress(sim, 0)).progress.state).toBe("COMMITTED");
    expect((await post(sim, 1, "reverse")).json).toEqual({ success: true });
    expect((await zero).json).toEqual({ success: true });
    expect((await progress(sim, 0)).progress.state).toBe("REVERSING");
    sim.control.advance(3);
    for (const i of [0, 1]) {
      const p = (await progress(sim, i)).progress;
      expect(p.state).toBe("RUNNING");
      expect(p.directionMapping.Source).toMatch(/^cluster1: /);
    }
  });

  it("reverse is refused outside COMMITTED and without reversible: true", async () => {
    sim = await at("1.20.0");
    await ready(sim);
    expect((await post(sim, 0, "reverse")).json.errorDescription).toMatch(/only in COMMITTED/);
    await post(sim, 0, "commit");
    sim.control.advance(10);
    expect((await post(sim, 0, "reverse")).json.errorDescription).toMatch(/reversible: true/);
  });

  // facts: "Documented refusals: … `resume` before PAUSED (1.21)"
  it("resume in RUNNING: refused from 1.21, a no-op success before", async () => {
    sim = await at("1.21.0");
    await ready(sim);
    expect((await post(sim, 0, "resume")).json).toMatchObject({ success: false, error: "InvalidStateTransition" });
    await sim.close();
    sim = await at("1.20.0");
    await ready(sim);
    expect((await post(sim, 0, "resume")).json).toEqual({ success: true });
    expect((await progress(sim)).progress.state).toBe("RUNNING");
  });

  // facts: "Live upgrades (a new binary continuing a running sync): only where release notes say so — 1.12 → 1.13
  // [versioning page], to 1.18 [notes 1.18]; not to 1.20 [notes 1.20]." Every version of the facts, enumerated.
  const VERSIONS = [
    "1.0.0",
    "1.3.0",
    "1.6.0",
    "1.8.0",
    "1.9.0",
    "1.10.0",
    "1.11.0",
    "1.12.0",
    "1.13.0",
    "1.14.0",
    "1.15.0",
    "1.16.0",
    "1.17.0",
    "1.18.0",
    "1.19.0",
    "1.20.0",
    "1.21.0",
    "1.22.0",
  ];
  for (const version of VERSIONS) {
    const published = version === "1.13.0" || version === "1.18.0";
    it(`${version}: a live upgrade to it is ${published ? "published" : "refused (control API and fault)"}`, async () => {
      sim = await at(version);
      await ready(sim);
      const a = await call(`${sim.instances[0]!.url}/sim/instances/0/upgrade`, "POST", {});
      if (published) {
        expect(a.json).toEqual({ success: true });
        expect(() => sim.control.addFault("live-upgrade")).not.toThrow();
        return;
      }
      expect(a.json).toMatchObject({ success: false });
      expect(a.json.errorDescription).toMatch(/no live upgrade to service .* is published \(only to 1\.13 and 1\.18\)/);
      expect(() => sim.control.addFault("live-upgrade")).toThrow(/no live upgrade/);
    });
  }

  // facts [progress 1.20]: "once initialization completes it reports IDLE, or, after a crash or restart, **the state it
  // had before the crash**"
  for (const version of ["1.19.0", "1.20.0", "1.21.0", "1.22.0"]) {
    it(`${version}: a restart ${version === "1.19.0" ? "comes back in" : "goes INITIALIZING, then back to"} the state before it (RUNNING, PAUSED, COMMITTED)`, async () => {
      const initializes = version !== "1.19.0";
      for (const state of ["RUNNING", "PAUSED", "COMMITTED"]) {
        sim = await at(version);
        await ready(sim);
        if (state === "PAUSED") await post(sim, 0, "pause");
        if (state === "COMMITTED") {
          await post(sim, 0, "commit");
          sim.control.advance(10);
        }
        expect((await progress(sim)).progress.state).toBe(state);
        await sim.control.down(0);
        await expect(fetch(`${sim.instances[0]!.url}/api/v1/progress`)).rejects.toThrow();
        await sim.control.up(0);
        const p = (await progress(sim)).progress;
        expect(p.state, state).toBe(initializes ? "INITIALIZING" : state);
        if (initializes) {
          for (const [k, v] of Object.entries(p)) if (k !== "state" && k !== "canCommit") expect(v, k).toBeNull();
          expect(p.canCommit).toBe(false);
          // commands wait for it: not published, refused here (a client must wait for the state to settle)
          expect((await post(sim, 0, "start", BODY)).json.success).toBe(false);
          sim.control.advance(2);
          expect((await progress(sim)).progress.state, state).toBe(state);
        }
        await sim.close();
      }
    });
  }

  // facts: "From 1.17 the service fails the migration if it sees writes on the source during commit (it does not
  // silently lose them)."
  it("1.17: writes on the source during commit fail the migration: COMMITTING for good, canWrite false, info says why", async () => {
    sim = await at("1.17.0");
    await ready(sim);
    sim.control.setWrites({ enabled: true });
    expect((await post(sim, 0, "commit")).json).toEqual({ success: true });
    sim.control.advance(30);
    const p = (await progress(sim)).progress;
    expect(p).toMatchObject({ state: "COMMITTING", canCommit: false, canWrite: false, lagTimeSeconds: null });
    expect(p.info).toMatch(/^migration failed: writes were seen on the source during commit/);
    expect(sim.control.state().instances[0]!.failure).toMatch(/writes were seen on the source/);
    expect((await post(sim, 0, "pause")).json).toMatchObject({ success: false, error: "MigrationFailed" });
  });

  it("below 1.17: the same writes are lost silently, and the commit completes", async () => {
    sim = await at("1.16.0");
    await ready(sim);
    sim.control.setWrites({ enabled: true });
    await post(sim, 0, "commit");
    sim.control.advance(30);
    expect((await progress(sim)).progress.state).toBe("COMMITTED");
    expect(sim.control.state().writes.lost).toBeGreaterThan(0);
  });

  // facts: "with dual write blocking (`"sourceAndDestination"`) the service also blocks **source** writes after
  // `/commit` is called, so writes that reach the source after commit are refused rather than lost"
  it("dual write blocking: writes after commit are refused, neither lost nor failing the migration", async () => {
    sim = await at("1.17.0");
    await ready(sim, { ...BODY, enableUserWriteBlocking: "sourceAndDestination" });
    sim.control.setWrites({ enabled: true });
    await post(sim, 0, "commit");
    sim.control.advance(30);
    expect((await progress(sim)).progress.state).toBe("COMMITTED");
    const st = sim.control.state();
    expect(st.writes.lost).toBe(0);
    expect(st.writes.refused).toBeGreaterThan(0);
  });

  // facts: "`verification: { enabled }` | 1.9 | embedded verifier, on by default; with `buildIndexes: never` and TTL
  // collections it fails the migration"
  it("1.9: the embedded verifier with buildIndexes never and TTL collections fails the migration", async () => {
    sim = await at("1.9.0");
    await ready(sim, { ...BODY, buildIndexes: "never" });
    expect((await progress(sim)).progress.info).toMatch(/^migration failed: .*TTL/);
    await sim.close();
    sim = await at("1.9.0", { dataSet: { ttl: 0 } });
    await ready(sim, { ...BODY, buildIndexes: "never" });
    expect((await progress(sim)).progress.canCommit).toBe(true);
  });

  // facts: "from 1.17 `afterDataCopy` is the default for sources on server 6.0+, and `canCommit` then waits for the
  // index builds"
  it("1.17: index builds after the copy hold canCommit (6.0+ source); a 5.0 source builds before", async () => {
    sim = await at("1.19.0");
    await post(sim, 0, "start", BODY);
    sim.control.advance(3 + 16 + 1); // the copy is done
    let p = (await progress(sim)).progress;
    expect(p.info).toBe("change event application");
    expect(p.canCommit).toBe(false);
    expect(p.indexBuilding).toMatchObject({ totalIndexesToBuild: expect.any(Number) });
    expect(p.indexBuilding.indexesBuilt).toBeLessThan(p.indexBuilding.totalIndexesToBuild);
    sim.control.advance(5);
    p = (await progress(sim)).progress;
    expect(p.canCommit).toBe(true);
    await sim.close();
    sim = await at("1.19.0", {
      clusters: { cluster0: { topology: "replicaSet", version: "5.0" }, cluster1: RS_TO_RS.cluster1 },
    });
    await post(sim, 0, "start", BODY);
    sim.control.advance(3 + 16 + 1);
    p = (await progress(sim)).progress;
    expect(p.canCommit).toBe(true);
    expect(p).not.toHaveProperty("indexBuilding");
  });
});

describe("start body, by version", () => {
  // facts: the table "start body, by version"; a field newer than the version is refused like an unknown field
  const fields: [string, unknown, string][] = [
    ["excludeNamespaces", [{ database: "tmp" }], "1.6"],
    ["buildIndexes", "never", "1.3"],
    ["verification", { enabled: true }, "1.9"],
    ["preExistingDestinationData", false, "1.15"],
    ["copyInNaturalOrder", [{ database: "sales", collections: ["orders"] }], "1.16"],
    ["detectRandomId", true, "1.18"],
    ["skipDiskSpaceCheck", true, "1.22"],
  ];
  for (const [field, value, since] of fields) {
    it(`${field}: unknown before ${since} (refused like a misspelt field), accepted from ${since}`, async () => {
      const [maj, min] = since.split(".").map(Number);
      sim = await at(`${maj}.${min! - 1}.0`);
      const before = await post(sim, 0, "start", { ...BODY, [field]: value });
      const made = await post(sim, 0, "start", { ...BODY, madeUp: true });
      expect(before.json).toMatchObject({ success: false, error: "InvalidRequest" });
      expect(before.json.errorDescription).toBe(made.json.errorDescription.replace("madeUp", field));
      await sim.close();
      sim = await at(`${since}.0`);
      expect((await post(sim, 0, "start", { ...BODY, [field]: value })).json).toEqual({ success: true });
    });
  }

  // facts: "`enableUserWriteBlocking` … **removed in 1.20**: never send it to a 1.20+ service"
  it("enableUserWriteBlocking: refused as unknown from 1.20", async () => {
    sim = await at("1.20.0");
    const a = await post(sim, 0, "start", { ...BODY, enableUserWriteBlocking: true });
    expect(a.json.errorDescription).toMatch(/unknown field "enableUserWriteBlocking"/);
  });

  // facts: "boolean; strings `"destinationOnly"` (1.11), `"sourceAndDestination"` (= true) and `"none"` (= false) (1.12)"
  it("enableUserWriteBlocking strings by version", async () => {
    const cases: [string, unknown, boolean][] = [
      ["1.10.0", "destinationOnly", false],
      ["1.11.0", "destinationOnly", true],
      ["1.11.0", "sourceAndDestination", false],
      ["1.12.0", "sourceAndDestination", true],
      ["1.12.0", "none", true],
      ["1.8.0", true, true],
    ];
    for (const [version, value, accepted] of cases) {
      sim = await at(version);
      const a = await post(sim, 0, "start", { ...BODY, enableUserWriteBlocking: value });
      expect(a.json.success, `${version} ${String(value)}`).toBe(accepted);
      await sim.close();
    }
  });

  // facts: "`beforeDataCopy` (default), `never` (1.3); `excludeHashed` (1.14); `afterDataCopy`, `excludeHashedAfterCopy` (1.16)"
  it("buildIndexes values by version", async () => {
    const cases: [string, string, boolean][] = [
      ["1.3.0", "beforeDataCopy", true],
      ["1.13.0", "excludeHashed", false],
      ["1.14.0", "excludeHashed", true],
      ["1.15.0", "afterDataCopy", false],
      ["1.16.0", "afterDataCopy", true],
      ["1.16.0", "excludeHashedAfterCopy", true],
    ];
    for (const [version, value, accepted] of cases) {
      sim = await at(version);
      const a = await post(sim, 0, "start", { ...BODY, buildIndexes: value });
      expect(a.json.success, `${version} ${value}`).toBe(accepted);
      if (!accepted) expect(a.json.errorDescription).toMatch(/buildIndexes must be one of/);
      await sim.close();
    }
  });

  // facts: "`reversible` | — | refused: replica set → sharded; sharded clusters with different shard counts; with
  // `buildIndexes: never`"
  it("reversible refusals", async () => {
    sim = await at("1.20.0", { clusters: { cluster0: { topology: "replicaSet" }, cluster1: { topology: "sharded" } } });
    expect((await post(sim, 0, "start", { ...RS_TO_SHARDED, reversible: true })).json.errorDescription).toMatch(
      /replica set to a sharded cluster/,
    );
    await sim.close();
    sim = await at("1.20.0", {
      clusters: { cluster0: { topology: "sharded", shards: 2 }, cluster1: { topology: "sharded", shards: 3 } },
    });
    expect((await post(sim, 0, "start", { ...BODY, reversible: true })).json.errorDescription).toMatch(
      /different numbers of shards/,
    );
    await sim.close();
    sim = await at("1.20.0");
    expect(
      (await post(sim, 0, "start", { ...BODY, reversible: true, buildIndexes: "never" })).json.errorDescription,
    ).toMatch(/buildIndexes "never"/);
    // from 1.20 write blocking comes from the service's configuration: reversible alone is enough
    expect((await post(sim, 0, "start", { ...BODY, reversible: true })).json).toEqual({ success: true });
  });

  // facts, "start body, by version": "Combinations the documentation refuses or does not support (lint must say so; the
  // simulator must refuse what the service refuses)"
  it("the start combinations the documentation refuses are refused, without success", async () => {
    const filter = { excludeNamespaces: [{ database: "tmp" }] };
    const cases: [version: string, clusters: SimulatorOptions["clusters"], body: object, why: RegExp][] = [
      [
        "1.20.0",
        RS_TO_RS,
        { ...BODY, ...filter, reversible: true },
        /reversible is not supported with a namespace filter/,
      ],
      [
        "1.18.0",
        RS_TO_RS,
        { ...BODY, ...filter, enableUserWriteBlocking: "sourceAndDestination" },
        /dual write blocking/,
      ],
      ["1.20.0", RS_TO_RS, { ...BODY, preExistingDestinationData: true }, /requires a namespace filter/],
      [
        "1.20.0",
        RS_TO_RS,
        { ...BODY, ...filter, preExistingDestinationData: true, reversible: true },
        /namespace filter|does not allow reversible/,
      ],
      [
        "1.20.0",
        { cluster0: { topology: "sharded", shards: 2 }, cluster1: { topology: "replicaSet" } },
        { ...BODY, reversible: true },
        /different topologies/,
      ],
      [
        "1.20.0",
        { cluster0: { topology: "replicaSet", version: "6.0" }, cluster1: { topology: "replicaSet", version: "7.0" } },
        { ...BODY, reversible: true },
        /different server major versions/,
      ],
      [
        "1.20.0",
        { cluster0: { topology: "replicaSet", version: "5.0" }, cluster1: { topology: "replicaSet", version: "5.0" } },
        { ...BODY, reversible: true },
        /6\.0 or newer/,
      ],
      ["1.5.0", RS_TO_RS, { ...BODY, includeNamespaces: [{ databaseRegex: { pattern: "^s" } }] }, /1\.6 features/],
      [
        "1.19.0",
        { cluster0: { topology: "replicaSet", version: "4.4" }, cluster1: { topology: "replicaSet" } },
        BODY,
        /dropped in 1\.19/,
      ],
      [
        "1.19.0",
        { cluster0: { topology: "replicaSet" }, cluster1: { topology: "replicaSet", version: "6.0" } },
        BODY,
        /dropped in 1\.19/,
      ],
      ["1.16.0", RS_TO_RS, { ...BODY, copyInNaturalOrder: true }, /copyInNaturalOrder/],
    ];
    for (const [version, clusters, body, why] of cases) {
      sim = await at(version, { clusters });
      const a = await post(sim, 0, "start", body);
      expect(a.json.success, `${version} ${JSON.stringify(body)}`).toBe(false);
      expect(a.json.errorDescription, JSON.stringify(body)).toMatch(why);
      expect((await progress(sim)).progress.state).toBe("IDLE");
      await sim.close();
    }
    // and what stays allowed: a filter with destination-only write blocking; 4.4 before 1.19
    sim = await at("1.18.0");
    expect(
      (await post(sim, 0, "start", { ...BODY, ...filter, enableUserWriteBlocking: "destinationOnly" })).json,
    ).toEqual({
      success: true,
    });
    await sim.close();
    sim = await at("1.18.0", {
      clusters: { cluster0: { topology: "replicaSet", version: "4.4" }, cluster1: { topology: "replicaSet" } },
    });
    expect((await post(sim, 0, "start", BODY)).json).toEqual({ success: true });
  });

  // facts: "The one documented name: `InsufficientDestinationDiskSpace` (1.22; `start` option `skipDiskSpaceCheck: true`
  // skips the check)."
  it("1.22: InsufficientDestinationDiskSpace on start, skipped by skipDiskSpaceCheck: true", async () => {
    sim = await at("1.22.0", { faults: ["insufficient-disk-space"] });
    const a = await post(sim, 0, "start", BODY);
    expect(a.json).toEqual({
      success: false,
      error: "InsufficientDestinationDiskSpace",
      errorDescription: expect.any(String),
    });
    expect((await progress(sim)).progress.state).toBe("IDLE");
    expect((await post(sim, 0, "start", { ...BODY, skipDiskSpaceCheck: true })).json).toEqual({ success: true });
    expect(sim.control.faults()[0]!.hits).toBe(1);
    await sim.close();
    sim = await at("1.21.0");
    expect(() => sim.control.addFault("insufficient-disk-space")).toThrow(/1\.22 feature/);
  });
});
