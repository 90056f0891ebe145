/**
 * Issue 38, point 3: why an instance is not ready to commit, per cause, and when it will be, from
 * the trend (src/model/readiness.ts): every cause the progress answer can show, enumerated; the
 * ETA from the lag's fall and the copy's rate; "not converging" where the lag does not fall or the
 * copy stalls; the latest of several estimates; ready only with canCommit true.
 */
import { describe, expect, it } from "vitest";
import type { CopyView } from "../../src/fleet/eta.js";
import type { ModelInstance } from "../../src/model/contract.js";
import { lagRate } from "../../src/model/fold.js";
import {
  CEA_DRAIN,
  EARLIER_COMMIT_SENT,
  pastTheCommit,
  urlsAt,
  readiness,
  readinessKey,
  readinessLine,
} from "../../src/model/readiness.js";
import { loadRunbook } from "../../src/runbook/load.js";
import { readinessPlan } from "../../src/steps/index.js";

const base: ModelInstance = {
  index: 0,
  label: "sync0",
  url: "http://a",
  state: "RUNNING",
  canCommit: true,
  lagSeconds: 1,
};
const inst = (o: Partial<ModelInstance>): ModelInstance => ({ ...base, ...o });
const copy = (o: Partial<CopyView>): CopyView => ({
  started: true,
  done: false,
  copied: 0,
  total: 100,
  eta: "…",
  ...o,
});

