/**
 * Preflight with the real driver against the wire-level test server (test/support/mongo-wire):
 * one fixture per check, on a replica set and on a sharded cluster through mongos. Every test
 * also asserts that nothing but reads reached the servers.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/diagnostics.js";
import { runPreflight, type PreflightResult } from "../../src/preflight/index.js";
import {
  startFakeCluster,
  startShardedCluster,
  type FakeCluster,
  type FakeNode,
} from "../support/mongo-wire/fake-cluster.js";
import {
  ALLOWED_ON_THE_WIRE,
  DEST_ROLES,
  PASSWORD,
  SOURCE_ROLES,
  USER,
  loadText,
  runbookText,
  user,
  type RunbookShape,
} from "../support/preflight.js";
import { firstStartRequest, stepsSending } from "../../src/steps/index.js";

const DAY = 86_400;
const open: { close(): Promise<void> }[] = [];
const servers: FakeCluster[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  // read-only: every command any server received is a read, the handshake or auth
  for (const s of servers.splice(0)) expect(s.commands.filter((c) => !ALLOWED_ON_THE_WIRE.has(c))).toEqual([]);
});

async function rs(node: Partial<FakeNode>): Promise<FakeCluster> {
  const s = await startFakeCluster({ kind: "replicaSet", ...node });
  open.push(s);
  servers.push(s);
  return s;
}

async function sharded(
  mongos: Partial<FakeNode>,
  shards: { id: string; node?: Partial<FakeNode> }[] = [{ id: "shA" }, { id: "shB" }],
): Promise<FakeCluster> {
  const c = await startShardedCluster(
    mongos,
    shards.map((s) => ({ id: s.id, node: s.node ?? { oplog: { first: 0, last: 7 * DAY } } })),
  );
  open.push(c);
  servers.push(c.mongos, ...c.shards);
  return c.mongos;
}

const SALES = { sales: { orders: { count: 1000, size: 1e6, indexes: [{ name: "cust_1", key: { customerId: 1 } }] } } };
const good = {
  source: (more: Partial<FakeNode> = {}): Partial<FakeNode> => ({
    users: user(SOURCE_ROLES),
    databases: SALES,
    oplog: { first: 0, last: 7 * DAY },
    ...more,
  }),
  dest: (more: Partial<FakeNode> = {}): Partial<FakeNode> => ({ users: user(DEST_ROLES), ...more }),
};

async function preflight(
  src: FakeCluster,
  dst: FakeCluster,
  shape: RunbookShape = {},
  auth = { user: USER, password: PASSWORD },
): Promise<PreflightResult> {
  const loaded = await loadText(runbookText(shape), {
    SOURCE_URI: src.uri(auth),
    DEST_URI: dst.uri(auth),
  });
  return runPreflight(loaded, {
    start: firstStartRequest(loaded.runbook),
    reverses: stepsSending(loaded.runbook, "reverse"),
    connectTimeoutMs: 3000,
  });
}

const problems = (r: PreflightResult): string[] =>
  r.diagnostics.filter((d) => d.severity !== "info").map((d) => `${d.rule}@${d.line}`);
const only = (r: PreflightResult, rule: string): Diagnostic[] => r.diagnostics.filter((d) => d.rule === rule);

describe("a replica set to a replica set", () => {
  it("clean clusters: no problem, a summary per cluster, the namespace set with sizes", async () => {
    const r = await preflight(await rs(good.source()), await rs(good.dest()));
    expect(problems(r)).toEqual([]);
    expect(only(r, "preflight-cluster").map((d) => d.message)).toEqual([
      expect.stringContaining("`cluster0` (source): replica set `rs0` (1 member), server 7.0.20 (FCV 7.0)"),
      expect.stringContaining("`cluster1` (destination): replica set `rs0`"),
    ]);
    expect(r.namespaces).toMatchObject({
      format: 1,
      source: "cluster0",
      destination: "cluster1",
      complete: true,
      totals: { collections: 1, documents: 1000, bytes: 1e6 },
      namespaces: [{ database: "sales", collection: "orders", type: "collection", documents: 1000, bytes: 1e6 }],
    });
  });

  it("preflight-topology: a replica set declared sharded, and a standalone", async () => {
    const r = await preflight(await rs(good.source()), await rs(good.dest()), {
      destination: "sharded",
      start: "sharding: { shardingEntries: [] }",
    });
    expect(problems(r)).toContain("preflight-topology@6");
    expect(only(r, "preflight-topology")[0]?.message).toMatch(/declared a sharded cluster.*is a replica set/);
    const alone = await startFakeCluster({ kind: "standalone", ...good.dest() });
    open.push(alone);
    servers.push(alone);
    const r2 = await preflight(await rs(good.source()), alone);
    expect(only(r2, "preflight-topology")[0]?.message).toMatch(/standalone server/);
  });

  it("preflight-server-version, preflight-declared-version and preflight-fcv", async () => {
    const r = await preflight(
      await rs(good.source({ version: "6.0.10", fcv: "5.0" })),
      await rs(good.dest({ version: "8.2.1" })),
      { clusters: { cluster0: ', serverVersion: "7.0"' } },
    );
    expect(problems(r).sort()).toEqual([
      "preflight-declared-version@5",
      "preflight-fcv@5",
      "preflight-server-version@13",
      "preflight-server-version@5",
      "preflight-server-version@6",
    ]);
    expect(only(r, "preflight-server-version").map((d) => d.message)).toEqual([
      expect.stringContaining("below the minimum patch release 6.0.24"),
      expect.stringContaining("8.2.1, a rapid or minor release"),
      "Service 1.17.0 cannot sync a 6.0 source (`cluster0`) to a 8.2 destination (`cluster1`); from 6.0 it syncs to 6.0, 7.0, 8.0.",
    ]);
  });

  it("a pair the service version cannot sync (7.0 → 6.0)", async () => {
    const r = await preflight(await rs(good.source()), await rs(good.dest({ version: "6.0.24" })));
    expect(only(r, "preflight-server-version")[0]?.message).toMatch(
      /cannot sync a 7\.0 source .* to a 6\.0 destination/,
    );
  });

  it("preflight-namespace-missing and preflight-filter-matches-nothing: typos in filters and sharding entries", async () => {
    const r = await preflight(await rs(good.source()), await rs(good.dest()), {
      start: `includeNamespaces:
  - { database: sales, collections: [orders, Orders] }
  - { database: sales, collectionsRegex: { pattern: "^cust" } }
  - { databaseRegex: { pattern: "^crm" } }
excludeNamespaces: [{ database: salse }]`,
    });
    expect(problems(r)).toEqual([
      "preflight-namespace-missing@15",
      "preflight-filter-matches-nothing@16",
      "preflight-filter-matches-nothing@17",
      "preflight-namespace-missing@18",
    ]);
    expect(only(r, "preflight-namespace-missing")[0]?.message).toContain(
      "`sales.Orders` (includeNamespaces) does not exist",
    );
  });

  it("preflight-nothing-synced: an exclude that leaves nothing", async () => {
    const r = await preflight(await rs(good.source()), await rs(good.dest()), {
      start: "excludeNamespaces: [{ database: sales }]",
    });
    expect(problems(r)).toEqual(["preflight-nothing-synced@11"]);
  });

  it("preflight-destination-not-empty, preflight-destination-data, preflight-leftover-sync-state; preExistingDestinationData per version", async () => {
    const dest = await rs(
      good.dest({
        databases: { sales: { orders: {} }, other: { things: {} }, __mdb_internal_mongosync: { state: {} } },
      }),
    );
    const r = await preflight(await rs(good.source()), dest);
    expect(problems(r)).toEqual([
      "preflight-destination-data@6",
      "preflight-destination-not-empty@6",
      "preflight-leftover-sync-state@6",
    ]);
    expect(only(r, "preflight-destination-not-empty")[0]?.message).toContain("`sales.orders`");
    // allowed from 1.15 …
    const allowed = await preflight(await rs(good.source()), dest, {
      serviceVersion: "1.17.0",
      start: "x-passthrough: { preExistingDestinationData: true }",
    });
    expect(problems(allowed)).toEqual(["preflight-leftover-sync-state@6"]);
    // … and said to be ignored before
    const early = await preflight(await rs(good.source({ version: "7.0.20" })), dest, {
      serviceVersion: "1.14.0",
      start: "x-passthrough: { preExistingDestinationData: true }",
    });
    expect(only(early, "preflight-destination-not-empty")[0]).toMatchObject({
      line: 14,
      message: expect.stringContaining("needs service 1.15 or newer; this runbook says 1.14.0"),
    });
  });

  // facts: "the service's internal databases are named `__mdb_internal_mongosync` (and
  // `__mdb_internal_mongosync_verifier_{src,dst}` for the embedded verifier); before 1.20 they were
  // `mongosync_reserved_for_internal_use`, `mongosync_internal_*` and `mongosync_reserved_for_verification_*`
  // [behaviour page, metadata]. A filter must never select them; a destination that holds them has leftovers"
  it("preflight-leftover-sync-state: every version's internal database names on the destination", async () => {
    const names = [
      "__mdb_internal_mongosync",
      "__mdb_internal_mongosync_verifier_src",
      "mongosync_reserved_for_internal_use",
      "mongosync_internal_abc",
      "mongosync_reserved_for_verification_dst",
    ];
    const dest = await rs(good.dest({ databases: Object.fromEntries(names.map((n) => [n, { state: {} }])) }));
    const r = await preflight(await rs(good.source()), dest);
    expect(problems(r)).toEqual(names.map(() => "preflight-leftover-sync-state@6"));
    expect(only(r, "preflight-leftover-sync-state").map((d) => d.message)).toEqual(
      names.map((n) => expect.stringContaining(`holds \`${n}\`, the state of an earlier sync`)),
    );
  });

  it("preflight-collection-unsupported: time series, clustered TTL, Queryable Encryption, capped by version", async () => {
    const src = await rs(
      good.source({
        databases: {
          app: {
            metrics: { type: "timeseries", options: { timeseries: { timeField: "t" } } },
            sessions: { options: { clusteredIndex: { key: { _id: 1 }, unique: true }, expireAfterSeconds: 60 } },
            secrets: { options: { encryptedFields: { fields: [] } } },
            log: { options: { capped: true, size: 4096 } },
            fine: { count: 1, size: 10 },
          },
        },
      }),
    );
    const r = await preflight(src, await rs(good.dest()), { serviceVersion: "1.2.0", clusters: {} });
    const msgs = only(r, "preflight-collection-unsupported").map((d) => d.message);
    expect(msgs).toEqual(
      expect.arrayContaining([
        expect.stringContaining("`app.metrics` is a time series collection"),
        expect.stringContaining("`app.sessions` is a clustered collection with expireAfterSeconds"),
        expect.stringContaining("`app.secrets` is encrypted with Queryable Encryption"),
        expect.stringContaining("`app.log` is a capped collection; the service syncs capped collections from 1.3.0"),
      ]),
    );
    expect(msgs).toHaveLength(4);
  });

  it("preflight-unique-conflict", async () => {
    const src = await rs(
      good.source({
        databases: {
          sales: {
            orders: {
              indexes: [
                { name: "email_1", key: { email: 1 }, unique: true },
                { name: "email_plain", key: { email: 1 } },
              ],
            },
          },
        },
      }),
    );
    const r = await preflight(src, await rs(good.dest()));
    expect(only(r, "preflight-unique-conflict")[0]?.message).toContain("`email_1` and `email_plain`");
  });

  it("preflight-oplog-window: the copy outlasts the window at the configured rate", async () => {
    const src = await rs(
      good.source({ oplog: { first: 1000, last: 1000 + 3600 }, databases: { sales: { orders: { size: 200e9 } } } }),
    );
    const r = await preflight(src, await rs(good.dest()), { preflight: "{ copyRate: 100MB/s, oplogHeadroom: 2 }" });
    expect(only(r, "preflight-oplog-window")[0]?.message).toBe(
      "The oplog of `rs0` on the source `cluster0` spans 1h 00m; copying 186 GiB at 95.4 MiB/s takes about 33m 20s, and the window must cover 2× that (1h 07m).",
    );
  });

  it("preflight-oplog-window: a shortfall never reads as none (the span rounded down, what it must cover up)", async () => {
    // 4010 s of oplog against 2 × 2010 s: to the nearest minute both are 1h 07m
    const src = await rs(
      good.source({ oplog: { first: 1000, last: 1000 + 4010 }, databases: { sales: { orders: { size: 201e9 } } } }),
    );
    const r = await preflight(src, await rs(good.dest()), { preflight: "{ copyRate: 100MB/s, oplogHeadroom: 2 }" });
    expect(only(r, "preflight-oplog-window")[0]?.message).toMatch(/spans 1h 06m; .* must cover 2× that \(1h 07m\)\.$/);
  });

  it("preflight-destination-disk: less free than twice the data", async () => {
    const src = await rs(
      good.source({ databases: { sales: { orders: { size: 600e9 } } }, oplog: { first: 0, last: 365 * DAY } }),
    );
    const r = await preflight(src, await rs(good.dest({ disk: { total: 2e12, used: 1e12 } })));
    expect(only(r, "preflight-destination-disk")[0]?.message).toMatch(
      /has 931 GiB free; syncing 559 GiB needs 1\.1 TiB/,
    );
  });

  it("preflight-privileges by sync type; root satisfies everything; custom roles are named as not judged", async () => {
    const r = await preflight(
      await rs(
        good.source({
          users: user([
            { role: "read", db: "admin" },
            { role: "myRole", db: "admin" },
          ]),
        }),
      ),
      await rs(good.dest({ users: user([{ role: "root", db: "admin" }]) })),
    );
    expect(problems(r)).toEqual(["preflight-privileges@5"]);
    expect(only(r, "preflight-privileges")[0]?.message).toBe(
      "The user syncer@admin on the source `cluster0` lacks `backup`, `clusterMonitor`, `readAnyDatabase` (a default sync needs backup, clusterMonitor, readAnyDatabase); custom roles (myRole@admin) are not judged.",
    );
    // dual write blocking asks more of the source, and of the destination no more than a default sync
    const wb = await preflight(await rs(good.source()), await rs(good.dest()), {
      start: "enableUserWriteBlocking: true",
    });
    expect(only(wb, "preflight-privileges").map((d) => d.line)).toEqual([5]);
    // a reversible sync: the table's "Reversing" row (service facts, "User permissions, self-managed clusters":
    // `mongodb/docs-cluster-to-cluster-sync` source/includes/table-permissions-self-hosted.rst on master)
    const both = [
      ...["readWriteAnyDatabase", "backup", "restore", "clusterMonitor", "clusterManager"].map((role) => ({
        role,
        db: "admin",
      })),
    ];
    const rev = await preflight(
      await rs(good.source({ users: user(both) })),
      await rs(good.dest({ users: user(both) })),
      { start: "reversible: true", serviceVersion: "1.22.0" },
    );
    expect(only(rev, "preflight-privileges").map((d) => `${d.line}: ${d.message}`)).toEqual([
      "6: The user syncer@admin on the destination `cluster1` lacks `dbAdminAnyDatabase` (a reversible sync needs backup, clusterManager, clusterMonitor, dbAdminAnyDatabase, readWriteAnyDatabase, restore).",
    ]);
  });

  // the published table, "Dual Write-Blocking" row: destination clusterManager, clusterMonitor, readWriteAnyDatabase,
  // restore (no backup); facts: "a role the table does not ask for is not an error"
  it("preflight-privileges: a dual write-blocking destination is not asked for backup", async () => {
    const dual = ["backup", "clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"];
    for (const shape of [
      { start: 'enableUserWriteBlocking: "sourceAndDestination"', serviceVersion: "1.17.0" },
      { start: "enableUserWriteBlocking: true", serviceVersion: "1.17.0" },
      // from 1.20 every sync is judged as one with dual write blocking (service facts, "Not published")
      { serviceVersion: "1.22.0" },
    ]) {
      const r = await preflight(
        await rs(good.source({ users: user(dual.map((role) => ({ role, db: "admin" }))) })),
        await rs(good.dest({ users: user(DEST_ROLES) })),
        shape,
      );
      expect(problems(r), JSON.stringify(shape)).toEqual([]);
    }
  });

  // the published table, "Multiple Reversals" row: dbAdminAnyDatabase on the source too
  it("preflight-privileges: a runbook that reverses twice asks for dbAdminAnyDatabase on the source", async () => {
    const six = ["backup", "clusterManager", "clusterMonitor", "readWriteAnyDatabase", "restore"];
    const roles = (extra: string[]) => user([...six, ...extra].map((role) => ({ role, db: "admin" })));
    const shape = (reverses: number) => ({
      start: "reversible: true",
      serviceVersion: "1.22.0",
      steps: [
        "- stopWrites: { use: shell, with: { command: [echo] }, undo: { use: shell, with: { command: [echo] } } }",
        "- commit: {}",
        "- waitFor: { state: COMMITTED }",
        ...Array.from({ length: reverses }, () => ["- reverse: {}", "- waitFor: { state: COMMITTED }"]).flat(),
      ].join("\n"),
    });
    const twice = await preflight(
      await rs(good.source({ users: roles([]) })),
      await rs(good.dest({ users: roles(["dbAdminAnyDatabase"]) })),
      shape(2),
    );
    expect(only(twice, "preflight-privileges").map((d) => `${d.line}: ${d.message}`)).toEqual([
      "5: The user syncer@admin on the source `cluster0` lacks `dbAdminAnyDatabase` (a sync reversed more than once needs backup, clusterManager, clusterMonitor, dbAdminAnyDatabase, readWriteAnyDatabase, restore).",
    ]);
    // reversed once: the "Reversing" row, which does not ask it of the source
    const once = await preflight(
      await rs(good.source({ users: roles([]) })),
      await rs(good.dest({ users: roles(["dbAdminAnyDatabase"]) })),
      shape(1),
    );
    expect(only(once, "preflight-privileges")).toEqual([]);
  });

  // facts: "A 5.0 source needs `clusterManager` as well, or the minimum privileges listed for 5.0" [permissions page,
  // current: mongodb/docs content/mongosync/current/source/reference/permissions.txt, "Pre-6.0 Migrations"]; the
  // 1.10–1.13 pages say the same of a 4.4 source
  it("preflight-privileges: a source older than 6.0 needs clusterManager as well", async () => {
    for (const version of ["5.0.29", "4.4.29"]) {
      const r = await preflight(
        await rs(good.source({ version, fcv: version.slice(0, 3) })),
        await rs(good.dest({ version: "7.0.20" })),
        { serviceVersion: "1.17.0" },
      );
      expect(
        only(r, "preflight-privileges").map((d) => `${d.line}: ${d.message}`),
        version,
      ).toEqual([
        `5: The user syncer@admin on the source \`cluster0\` lacks \`clusterManager\` (a default sync from a source on server ${version} needs backup, clusterMonitor, readAnyDatabase, clusterManager; instead of \`clusterManager\`, the minimum privileges the permissions page lists for a pre-6.0 source will do).`,
      ]);
    }
    // a 6.0 source: the table's roles only
    const six = await preflight(await rs(good.source({ version: "6.0.24", fcv: "6.0" })), await rs(good.dest()));
    expect(only(six, "preflight-privileges")).toEqual([]);
  });

  it("a check that cannot read what it needs says so (preflight-not-checked), never passes silently", async () => {
    const unauthorized = { code: 13, codeName: "Unauthorized", errmsg: "not authorized on admin to execute command" };
    const r = await preflight(
      await rs(good.source({ fail: { connectionStatus: unauthorized, find: unauthorized, aggregate: unauthorized } })),
      await rs(good.dest({ fail: { dbStats: unauthorized } })),
    );
    const notChecked = only(r, "preflight-not-checked").map((d) => d.message);
    expect(notChecked).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^Not checked: the roles of the user on the source: connectionStatus failed \(connectionStatus not authorized \(Unauthorized, code 13\)/,
        ),
        expect.stringMatching(/^Not checked: the source oplog window: reading local\.oplog\.rs not authorized/),
        expect.stringMatching(/^Not checked: the destination's free disk: dbStats not authorized/),
      ]),
    );
    expect(only(r, "preflight-not-checked").every((d) => d.severity === "warning")).toBe(true);
    expect(r.namespaces?.complete).toBe(false);
  });

  it("preflight-connect: a wrong password is a finding naming the cluster, with a hint and no secret", async () => {
    const r = await preflight(
      await rs(good.source()),
      await rs(good.dest()),
      {},
      { user: USER, password: "wrong-Pa55" },
    );
    expect(only(r, "preflight-connect").map((d) => [d.line, d.message])).toEqual([
      [5, expect.stringMatching(/^cannot connect to cluster `cluster0`: authentication failed/)],
      [6, expect.stringMatching(/^cannot connect to cluster `cluster1`: authentication failed/)],
    ]);
    expect(JSON.stringify(r)).not.toContain("wrong-Pa55");
  });

  it("an unreachable cluster is a finding within the connect timeout; the other cluster is still checked", async () => {
    const src = await rs(good.source());
    const gone = await startFakeCluster({ kind: "replicaSet", ...good.dest() });
    const uri = gone.uri({ user: USER, password: PASSWORD });
    await gone.close();
    const loaded = await loadText(runbookText(), {
      SOURCE_URI: src.uri({ user: USER, password: PASSWORD }),
      DEST_URI: uri,
    });
    const t0 = Date.now();
    const r = await runPreflight(loaded, { start: firstStartRequest(loaded.runbook), connectTimeoutMs: 500 });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(only(r, "preflight-connect")[0]).toMatchObject({
      line: 6,
      // nothing listens at its port: refused at once (issue 26)
      message: expect.stringContaining("`cluster1`: connection refused by its host"),
    });
    expect(only(r, "preflight-cluster")).toHaveLength(1);
  });

  it("an abort closes everything and rejects with the signal's reason", async () => {
    const src = await rs(good.source());
    const dst = await rs(good.dest());
    const loaded = await loadText(runbookText(), {
      SOURCE_URI: src.uri({ user: USER, password: PASSWORD }),
      DEST_URI: dst.uri({ user: USER, password: PASSWORD }),
    });
    const c = new AbortController();
    c.abort(new Error("stop"));
    await expect(runPreflight(loaded, { start: firstStartRequest(loaded.runbook), signal: c.signal })).rejects.toThrow(
      "stop",
    );
  });
});

describe("a replica set to a sharded cluster, and sharded to sharded (through mongos)", () => {
  const RS_TO_SHARDED = (entries: string, more = ""): RunbookShape => ({
    destination: "sharded",
    clusters: { cluster1: ", shards: 2" },
    start: `sharding: { ${more}shardingEntries: [${entries}] }`,
  });

  it("clean: the shard count, the balancer stopped, no zones", async () => {
    const r = await preflight(
      await rs(good.source()),
      await sharded(good.dest()),
      RS_TO_SHARDED("{ database: sales, collection: orders, shardCollection: { key: [{ customerId: 1 }] } }"),
    );
    expect(problems(r)).toEqual([]);
    expect(only(r, "preflight-cluster")[1]?.message).toMatch(/sharded cluster \(2 shards\)/);
    expect(r.namespaces?.namespaces[0]?.shardKey).toEqual([{ customerId: 1 }]);
  });

  it("preflight-shard-count, preflight-balancer and preflight-destination-zones on the destination", async () => {
    const r = await preflight(
      await rs(good.source()),
      await sharded(good.dest({ balancer: "full", tags: [{ ns: "sales.orders", tag: "EU" }] }), [
        { id: "a" },
        { id: "b" },
        { id: "c" },
      ]),
      RS_TO_SHARDED("{ database: sales, collection: orders, shardCollection: { key: [{ customerId: 1 }] } }"),
    );
    expect(problems(r)).toEqual(["preflight-balancer@6", "preflight-destination-zones@6", "preflight-shard-count@6"]);
  });

  it("preflight-shard-key-index (collation too), preflight-unique-index-shard-key, createSupportingIndexes", async () => {
    const src = await rs(
      good.source({
        databases: {
          sales: {
            orders: { indexes: [{ name: "sku_1", key: { sku: 1 }, unique: true }] },
            people: {
              options: { collation: { locale: "fr" } },
              indexes: [{ name: "name_1", key: { name: 1 }, collation: { locale: "fr" } }],
            },
          },
        },
      }),
    );
    const entries =
      "{ database: sales, collection: orders, shardCollection: { key: [{ customerId: 1 }] } }, { database: sales, collection: people, shardCollection: { key: [{ name: 1 }] } }";
    const r = await preflight(src, await sharded(good.dest()), RS_TO_SHARDED(entries));
    expect(only(r, "preflight-shard-key-index").map((d) => d.message)).toEqual([
      expect.stringContaining(
        "`sales.orders` has no index on the source that supports the shard key { customerId: 1 }",
      ),
      expect.stringContaining(
        "`sales.people` has no index on the source that supports the shard key { name: 1 } with simple collation",
      ),
    ]);
    expect(only(r, "preflight-unique-index-shard-key")[0]?.message).toContain("unique index `sku_1` { sku: 1 }");
    expect(only(r, "preflight-collection-unsupported")[0]?.message).toContain(
      "`sales.people` is sharded with a non-default collation (`fr`)",
    );
    const created = await preflight(
      src,
      await sharded(good.dest()),
      RS_TO_SHARDED(entries, "createSupportingIndexes: true, "),
    );
    expect(only(created, "preflight-shard-key-index")).toEqual([]);
  });

  it("preflight-index-limit: more than 63 indexes on a collection to shard", async () => {
    const indexes = Array.from({ length: 63 }, (_, i) => ({ name: `f${i}_1`, key: { [`f${i}`]: 1 } }));
    const src = await rs(good.source({ databases: { sales: { orders: { indexes } } } }));
    const r = await preflight(
      src,
      await sharded(good.dest()),
      RS_TO_SHARDED("{ database: sales, collection: orders, shardCollection: { key: [{ f0: 1 }] } }"),
    );
    expect(only(r, "preflight-index-limit")[0]?.message).toBe(
      "`sales.orders` has 64 indexes; a sharded collection can have at most 63 during the sync.",
    );
  });

  it("a sharded source: each shard's oplog (one too short), its balancer per synced collection, its zones", async () => {
    const src = await sharded(
      good.source({
        oplog: undefined,
        balancer: "full",
        shardedCollections: [
          { ns: "sales.orders", key: { customerId: 1 } },
          { ns: "sales.archive", key: { _id: 1 }, noBalance: true },
        ],
        tags: [{ ns: "sales.orders", tag: "EU" }],
        databases: { sales: { orders: { size: 40e9, count: 10 }, archive: { size: 1, count: 1 } } },
      }),
      [
        { id: "shA", node: { oplog: { first: 0, last: 30 * DAY } } },
        { id: "shB", node: { oplog: { first: 0, last: 600 } } },
      ],
    );
    const r = await preflight(src, await sharded(good.dest()), {
      source: "sharded",
      destination: "sharded",
      start: "includeNamespaces: [{ database: sales }]",
    });
    expect(problems(r)).toEqual(["preflight-balancer@5", "preflight-oplog-window@5"]);
    expect(only(r, "preflight-balancer")[0]?.message).toContain("still balances synced collections: `sales.orders`.");
    expect(only(r, "preflight-oplog-window")[0]?.message).toMatch(
      /^The oplog of `shB` on the source `cluster0` spans 10m 00s; copying 18\.6 GiB/,
    );
    expect(only(r, "preflight-source-zones")[0]?.message).toContain("`sales.orders`");
    expect(r.namespaces?.namespaces.find((n) => n.collection === "orders")?.shardKey).toEqual([{ customerId: 1 }]);
    // without a filter the source balancer must be off altogether
    const all = await preflight(src, await sharded(good.dest()), { source: "sharded", destination: "sharded" });
    expect(only(all, "preflight-balancer")[0]?.message).toContain("without a namespace filter it must be stopped");
  });
});
