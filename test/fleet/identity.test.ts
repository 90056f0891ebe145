/**
 * Fleet identity on hand-built snapshots. facts: "`mongosyncID` and `coordinatorID` (strings):
 * this instance and the coordinator (1.3)."; spec: "directionMapping.Source | string | Source
 * cluster, in the form `<cluster_name>: <host>:<port>`."
 */
import { describe, expect, it } from "vitest";
import { clusterName, createFleet, identityProblems } from "../../src/fleet/index.js";
import { down, idle, running, snap } from "../support/snapshots.js";

describe("identity", () => {
  it("a consistent fleet has no problem", () => {
    expect(
      identityProblems(snap([running(0), running(1), running(2)]), {
        clusters: ["cluster0", "cluster1"],
        source: "cluster0",
        destination: "cluster1",
      }),
    ).toEqual([]);
  });

  // "In state IDLE, all fields except `state` and `canCommit` are null."
  it("IDLE instances, old versions without ids and dead instances are not judged", () => {
    const { mongosyncID: _a, coordinatorID: _b, ...old } = running(1);
    expect(identityProblems(snap([idle(), idle()]), { clusters: ["cluster0"] })).toEqual([]);
    expect(identityProblems(snap([running(0), old, down(2)]))).toEqual([]);
  });

  it("two instances with one mongosyncID: the URL is listed twice", () => {
    const s = snap([running(0), running(1), running(1)], true);
    expect(identityProblems(s)).toEqual([
      {
        instance: s.instances[2]!.ref,
        message:
          's2 (http://127.0.0.1:27184) reports mongosyncID "id-1", the same as s1 (http://127.0.0.1:27183): is one instance listed twice?',
      },
    ]);
  });

  it("an instance with another coordinatorID belongs to another fleet", () => {
    const s = snap([running(0), running(1), running(2, { coordinatorID: "other-0" })]);
    expect(identityProblems(s)).toEqual([
      {
        instance: s.instances[2]!.ref,
        message:
          'http://127.0.0.1:27184 reports coordinatorID "other-0"; 2 other instances report "id-0": is it an instance of another fleet?',
      },
    ]);
  });

  it("a read of only some instances (the first process, for canWrite) cannot tell where the coordinator is", () => {
    // the first process alone, the coordinator being another of the fleet's 64 (src/steps/kit/wait.ts)
    const first = snap([running(0, { coordinatorID: "id-5" })]);
    expect(identityProblems(first, { fleetSize: 64 })).toEqual([]);
    // the same answer as the whole fleet: the coordinator is none of the runbook's instances
    expect(identityProblems(first, { fleetSize: 1 })).toHaveLength(1);
    expect(identityProblems(first)).toHaveLength(1);
    // the fleet's own check knows its size
    const fleet = createFleet({
      instances: [{ url: "http://127.0.0.1:9" }, { url: "http://127.0.0.1:10" }],
      requestTimeoutMs: 1000,
    });
    expect(fleet.identity(first)).toEqual([]);
    expect(
      fleet.identity(snap([running(0, { coordinatorID: "id-5" }), running(1, { coordinatorID: "id-5" })])),
    ).toHaveLength(1);
    void fleet.close();
  });

  it("no instance is the coordinator: an instance is missing from the runbook", () => {
    const s = snap([running(1, { coordinatorID: "id-9" }), running(2, { coordinatorID: "id-9" })]);
    expect(identityProblems(s)).toEqual([
      {
        instance: undefined,
        message:
          'no instance of the runbook is the coordinator "id-9" (instances report "id-1", "id-2"): is an instance missing from the runbook?',
      },
    ]);
    // undecidable while an instance does not answer: it may be the coordinator
    expect(identityProblems(snap([down(0), running(1, { coordinatorID: "id-0" })]))).toEqual([]);
  });

  it("a different directionMapping names the instance and both directions", () => {
    const s = snap(
      [
        running(0),
        running(1),
        running(2, { directionMapping: { Source: "cluster1: mongos:27017", Destination: "cluster0: rs0/a:27017" } }),
      ],
      true,
    );
    expect(identityProblems(s)).toEqual([
      {
        instance: s.instances[2]!.ref,
        message:
          "s2 syncs cluster1: mongos:27017 → cluster0: rs0/a:27017; 2 other instances report cluster0: rs0/a:27017 → cluster1: mongos:27017",
      },
    ]);
  });

  it("both sides of directionMapping must be clusters the runbook names; source and destination when given", () => {
    const s = snap([running(0), running(1)]);
    expect(identityProblems(s, { clusters: ["cluster0", "cluster1", "cluster2"] })).toEqual([]);
    expect(identityProblems(s, { clusters: ["cluster0", "clusterX"] }).map((p) => p.message)).toEqual([
      'the fleet syncs cluster0: rs0/a:27017 → cluster1: mongos:27017: destination cluster "cluster1" is not one the runbook names ("cluster0", "clusterX")',
    ]);
    // after a reverse the direction swaps (facts): a runbook that expects it says so
    expect(identityProblems(s, { source: "cluster1", destination: "cluster0" }).map((p) => p.message)).toEqual([
      'expected source cluster "cluster1", but the fleet syncs cluster0: rs0/a:27017 → cluster1: mongos:27017',
      'expected destination cluster "cluster0", but the fleet syncs cluster0: rs0/a:27017 → cluster1: mongos:27017',
    ]);
  });

  it("secrets in directionMapping values are redacted", () => {
    const s = snap([
      running(0),
      running(1, { directionMapping: { Source: "cluster0: mongodb://u:secret@h:1", Destination: "cluster1: b:2" } }),
    ]);
    const text = JSON.stringify(identityProblems(s));
    expect(text).not.toContain("secret");
    expect(text).toContain("mongodb://***@h:1");
  });

  it("clusterName reads `<cluster_name>: <host>:<port>`", () => {
    expect(clusterName("cluster0: localhost:27017")).toBe("cluster0");
    expect(clusterName("cluster1")).toBe("cluster1");
    // the name before the first ": ", trimmed; an empty name stays empty (not the host)
    expect(clusterName(" cluster0 : localhost:27017")).toBe("cluster0");
    expect(clusterName(": localhost:27017")).toBe("");
  });

  // The rules below decide whether commands are refused (fleet-identity): each is pinned on its own.
  it("the fleet is the largest group: a lone instance with another coordinator is the odd one, wherever it is listed", () => {
    const s = snap([running(0, { coordinatorID: "other-0" }), running(1), running(2)]);
    const p = identityProblems(s);
    expect(p.map((x) => x.instance)).toEqual([s.instances[0]!.ref]);
    expect(p[0]!.message).toContain('2 other instances report "id-0"');
  });

  it("two instances, two coordinators: each says the one other instance reports another", () => {
    const s = snap([running(1, { coordinatorID: "id-1" }), running(2, { coordinatorID: "id-2" })]);
    expect(identityProblems(s).map((x) => x.message)).toEqual([
      'http://127.0.0.1:27183 reports coordinatorID "id-2"; 1 other instance reports "id-1": is it an instance of another fleet?',
    ]);
  });

  it("with two coordinators the missing-coordinator rule is not judged (the fleet is already split)", () => {
    const s = snap([
      running(0, { coordinatorID: "id-9" }),
      running(1, { coordinatorID: "id-9" }),
      running(2, { coordinatorID: "id-8" }),
    ]);
    const p = identityProblems(s);
    expect(p).toHaveLength(1);
    expect(p[0]!.instance).toBe(s.instances[2]!.ref);
  });

  // spec: "directionMapping.Source | string"; an answer with one side missing is not a direction
  it("a directionMapping without a string Source or Destination is not judged", () => {
    const noSource = running(1, { directionMapping: { Destination: "cluster1: b:2" } });
    const noDest = running(2, { directionMapping: { Source: "cluster9: a:1" } });
    expect(identityProblems(snap([running(0), noSource, noDest]), { clusters: ["cluster0", "cluster1"] })).toEqual([]);
    expect(identityProblems(snap([running(0), noDest]), { clusters: ["cluster0", "cluster1"] })).toEqual([]);
  });

  it("an empty list of the runbook's clusters names none to check against", () => {
    expect(identityProblems(snap([running(0), running(1)]), { clusters: [] })).toEqual([]);
  });
});