describe("readiness: why not ready, and when", () => {
  it("ready: canCommit true, nothing holding it back (a warning is said, and does not hold it)", () => {
    expect(readiness(base)).toEqual({ instance: "sync0", ready: true, reasons: [] });
    const w = readiness(inst({ warnings: ["oplog window small"] }));
    expect(w.ready).toBe(true);
    expect(readinessLine(w)).toBe("ready (service warning: oplog window small)");
  });

  it("names each cause progress shows", () => {
    const cases: [Partial<ModelInstance>, RegExp][] = [
      [{ state: "IDLE", canCommit: false }, /^state IDLE \(a commit needs RUNNING\)$/],
      [{ state: "PAUSED", canCommit: false }, /^state PAUSED/],
      [{ state: undefined, canCommit: undefined }, /^no progress answer yet$/],
      [{ down: { since: 0, error: "connection refused" } }, /^not answering for 5s: connection refused$/],
      [{ info: "collection copy", canCommit: false }, /^collection copy not done$/],
      [
        { indexBuilding: { indexesBuilt: 3, totalIndexesToBuild: 10 }, canCommit: false },
        /^index builds: 3 of 10 indexes built$/,
      ],
      [
        { embedded: { source: { phase: "initial hashing" } }, canCommit: false },
        /^embedded verifier \(source\): initial hashing, not yet stream hashing$/,
      ],
      [
        { embedded: { destination: { phase: "stream hashing", lagSeconds: 45 } }, canCommit: false },
        /^embedded verifier \(destination\) lag 45s, over the service's 30s limit$/,
      ],
      [{ lagSeconds: 45, canCommit: false }, /^lag 45s, not below the service's 30s limit \(trend not known yet\)$/],
      [{ canCommit: false }, /^canCommit false \(progress says no more\)$/],
    ];
    for (const [o, re] of cases) {
      const r = readiness(inst(o), { now: 5000 });
      expect(r.ready, JSON.stringify(o)).toBe(false);
      expect(r.reasons[0], JSON.stringify(o)).toMatch(re);
    }
  });

  it("a start that turned the embedded verifier off: its phases, never leaving 'not started', hold nothing back", () => {
    const off = inst({ embedded: { source: { phase: "not started" }, destination: { phase: "not started" } } });
    expect(readiness(off).ready, "with the verifier on, not started holds the commit").toBe(false);
    expect(readiness(off, { embeddedVerifierOff: true })).toEqual({ instance: "sync0", ready: true, reasons: [] });
    // off is no licence: the service's own canCommit still decides
    expect(readiness({ ...off, canCommit: false }, { embeddedVerifierOff: true }).ready).toBe(false);
  });

  it("measures lag against the runbook's lagBelow when there is one", () => {
    const r = readiness(inst({ lagSeconds: 12, lagRate: -2, canCommit: true }), { lagBelowSeconds: 5 });
    expect(r.ready).toBe(false);
    expect(r.reasons).toEqual(["lag 12s, not below the runbook's lagBelow 5s (falling 2s per second)"]);
    // (12 - 5) / 2 = 3.5 s
    expect(r.eta).toBe("about 3.5s");
    expect(readiness(inst({ lagSeconds: 4 }), { lagBelowSeconds: 5 }).ready).toBe(true);
  });

  it("says 'not converging' when the lag is steady or rising, or the copy stalls", () => {
    expect(readiness(inst({ lagSeconds: 40, lagRate: 0, canCommit: false })).eta).toBe("not converging");
    const rising = readiness(inst({ lagSeconds: 40, lagRate: 0.5, canCommit: false }));
    expect(rising.eta).toBe("not converging");
    expect(rising.reasons[0]).toMatch(/rising 0\.5s per second/);
    const stalled = readiness(inst({ info: "collection copy", canCommit: false }), {
      copy: copy({ fraction: 0.4, eta: "stalled" }),
    });
    expect(stalled.reasons[0]).toBe("collection copy not done: 40% of the fleet's copy");
    expect(stalled.eta).toBe("not converging");
  });

  // 1.22's ceaStage (mongodb/docs content/mongosync/current/source/release-notes/1.22.txt, 42e877ed:
  // "whether Change Event Application (CEA) is still draining the backlog of change events that
  // accumulated during collection copy"; the values from service-facts.md's progress table)
  it("while change event application drains the copy's backlog (ceaStage), a lag that does not fall is not 'not converging'", () => {
    for (const lagRate of [0, 0.5, 3]) {
      const drain = readiness(inst({ lagSeconds: 120, lagRate, canCommit: false, ceaStage: "collection copy drain" }));
      expect(drain.ready).toBe(false);
      expect(drain.eta).toBe("unknown");
      expect(drain.reasons[0]).toMatch(
        /^lag 2m 00s, not below the service's 30s limit \((steady|rising [\d.]+s per second); still draining the collection copy's backlog \(ceaStage\), where a lag that does not fall is expected\)$/,
      );
      expect(readinessLine(drain)).toMatch(/^not ready \(ETA unknown\): lag 2m 00s/);
      // the same answer in steady state, or without the field (before 1.22), or another value: not converging
      for (const ceaStage of ["steady state", undefined, "Collection Copy Drain"]) {
        const r = readiness(inst({ lagSeconds: 120, lagRate, canCommit: false, ...(ceaStage ? { ceaStage } : {}) }));
        expect(r.eta).toBe("not converging");
        expect(r.reasons[0]).not.toMatch(/draining/);
      }
    }
    // a lag that falls while draining: the ETA from its fall, said with the drain
    const falling = readiness(
      inst({ lagSeconds: 40, lagRate: -2, canCommit: false, ceaStage: "collection copy drain" }),
      { lagBelowSeconds: 5 },
    );
    expect(falling.eta).toBe("about 18s"); // (40 - 5) / 2 = 17.5 s, rounded
    expect(falling.reasons[0]).toMatch(/\(falling 2s per second; still draining/);
    // a lag under every limit while draining: nothing said of the drain
    expect(readiness(inst({ lagSeconds: 1, ceaStage: "collection copy drain" })).ready).toBe(true);
  });

  it("the ETA is the latest of the estimates, and unknown when any part is", () => {
    const both = readiness(inst({ info: "collection copy", lagSeconds: 40, lagRate: -1, canCommit: false }), {
      copy: copy({ fraction: 0.5, etaMs: 60_000, eta: "1m" }),
    });
    expect(both.eta).toBe("about 1m 00s"); // the copy's 60 s, later than the lag's 10 s
    const unknown = readiness(inst({ info: "collection copy", canCommit: false }), {
      copy: copy({ fraction: 0.1, eta: "…" }),
    });
    expect(unknown.eta).toBe("unknown");
    expect(readinessLine(unknown)).toMatch(/^not ready \(ETA unknown\): collection copy not done/);
  });

  it("past readiness (COMMITTING, COMMITTED) is not 'not ready'", () => {
    expect(readiness(inst({ state: "COMMITTED", canCommit: false })).ready).toBe(true);
    expect(readiness(inst({ state: "COMMITTING", canCommit: false })).reasons).toEqual([]);
    // said as past it, never as "ready to commit: yes" (the watch page's table after the commit)
    expect(readinessLine(readiness(inst({ state: "COMMITTED", canCommit: false })))).toBe("past it: COMMITTED");
    expect(readiness(inst({ state: "RUNNING", canCommit: true })).past).toBeUndefined();
  });
});

describe("readinessKey: what a line renderer compares to print readiness only when it changes", () => {
  const key = (o: Partial<ModelInstance>, c?: CopyView) =>
    readinessKey(readiness(inst(o), { lagBelowSeconds: 5, ...(c ? { copy: c } : {}) }));
  const held = { canCommit: false, lagSeconds: 45, lagRate: -1 };

  it("moving figures, the lag's trend (nested brackets too) and the ETA are no change", () => {
    for (const other of [
      { ...held, lagSeconds: 44 },
      { ...held, lagSeconds: 65 }, // 1m 05s: a duration in two words
      { ...held, lagRate: 2 }, // rising, not converging
      { ...held, lagRate: undefined },
      { ...held, ceaStage: CEA_DRAIN }, // "(…; still draining … (ceaStage), …)"
    ])
      expect(key(other)).toBe(key(held));
    expect(key({ ...held, info: "collection copy" }, copy({ fraction: 0.3 }))).toBe(
      key({ ...held, info: "collection copy" }, copy({ fraction: 0.31 })),
    );
  });

  it("a verdict, a new cause, a cause gone, another instance, another side are each a change", () => {
    const keys = [
      key(held),
      key({ canCommit: true, lagSeconds: 1 }),
      key({ ...held, embedded: { source: { phase: "initial hashing" } } }),
      key({ ...held, embedded: { destination: { phase: "initial hashing" } } }),
      key({ ...held, lagSeconds: 1 }),
      key({ ...held, state: "PAUSED" }),
      readinessKey(readiness({ ...inst(held), label: "sync1" }, { lagBelowSeconds: 5 })),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("lagRate: the lag's change per second over its last answers", () => {
  it("is the first-to-last slope, and unknown over less than a second", () => {
    expect(
      lagRate([
        { at: 0, lag: 10 },
        { at: 2000, lag: 6 },
      ]),
    ).toBe(-2);
    expect(
      lagRate([
        { at: 0, lag: 10 },
        { at: 500, lag: 6 },
      ]),
    ).toBeUndefined();
    expect(lagRate([{ at: 0, lag: 10 }])).toBeUndefined();
    expect(lagRate([])).toBeUndefined();
  });
});

describe("readinessPlan: what readiness needs from the runbook (status and watch read it)", () => {
  it("the shipped sharded example turns the embedded verifier off and waits for lagBelow 3 before its commit", async () => {
    const { runbook } = await loadRunbook(new URL("../../runbooks/sharded-to-sharded.yaml", import.meta.url).pathname);
    expect(readinessPlan(runbook!)).toEqual({ lagBelowSeconds: 3, embeddedVerifierOff: true });
  });
  it("the replica-set example leaves it on (the default)", async () => {
    const { runbook } = await loadRunbook(new URL("../../runbooks/rs-to-sharded.yaml", import.meta.url).pathname);
    expect(readinessPlan(runbook!).embeddedVerifierOff).toBeUndefined();
  });
});

describe("pastTheCommit", () => {
  it("an instance the journal shows the commit sent to is past the question, whatever an earlier read said; the others as they were", () => {
    const rs = [
      { instance: "sync0", ready: true, reasons: [] },
      { instance: "sync1", ready: false, reasons: ["lag 9s"], eta: "unknown" },
      { instance: "sync2", ready: true, reasons: [], past: "COMMITTED" },
    ];
    expect(pastTheCommit(rs, new Set(["sync0", "sync2"]))).toEqual([
      { instance: "sync0", ready: true, reasons: [], past: "commit sent" },
      { instance: "sync1", ready: false, reasons: ["lag 9s"], eta: "unknown" },
      { instance: "sync2", ready: true, reasons: [], past: "COMMITTED" },
    ]);
    expect(readinessLine(pastTheCommit(rs, new Set(["sync0"]))[0]!)).toBe("past it: commit sent");
  });
  it("an instance an earlier cutover's commit may have reached is past it too (it holds that commit, RUNNING); this cutover's own commit is said first", () => {
    const rs = [
      { instance: "sync0", ready: true, reasons: [] },
      { instance: "sync1", ready: true, reasons: [] },
      { instance: "sync2", ready: true, reasons: [] },
      { instance: "sync3", ready: true, reasons: [], past: "COMMITTED" },
    ];
    const out = pastTheCommit(rs, new Set(["sync1"]), new Set(["sync0", "sync1", "sync3"]));
    expect(out.map((r) => r.past)).toEqual([EARLIER_COMMIT_SENT, "commit sent", undefined, "COMMITTED"]);
    expect(readinessLine(out[0]!)).toBe("past it: an earlier cutover's commit sent");
    expect(out[2]).toEqual(rs[2]);
  });
});

describe("urlsAt", () => {
  it("finds instances by the service their URL names, whatever they are called now", () => {
    const now = [
      { label: "shard-a", url: "http://10.0.0.1:27182" },
      { label: "http://127.0.0.1:27183", url: "http://127.0.0.1:27183" },
      { label: "shard-c", url: "http://10.0.0.3:27182" },
    ];
    // renamed since (sync0 → shard-a), another spelling of one loopback service, and one not reached
    expect([...urlsAt(["HTTP://10.0.0.1:27182/", "http://localhost:27183"], now)]).toEqual([
      "shard-a",
      "http://127.0.0.1:27183",
    ]);
    expect(urlsAt([], now).size).toBe(0);
    // a URL the journal redacted (a secret in it) names no service of these: nothing marked
    expect(urlsAt(["http://***:27182"], now).size).toBe(0);
  });
});
