/**
 * The sync service as spec/sync-service-api.md describes it (and spec/service-facts.md where
 * the spec says "not shown"). Each test quotes the sentence it checks.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { RS_TO_SHARDED, broadcast, call, frozen, post, progress, toCea } from "../support/sim.js";

let sim: Simulator;
afterEach(async () => {
  await sim?.close();
});

const GiB = 2 ** 30;

describe("progress", () => {
  // Progress rule 1: "In state IDLE, all fields except `state` and `canCommit` are null."
  it("IDLE: every field but state and canCommit is null", async () => {
    sim = await frozen();
    const body = await progress(sim);
    expect(body.success).toBe(true);
    expect(body.progress.state).toBe("IDLE");
    expect(body.progress.canCommit).toBe(false);
    for (const [k, v] of Object.entries(body.progress)) if (k !== "state" && k !== "canCommit") expect(v, k).toBeNull();
    // facts: identifiers mongosyncID and coordinatorID (1.3) are among the fields.
    expect(Object.keys(body.progress).sort()).toEqual(
      [
        "canCommit",
        "canWrite",
        "collectionCopy",
        "coordinatorID",
        "directionMapping",
        "info",
        "lagTimeSeconds",
        "mongosyncID",
        "state",
        "totalEventsApplied",
      ].sort(),
    );
  });

  // Progress rule 3: "Before the collection copy phase, estimatedCopiedBytes is 0 and estimatedTotalBytes is 1."
  it("before the copy: 0 copied of 1 total", async () => {
    sim = await frozen();
    expect((await post(sim, 0, "start", RS_TO_SHARDED)).json).toEqual({ success: true });
    const p = (await progress(sim)).progress;
    expect(p.state).toBe("RUNNING");
    expect(p.collectionCopy).toEqual({ estimatedTotalBytes: 1, estimatedCopiedBytes: 0 });
    expect(p.info).toBe("collection copy");
    expect(p.canCommit).toBe(false);
  });

  // "estimatedCopiedBytes ... Never greater than estimatedTotalBytes. Progress reaches 100% at the end of collection copy (the two values are equal)."
  it("the copy advances at the configured rate, never past the total, and ends at 100%", async () => {
    sim = await frozen({ model: { copyBytesPerSecond: 100 * 2 ** 20 } });
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(3); // pre-copy
    let last = -1;
    for (let s = 0; s < 14; s++) {
      sim.control.advance(1);
      const c = (await progress(sim)).progress.collectionCopy;
      expect(c.estimatedTotalBytes).toBe(GiB);
      expect(c.estimatedCopiedBytes).toBeLessThanOrEqual(c.estimatedTotalBytes);
      expect(c.estimatedCopiedBytes).toBeGreaterThanOrEqual(last);
      if (s === 0) expect(c.estimatedCopiedBytes).toBe(100 * 2 ** 20);
      last = c.estimatedCopiedBytes;
    }
    const p = (await progress(sim)).progress;
    expect(p.collectionCopy.estimatedCopiedBytes).toBe(p.collectionCopy.estimatedTotalBytes);
    // "The value `change event application` indicates the CEA phase." and canWrite: "Example value seen: false while in CEA."
    expect(p.info).toBe("change event application");
    expect(p.canCommit).toBe(true);
    expect(p.canWrite).toBe(false);
  });

  // "estimatedTotalBytes: Estimated total bytes to copy globally across all instances." /
  // "estimatedCopiedBytes: Estimated bytes copied to the destination by this instance."
  it("with several instances the total is global and each instance copies its share", async () => {
    sim = await frozen({ instances: 3 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(100);
    const ps = await Promise.all([0, 1, 2].map(async (i) => (await progress(sim, i)).progress));
    for (const p of ps) expect(p.collectionCopy.estimatedTotalBytes).toBe(GiB);
    expect(ps.reduce((s, p) => s + p.collectionCopy.estimatedCopiedBytes, 0)).toBe(GiB);
  });

  // "Regular no-ops on the source often keep it a few seconds above zero even with no real writes."
  it("lag stays a few seconds above 0 with no writes, until commit; and is an integer", async () => {
    sim = await frozen();
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    for (let s = 0; s < 5; s++) {
      sim.control.advance(30);
      const lag = (await progress(sim)).progress.lagTimeSeconds;
      expect(Number.isInteger(lag)).toBe(true);
      expect(lag).toBeGreaterThan(0);
      expect(lag).toBeLessThanOrEqual(3);
    }
  });

  // "lagTimeSeconds: Seconds between the latest event timestamp seen on the source and the last applied event."
  it("lag follows the source write rate and the apply rate", async () => {
    sim = await frozen({ model: { applyEventsPerSecond: 1000 }, writes: { rate: 500 } });
    await toCea(sim);
    expect((await progress(sim)).progress.lagTimeSeconds).toBe(2); // caught up: the no-op floor
    // Writes faster than the instance applies them: the backlog, and the lag, grow.
    sim.control.setWrites({ rate: 2000 });
    sim.control.advance(10);
    const lag10 = (await progress(sim)).progress.lagTimeSeconds;
    sim.control.advance(10);
    const lag20 = (await progress(sim)).progress.lagTimeSeconds;
    expect(lag10).toBeGreaterThanOrEqual(4); // 10 s of writes at 2000/s take 20 s to apply at 1000/s: 5 s behind
    expect(lag20).toBeGreaterThan(lag10);
    // Writes stop: the instance catches up, down to the no-op floor.
    sim.control.setWrites({ enabled: false });
    sim.control.advance(60);
    expect((await progress(sim)).progress.lagTimeSeconds).toBe(2);
  });

  it("the copy's backlog of change events is applied in CEA; totalEventsApplied grows", async () => {
    sim = await frozen();
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(19.5); // pre-copy 3 s + copy 16 s: 0.5 s into CEA
    const p1 = (await progress(sim)).progress;
    expect(p1.info).toBe("change event application");
    expect(p1.lagTimeSeconds).toBeGreaterThan(10); // events buffered since start are still to apply
    sim.control.advance(20);
    const p2 = (await progress(sim)).progress;
    expect(p2.lagTimeSeconds).toBe(2);
    expect(p2.totalEventsApplied).toBeGreaterThan(p1.totalEventsApplied);
    expect(Number.isInteger(p2.totalEventsApplied)).toBe(true);
  });

  // "directionMapping.Source: Source cluster, in the form `<cluster_name>: <host>:<port>`."
  it("directionMapping, mongosyncID and coordinatorID", async () => {
    sim = await frozen({ instances: 2 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    sim.control.advance(1);
    const [a, b] = [(await progress(sim, 0)).progress, (await progress(sim, 1)).progress];
    expect(a.directionMapping).toEqual({
      Source: "cluster0: 127.0.0.1:27017",
      Destination: "cluster1: 127.0.0.1:27018",
    });
    expect(a.directionMapping.Source).toMatch(/^[^:]+: [^:]+:\d+$/);
    expect([a.mongosyncID, b.mongosyncID]).toEqual(["instance-0", "instance-1"]);
    expect([a.coordinatorID, b.coordinatorID]).toEqual(["instance-0", "instance-0"]);
  });

  // facts: "`mongosyncID`, `coordinatorID` | 1.3 | `coordinatorID` may be null at start-up"
  it("coordinatorID is null for a moment after start (and after a restart); mongosyncID is there", async () => {
    sim = await frozen({ instances: 2 });
    await broadcast(sim, "start", RS_TO_SHARDED);
    const p = (await progress(sim, 1)).progress;
    expect(p.mongosyncID).toBe("instance-1");
    expect(p.coordinatorID).toBeNull();
    sim.control.advance(1);
    expect((await progress(sim, 1)).progress.coordinatorID).toBe("instance-0");
    await sim.control.down(1);
    await expect(fetch(`${sim.instances[1]!.url}/api/v1/progress`)).rejects.toThrow();
    await sim.control.up(1);
    expect((await progress(sim, 1)).progress.coordinatorID).toBeNull();
  });

  // "Introduced in version 1.3" (the identifiers): older versions do not have them.
  it("a service older than 1.3 has no identifiers in progress", async () => {
    sim = await frozen({ serviceVersion: "1.2.0" });
    expect(Object.keys((await progress(sim)).progress)).not.toContain("mongosyncID");
  });

  // Progress rule 5: "The endpoint does not refresh itself; each call returns the current status."
  it("each call returns the current status (frozen clock: the same answer)", async () => {
    sim = await frozen();
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(7);
    expect(await progress(sim)).toEqual(await progress(sim));
  });
});

describe("commit", () => {
  // "Request body: an empty JSON object `{}` must be sent; no parameters."
  it("requires the body {}", async () => {
    sim = await frozen();
    await toCea(sim);
    for (const body of [undefined, "", "[]", '{"force":true}', "null", "1"]) {
      const a = await call(`${sim.instances[0]!.url}/api/v1/commit`, "POST", body);
      expect(a.json.success, String(body)).toBe(false);
      expect((await progress(sim)).progress.state).toBe("RUNNING");
    }
    expect((await post(sim, 0, "commit", {})).json).toEqual({ success: true });
  });

  // facts: "Documented refusals: … `commit` while `canCommit` is false (1.21)"
  it("1.21: is refused before canCommit is true, and outside RUNNING", async () => {
    sim = await frozen({ serviceVersion: "1.21.0" });
    sim.control.advance(2); // INITIALIZING (1.20)
    expect((await post(sim, 0, "commit")).json).toMatchObject({ success: false, error: "InvalidStateTransition" });
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(5); // copying
    const a = await post(sim, 0, "commit");
    expect(a.json.success).toBe(false);
    expect(a.json.errorDescription).toMatch(/canCommit/);
    expect((await progress(sim)).progress.state).toBe("RUNNING");
  });

  // "Preconditions: ... state RUNNING and canCommit true." The refusal is documented from 1.21 only: before,
  // the simulator accepts it, and the commit waits for the copy (decision: see src/sim/README.md).
  it("below 1.21: a commit before canCommit is accepted and stays COMMITTING until the copy is done and the lag drained", async () => {
    sim = await frozen();
    expect((await post(sim, 0, "commit")).json).toMatchObject({ success: false, error: "InvalidStateTransition" });
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(5); // copying
    sim.control.setWrites({ enabled: false });
    expect((await post(sim, 0, "commit")).json).toEqual({ success: true });
    let p = (await progress(sim)).progress;
    expect(p).toMatchObject({ state: "COMMITTING", canWrite: false, info: "waiting for commit to complete" });
    sim.control.advance(5);
    p = (await progress(sim)).progress;
    expect(p.state).toBe("COMMITTING");
    expect(p.collectionCopy.estimatedCopiedBytes).toBeLessThan(p.collectionCopy.estimatedTotalBytes);
    sim.control.advance(40);
    p = (await progress(sim)).progress;
    expect(p.state).toBe("COMMITTED");
    expect(p.collectionCopy.estimatedCopiedBytes).toBe(p.collectionCopy.estimatedTotalBytes);
  });

  // "Stays in COMMITTING for the number of seconds given by lagTimeSeconds." and facts: "`canWrite`
  // becomes true during commit ...; the state reaches COMMITTED later."
  it("stays COMMITTING for lagTimeSeconds, canWrite turns true before COMMITTED, then lag 0", async () => {
    sim = await frozen({ faults: ["lag-floor=10"] });
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    expect((await progress(sim)).progress.lagTimeSeconds).toBe(10);
    expect((await post(sim, 0, "commit")).json.success).toBe(true);
    let p = (await progress(sim)).progress;
    expect(p).toMatchObject({
      state: "COMMITTING",
      canCommit: false,
      canWrite: false,
      info: "waiting for commit to complete",
      lagTimeSeconds: 10,
    });
    sim.control.advance(4);
    expect((await progress(sim)).progress).toMatchObject({ state: "COMMITTING", canWrite: false });
    sim.control.advance(2);
    expect((await progress(sim)).progress).toMatchObject({ state: "COMMITTING", canWrite: true });
    sim.control.advance(3.9);
    expect((await progress(sim)).progress.state).toBe("COMMITTING");
    sim.control.advance(0.2);
    p = (await progress(sim)).progress;
    // "It is 0 when source and destination are consistent."
    expect(p).toMatchObject({
      state: "COMMITTED",
      canWrite: true,
      canCommit: false,
      info: "commit completed",
      lagTimeSeconds: 0,
    });
  });

  it("the commit duration scales with the clock", async () => {
    sim = await frozen({ faults: ["lag-floor=10"] });
    await toCea(sim);
    sim.control.setWrites({ enabled: false });
    await post(sim, 0, "commit");
    sim.control.setTimeScale(100); // 10 simulated seconds = 100 ms of wall time
    await new Promise((r) => setTimeout(r, 250));
    expect((await progress(sim)).progress.state).toBe("COMMITTED");
  });
});

describe("start", () => {
  // States table: "IDLE | POST /api/v1/start | Request succeeds | RUNNING"; Rule 1: "start is allowed only in IDLE."
  it("IDLE → RUNNING; a second start is refused and changes nothing", async () => {
    sim = await frozen();
    expect((await post(sim, 0, "start", RS_TO_SHARDED)).json).toEqual({ success: true });
    const before = await progress(sim);
    const again = await post(sim, 0, "start", RS_TO_SHARDED);
    // facts: "Field names: `success` (boolean), `error` (string, the error's name) and `errorDescription`"
    expect(again.json.success).toBe(false);
    expect(typeof again.json.error).toBe("string");
    expect(typeof again.json.errorDescription).toBe("string");
    expect(await progress(sim)).toEqual(before);
  });

  // Errors 3: "Start fails with an error when syncing from a replica set to a sharded cluster without `sharding`."
  it("replica set → sharded without sharding is refused", async () => {
    sim = await frozen();
    const a = await post(sim, 0, "start", { source: "cluster0", destination: "cluster1" });
    expect(a.json).toMatchObject({ success: false, error: "InvalidRequest" });
    expect(a.json.errorDescription).toMatch(/requires "sharding"/);
    expect((await progress(sim)).progress.state).toBe("IDLE");
  });

  // Errors 4: "Start fails with an error when `sharding` is set in any configuration other than a replica-set-to-sharded-cluster sync."
  it("sharding in any other configuration is refused", async () => {
    for (const clusters of [
      { a: { topology: "sharded" as const }, b: { topology: "sharded" as const } },
      { a: { topology: "replicaSet" as const }, b: { topology: "replicaSet" as const } },
      { a: { topology: "sharded" as const }, b: { topology: "replicaSet" as const } },
    ]) {
      sim = await frozen({ clusters });
      const a = await post(sim, 0, "start", { source: "a", destination: "b", sharding: { shardingEntries: [] } });
      expect(a.json.success).toBe(false);
      expect(a.json.errorDescription).toMatch(/only allowed from a replica set to a sharded cluster/);
      expect((await post(sim, 0, "start", { source: "a", destination: "b" })).json.success).toBe(true);
      await sim.close();
    }
  });

  const cases: [string, unknown, RegExp][] = [
    // "Required: source, destination."
    ["missing source", { destination: "cluster1", sharding: { shardingEntries: [] } }, /required field "source"/],
    ["missing destination", { source: "cluster0" }, /required field "destination"/],
    // "Name of the source cluster (one of the configured cluster settings)."
    ["unknown source", { source: "clusterX", destination: "cluster1" }, /unknown source cluster "clusterX"/],
    [
      "unknown destination",
      { source: "cluster0", destination: "nope", sharding: { shardingEntries: [] } },
      /unknown destination/,
    ],
    ["same cluster", { source: "cluster0", destination: "cluster0" }, /both "cluster0"/],
    ["unknown field", { ...RS_TO_SHARDED, force: true }, /unknown field "force"/],
    ["wrong type", { ...RS_TO_SHARDED, reversible: "yes" }, /reversible must be boolean/],
    ["source not a string", { source: 0, destination: "cluster1" }, /source must be string/],
    ["body is an array", [RS_TO_SHARDED], /JSON object/],
    // buildIndexes: "The only value shown is `never`"; facts: `beforeDataCopy` (the default) and `never` ...
    ["buildIndexes value", { ...RS_TO_SHARDED, buildIndexes: "sometimes" }, /buildIndexes must be one of/],
    // Filter entry: "database | string | yes"
    ["filter entry without database", { ...RS_TO_SHARDED, includeNamespaces: [{ collections: ["a"] }] }, /database/],
    [
      "filter collections not strings",
      { ...RS_TO_SHARDED, includeNamespaces: [{ database: "d", collections: [1] }] },
      /collections\/0 must be string/,
    ],
    [
      "collectionsRegex without pattern",
      { ...RS_TO_SHARDED, includeNamespaces: [{ database: "d", collectionsRegex: { options: "i" } }] },
      /pattern/,
    ],
    [
      "bad regex",
      { ...RS_TO_SHARDED, includeNamespaces: [{ database: "d", collectionsRegex: { pattern: "(" } }] },
      /not a valid regular expression/,
    ],
    [
      "bad regex options",
      { ...RS_TO_SHARDED, includeNamespaces: [{ database: "d", collectionsRegex: { pattern: "^a", options: "q" } }] },
      /options/,
    ],
    // facts: "The regex filter fields are `databaseRegex` and **`collectionsRegex`** (plural …). There is no `collectionRegex`."
    [
      "collectionRegex",
      { ...RS_TO_SHARDED, excludeNamespaces: [{ database: "d", collectionRegex: { pattern: "b" } }] },
      /unknown field "collectionRegex"/,
    ],
    [
      "empty include",
      { ...RS_TO_SHARDED, includeNamespaces: [] },
      /includeNamespaces must NOT have fewer than 1 items/,
    ],
    // sharding: "shardingEntries | array of objects | yes"
    ["sharding without entries", { source: "cluster0", destination: "cluster1", sharding: {} }, /shardingEntries/],
    [
      "shard key value",
      {
        source: "cluster0",
        destination: "cluster1",
        sharding: { shardingEntries: [{ database: "d", collection: "c", shardCollection: { key: [{ a: 2 }] } }] },
      },
      /must map to 1 or "hashed"/,
    ],
    [
      "shard key with two fields in one element",
      {
        source: "cluster0",
        destination: "cluster1",
        sharding: { shardingEntries: [{ database: "d", collection: "c", shardCollection: { key: [{ a: 1, b: 1 }] } }] },
      },
      /more than 1 properties/,
    ],
    [
      "duplicate sharding entry",
      {
        source: "cluster0",
        destination: "cluster1",
        sharding: {
          shardingEntries: [1, 2].map(() => ({ database: "d", collection: "c", shardCollection: { key: [{ a: 1 }] } })),
        },
      },
      /listed twice/,
    ],
    // facts: reversible "is not supported: from a replica set to a sharded cluster"
    [
      "reversible rs → sharded",
      { ...RS_TO_SHARDED, reversible: true, enableUserWriteBlocking: true },
      /reversible is not supported from a replica set/,
    ],
    ["enableUserWriteBlocking value", { ...RS_TO_SHARDED, enableUserWriteBlocking: "both" }, /enableUserWriteBlocking/],
    // facts: "`verification: { enabled }` | 1.9": unknown to a 1.8.0 service, refused like any unknown field.
    ["verification on 1.8.0", { ...RS_TO_SHARDED, verification: { enabled: true } }, /unknown field "verification"/],
  ];
  for (const [name, body, why] of cases) {
    it(`refuses: ${name}`, async () => {
      sim = await frozen();
      const a = await post(sim, 0, "start", body);
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.json.success).toBe(false);
      expect(a.json.error).toBe("InvalidRequest");
      expect(a.json.errorDescription).toMatch(why);
      expect((await progress(sim)).progress.state).toBe("IDLE");
    });
  }

  // facts: the start fields table (1.16 knows every one of these fields and values)
  it("accepts the full contract body", async () => {
    sim = await frozen({ serviceVersion: "1.16.0" });
    const body = {
      source: "cluster0",
      destination: "cluster1",
      buildIndexes: "never",
      enableUserWriteBlocking: "destinationOnly",
      includeNamespaces: [
        { database: "sales", collections: ["orders"] },
        { database: "crm", collectionsRegex: { pattern: "^cust", options: "i" } },
        { database: "logs" },
      ],
      excludeNamespaces: [{ databaseRegex: { pattern: "^tmp" } }],
      sharding: {
        createSupportingIndexes: true,
        shardingEntries: [
          { database: "sales", collection: "orders", shardCollection: { key: [{ customerId: 1 }, { _id: "hashed" }] } },
        ],
      },
    };
    expect((await post(sim, 0, "start", body)).json).toEqual({ success: true });
  });

  it("bad JSON, an empty body and a huge body get a JSON error, never a crash", async () => {
    sim = await frozen();
    const url = `${sim.instances[0]!.url}/api/v1/start`;
    expect((await call(url, "POST", "{source:")).json).toMatchObject({ success: false, error: "BadJSON" });
    expect((await call(url, "POST", "")).json).toMatchObject({ success: false, error: "BadJSON" });
    const huge = await call(url, "POST", JSON.stringify({ ...RS_TO_SHARDED, pad: "x".repeat(2 * 2 ** 20) }));
    expect(huge.status).toBe(413);
    expect(huge.json).toMatchObject({ success: false, error: "PayloadTooLarge" });
    expect((await progress(sim)).progress.state).toBe("IDLE");
  });
});

describe("pause, resume, reverse and refused transitions", () => {
  // Progress rule 2: "In state PAUSED, `lagTimeSeconds` is null." facts: pause "only in RUNNING", resume "only in PAUSED".
  it("RUNNING → PAUSED (lag null, the copy stops) → RUNNING", async () => {
    sim = await frozen();
    await post(sim, 0, "start", RS_TO_SHARDED);
    sim.control.advance(8);
    expect((await post(sim, 0, "pause")).json).toEqual({ success: true });
    const p1 = (await progress(sim)).progress;
    expect(p1.state).toBe("PAUSED");
    expect(p1.lagTimeSeconds).toBeNull();
    expect(p1.canCommit).toBe(false);
    sim.control.advance(100);
    const p2 = (await progress(sim)).progress;
    expect(p2.collectionCopy).toEqual(p1.collectionCopy);
    expect((await post(sim, 0, "resume")).json).toEqual({ success: true });
    sim.control.advance(1);
    const p3 = (await progress(sim)).progress;
    expect(p3.state).toBe("RUNNING");
    expect(p3.collectionCopy.estimatedCopiedBytes).toBeGreaterThan(p1.collectionCopy.estimatedCopiedBytes);
  });

  // facts: "`reverse` (only in COMMITTED, only if `start` had `reversible: true`): COMMITTED → REVERSING
  // → RUNNING in the opposite direction (`directionMapping` swaps Source and Destination)."
  it("reverse from COMMITTED for a reversible sync: REVERSING, then RUNNING the other way", async () => {
    sim = await frozen({ clusters: { cluster0: { topology: "replicaSet" }, cluster1: { topology: "replicaSet" } } });
    await toCea(sim, { source: "cluster0", destination: "cluster1", reversible: true, enableUserWriteBlocking: true });
    sim.control.setWrites({ enabled: false });
    await post(sim, 0, "commit");
    sim.control.advance(10);
    expect((await progress(sim)).progress.state).toBe("COMMITTED");
    expect((await post(sim, 0, "reverse")).json).toEqual({ success: true });
    expect((await progress(sim)).progress.state).toBe("REVERSING");
    sim.control.advance(3);
    const p = (await progress(sim)).progress;
    expect(p.state).toBe("RUNNING");
    expect(p.directionMapping).toEqual({
      Source: "cluster1: 127.0.0.1:27018",
      Destination: "cluster0: 127.0.0.1:27017",
    });
    expect(p.info).toBe("change event application");
  });

  // facts: "before 1.20 `reversible` needed it on source and destination"
  it("reversible needs write blocking on both sides (before 1.20)", async () => {
    sim = await frozen({
      serviceVersion: "1.12.0",
      clusters: { cluster0: { topology: "replicaSet" }, cluster1: { topology: "replicaSet" } },
    });
    for (const w of [false, "destinationOnly", undefined]) {
      const a = await post(sim, 0, "start", {
        source: "cluster0",
        destination: "cluster1",
        reversible: true,
        enableUserWriteBlocking: w,
      });
      expect(a.json.errorDescription).toMatch(/reversible requires enableUserWriteBlocking/);
    }
    // facts: "Documented refusals: `start` with `buildIndexes: "never"` and `reversible: true`"
    const b = await post(sim, 0, "start", {
      source: "cluster0",
      destination: "cluster1",
      reversible: true,
      enableUserWriteBlocking: true,
      buildIndexes: "never",
    });
    expect(b.json.errorDescription).toMatch(/buildIndexes "never"/);
  });

  // facts: "`pause` only in RUNNING → PAUSED; `resume` only in PAUSED → RUNNING", and the documented refusals
  // of 1.21 ("`commit` while `canCommit` is false (1.21); `resume` before PAUSED (1.21)")
  it("1.21: every other transition is refused with {success:false, error, errorDescription} and changes nothing", async () => {
    const allowed: Record<string, string[]> = {
      IDLE: ["start"],
      COPY: ["pause"],
      CEA: ["pause", "commit"],
      PAUSED: ["resume"],
      COMMITTING: [],
      COMMITTED: [], // reverse only for a reversible sync, and this one is not
    };
    for (const [name, ok] of Object.entries(allowed)) {
      sim = await frozen({ faults: ["lag-floor=30"], serviceVersion: "1.21.0" });
      sim.control.advance(2); // INITIALIZING
      if (name !== "IDLE") await post(sim, 0, "start", RS_TO_SHARDED);
      if (name === "COPY") sim.control.advance(5);
      if (["CEA", "PAUSED", "COMMITTING", "COMMITTED"].includes(name)) sim.control.advance(50);
      if (name === "PAUSED") await post(sim, 0, "pause");
      sim.control.setWrites({ enabled: false }); // (1.17+: writes during commit fail the migration)
      if (name === "COMMITTING" || name === "COMMITTED") await post(sim, 0, "commit");
      if (name === "COMMITTED") sim.control.advance(40);
      const before = await progress(sim);
      for (const op of ["start", "commit", "pause", "resume", "reverse"]) {
        if (ok.includes(op)) continue;
        const a = await post(sim, 0, op, op === "start" ? RS_TO_SHARDED : {});
        expect(a.json.success, `${op} in ${name}`).toBe(false);
        expect(a.json.error).toBe("InvalidStateTransition");
        expect(a.json.errorDescription).toEqual(expect.any(String));
        expect(await progress(sim), `${op} in ${name}`).toEqual(before);
      }
      await sim.close();
    }
  });

  it("unknown routes answer 404 and wrong methods 405, in JSON", async () => {
    sim = await frozen();
    const u = sim.instances[0]!.url;
    expect((await call(`${u}/api/v1/nope`)).json).toMatchObject({ success: false, error: "NotFound" });
    expect((await call(`${u}/api/v2/progress`)).status).toBe(404);
    const m = await call(`${u}/api/v1/progress`, "POST", {});
    expect(m.status).toBe(405);
    expect(m.json).toMatchObject({ success: false, error: "MethodNotAllowed" });
    expect((await call(`${u}/api/v1/start`, "GET")).status).toBe(405);
    // The verifier's endpoints live on the verifier only.
    expect((await call(`${u}/api/v1/check`, "POST", {})).status).toBe(404);
    expect((await call(`${sim.verifierUrl}/api/v1/start`, "POST", RS_TO_SHARDED)).status).toBe(404);
  });
});
