/** Pure parts of preflight: the documentation's tables, rates, shard connection strings, read-only guard, index support. */
import { describe, expect, it } from "vitest";
import { prefixedBy, supportsShardKey } from "../../src/preflight/checks/indexes.js";
import { assertReadOnly, shardUri } from "../../src/preflight/connect.js";
import {
  PRE_6_0_SOURCE,
  REQUIRED_ROLES,
  effectiveRoles,
  isRapidRelease,
  serverRules,
} from "../../src/preflight/docs.js";
import { syncType } from "../../src/preflight/checks/privileges.js";
import { stepsSending } from "../../src/steps/index.js";
import type { CheckInput } from "../../src/preflight/findings.js";
import { PREFLIGHT_CHECKS } from "../../src/preflight/index.js";
import { parseRate } from "../../src/preflight/units.js";
import type { CollectionFacts, IndexFacts } from "../../src/preflight/types.js";

describe("preflight units", () => {
  it("every check has an id, a severity, a rule, a source and a hint", () => {
    const ids = PREFLIGHT_CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of PREFLIGHT_CHECKS) {
      expect(c.id).toMatch(/^preflight(-[a-z]+)+$/);
      expect(c.spec.length + c.source.length + c.hint.length + c.description.length).toBeGreaterThan(60);
    }
  });

  // service facts, "User permissions, self-managed clusters": the published table
  // (`mongodb/docs-cluster-to-cluster-sync`, source/includes/table-permissions-self-hosted.rst, master), row for row
  it("the roles by sync type are the published table, row for row", () => {
    const sorted = (roles: string[]) => [...roles].sort();
    expect(REQUIRED_ROLES).toEqual({
      default: {
        source: ["backup", "clusterMonitor", "readAnyDatabase"],
        destination: ["clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
      },
      "write-blocking": {
        source: ["backup", "clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
        destination: ["clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
      },
      reversing: {
        source: ["backup", "clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"],
        destination: [
          "backup",
          "clusterManager",
          "clusterMonitor",
          "dbAdminAnyDatabase",
          "readWriteAnyDatabase",
          "restore",
        ],
      },
      "multiple-reversals": {
        source: ["backup", "clusterManager", "clusterMonitor", "dbAdminAnyDatabase", "readWriteAnyDatabase", "restore"],
        destination: [
          "backup",
          "clusterManager",
          "clusterMonitor",
          "dbAdminAnyDatabase",
          "readWriteAnyDatabase",
          "restore",
        ],
      },
    });
    // the table keeps its roles in alphabetic order ("Keep roles in alphabetic order", the table's own comment)
    for (const row of Object.values(REQUIRED_ROLES))
      for (const side of [row.source, row.destination]) expect(side).toEqual(sorted(side));
    // facts: "reverse also needs the `restore` role"
    expect(REQUIRED_ROLES.reversing.source).toContain("restore");
    expect(REQUIRED_ROLES.reversing.destination).toContain("restore");
    // facts: "A 5.0 source needs `clusterManager` as well"
    expect(PRE_6_0_SOURCE).toEqual({ belowServer: "6.0", role: "clusterManager" });
  });

  // facts: "From 1.20 the service manages write blocking on both sides from its own configuration … which
  // configuration is not published"; Not published: "assume source writes are **not** blocked" — and preflight asks
  // for the roles of a sync with write blocking, the larger set
  it("which row applies: write blocking from the start body before 1.20, always from 1.20; reversing first", () => {
    const input = (serviceVersion: string | undefined, body: object): CheckInput =>
      ({
        runbook: serviceVersion === undefined ? {} : { serviceVersion },
        start: { body: { source: "cluster0", destination: "cluster1", ...body } },
      }) as unknown as CheckInput;
    expect(syncType(input("1.19.0", {}))).toBe("default");
    expect(syncType(input(undefined, {}))).toBe("default");
    expect(syncType(input("1.19.0", { enableUserWriteBlocking: true }))).toBe("write-blocking");
    expect(syncType(input("1.19.0", { enableUserWriteBlocking: "sourceAndDestination" }))).toBe("write-blocking");
    expect(syncType(input("1.19.0", { enableUserWriteBlocking: "destinationOnly" }))).toBe("default");
    expect(syncType(input("1.20.0", {}))).toBe("write-blocking");
    expect(syncType(input("1.22.0", {}))).toBe("write-blocking");
    expect(syncType(input("1.22.0", { reversible: true }))).toBe("reversing");
    expect(syncType(input("1.19.0", { reversible: true, enableUserWriteBlocking: true }))).toBe("reversing");
    // the table's "Multiple Reversals": a runbook that reverses more than once
    const steps = (n: number) => Array.from({ length: n }, () => ({ reverse: {} }));
    const reversing = (n: number): CheckInput =>
      ({
        runbook: { serviceVersion: "1.22.0", steps: [{ start: {} }, ...steps(n)] },
        start: { body: { source: "cluster0", destination: "cluster1", reversible: true } },
        reverses: stepsSending({ steps: [{ start: {} }, ...steps(n)] } as never, "reverse"),
      }) as unknown as CheckInput;
    expect([0, 1, 2, 3].map((n) => syncType(reversing(n)))).toEqual([
      "reversing",
      "reversing",
      "multiple-reversals",
      "multiple-reversals",
    ]);
  });

  it("copy rates", () => {
    expect(parseRate("50MB/s")).toBe(50e6);
    expect(parseRate("1GiB/h")).toBeCloseTo(1024 ** 3 / 3600);
    expect(parseRate(1000)).toBe(1000);
    expect(parseRate("fast")).toBeUndefined();
    expect(parseRate(0)).toBeUndefined();
  });

  it("server rules by service version; rapid releases", () => {
    expect(serverRules("1.8.0").sources).toEqual(["6.0", "7.0"]);
    expect(serverRules("1.20.1").destinations).toEqual(["7.0", "8.0"]);
    // facts: "1.19 dropped sources on 4.4 and destinations on 6.0 [notes 1.19]"
    expect([serverRules("1.18.2").sources, serverRules("1.18.2").destinations]).toEqual([
      ["4.4", "5.0", "6.0", "7.0", "8.0"],
      ["6.0", "7.0", "8.0"],
    ]);
    expect([serverRules("1.19.0").sources, serverRules("1.19.0").destinations]).toEqual([
      ["5.0", "6.0", "7.0", "8.0"],
      ["7.0", "8.0"],
    ]);
    expect(serverRules(undefined).minPatch["8.0"]).toBe("8.0.5");
    expect([isRapidRelease("8.2.1"), isRapidRelease("7.0.20"), isRapidRelease("4.4.29")]).toEqual([true, false, false]);
    expect([...effectiveRoles([{ role: "root", db: "admin" }])]).toEqual(
      expect.arrayContaining(["clusterManager", "backup"]),
    );
    expect(effectiveRoles([{ role: "root", db: "sales" }]).size).toBe(0);
  });

  it("a shard's connection string keeps the user and options, takes the shard's hosts and set", () => {
    expect(
      shardUri("mongodb://u:p%40ss@mongos1:27017,mongos2:27017/admin?tls=true&replicaSet=x", "shA/h1:27018,h2:27018"),
    ).toBe("mongodb://u:p%40ss@h1:27018,h2:27018/admin?tls=true&replicaSet=shA");
    expect(shardUri("mongodb+srv://u:p@cluster.example.net/", "shB/h3:27018")).toBe(
      "mongodb://u:p@h3:27018/?tls=true&authSource=admin&replicaSet=shB",
    );
  });

  it("the read-only guard refuses writes and writing aggregations before they are sent", () => {
    expect(() => assertReadOnly({ insert: "x", documents: [] })).toThrow(/not a read command/);
    expect(() => assertReadOnly({ aggregate: "x", pipeline: [{ $collStats: {} }, { $out: "y" }], cursor: {} })).toThrow(
      /\$out/,
    );
    expect(() =>
      assertReadOnly({ aggregate: "x", pipeline: [{ $collStats: { storageStats: {} } }], cursor: {} }),
    ).not.toThrow();
    expect(() => assertReadOnly({ balancerStop: 1 })).toThrow();
  });

  it("shard key support: a prefix, not sparse or partial, simple collation when the collection's is not", () => {
    const ix = (key: IndexFacts["key"], more: Partial<IndexFacts> = {}): IndexFacts => ({
      name: "i",
      key,
      unique: false,
      sparse: false,
      partial: false,
      hidden: false,
      collation: "simple",
      ...more,
    });
    const coll = (collation = "simple"): CollectionFacts => ({
      name: "c",
      type: "collection",
      capped: false,
      clusteredTtl: false,
      encrypted: false,
      collation,
    });
    expect(
      prefixedBy(
        [
          ["a", 1],
          ["b", 1],
        ],
        [["a", 1]],
      ),
    ).toBe(true);
    expect(
      prefixedBy(
        [
          ["b", 1],
          ["a", 1],
        ],
        [["a", 1]],
      ),
    ).toBe(false);
    expect(prefixedBy([["a", 1]], [["a", "hashed"]])).toBe(false);
    expect(supportsShardKey(ix([["a", 1]], { sparse: true }), [["a", 1]], coll())).toBe(false);
    expect(supportsShardKey(ix([["a", 1]], { collation: "fr" }), [["a", 1]], coll("fr"))).toBe(false);
    expect(supportsShardKey(ix([["a", 1]]), [["a", 1]], coll("fr"))).toBe(true);
  });
});
