/**
 * The `preflight` step kind (issue 17, point 1): the checks of `syncbook preflight` as the first
 * step of a run, against the wire-level test server and the simulator, through the built CLI.
 * Errors stop the run before anything reaches the sync service; a rehearsal stands in for it.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { startFakeCluster, type FakeCluster, type FakeNode } from "../support/mongo-wire/fake-cluster.js";
import { DEST_ROLES, PASSWORD, SOURCE_ROLES, USER, user } from "../support/preflight.js";
import { cli, posts, sim, tempDir, writeRunbook } from "../support/run.js";

const DAY = 86_400;
const open: { close(): Promise<void> }[] = [];
let s: Simulator | undefined;
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
  await s?.close();
  s = undefined;
});

async function rs(node: Partial<FakeNode>): Promise<FakeCluster> {
  const c = await startFakeCluster({ kind: "replicaSet", ...node });
  open.push(c);
  return c;
}

const SALES = { sales: { orders: { count: 1000, size: 1e6 } } };

function runbook(sim: Simulator, database: string, extra = ""): string {
  return `runbook: 1
name: preflight-step
serviceVersion: "1.17.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "7.0", uri: "\${env.SOURCE_URI}" }
  cluster1: { topology: replicaSet, serverVersion: "7.0", uri: "\${env.DEST_URI}" }
preflight: { connectTimeout: 3s }
instances:
  - { url: "${sim.instances[0]!.url}", name: sync0 }
defaults: { pollInterval: 50ms, timeout: 20s, requestTimeout: 2s }
steps:
  - id: check
    preflight: {${extra}}
  - id: start
    start: { source: cluster0, destination: cluster1, includeNamespaces: [{ database: ${database} }] }
`;
}

async function setup(): Promise<{ env: Record<string, string> }> {
  const src = await rs({ users: user(SOURCE_ROLES), databases: SALES, oplog: { first: 0, last: 7 * DAY } });
  const dst = await rs({ users: user(DEST_ROLES) });
  return {
    env: {
      SOURCE_URI: src.uri({ user: USER, password: PASSWORD }),
      DEST_URI: dst.uri({ user: USER, password: PASSWORD }),
    },
  };
}

describe("the preflight step", () => {
  it("clean clusters: the step passes and the run goes on to start", async () => {
    const { env } = await setup();
    s = await sim({ serviceVersion: "1.17.0" });
    const dir = tempDir();
    const file = writeRunbook(dir, runbook(s, "sales"));
    const r = await cli(["run", file, "--renderer", "simple", "--to", "start"], { cwd: dir, env });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/preflight: 0 errors, 0 warnings/);
    expect(posts(s, "start")).toEqual([1]);
    expect(r.all).not.toContain(PASSWORD);
  });

  it("a filter that names a missing database: the step fails with the finding and its line; nothing is sent to the service", async () => {
    const { env } = await setup();
    s = await sim({ serviceVersion: "1.17.0" });
    const dir = tempDir();
    const file = writeRunbook(dir, runbook(s, "slaes"));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir, env });
    expect(r.code, r.all).toBe(1);
    expect(r.all).toMatch(
      /error: preflight preflight-namespace-missing \(line 15\): `slaes` \(includeNamespaces\) does not exist/,
    );
    expect(r.all).toMatch(/failed in \S+: preflight found 2 error\(s\)/);
    expect(r.all).toMatch(/failed: step check failed \(said above\)/);
    expect(r.all).toMatch(/--> .*rb\.yaml:13:5/);
    expect(posts(s, "start")).toEqual([0]);
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), env.SOURCE_URI!]) expect(r.all).not.toContain(secret);
  });

  it("a rehearsal stands in for it: it never connects to the clusters the runbook names", async () => {
    // nothing listens there: a real preflight would fail to connect
    const env = { SOURCE_URI: "mongodb://u:secret-pw@127.0.0.1:9/", DEST_URI: "mongodb://u:secret-pw@127.0.0.1:9/" };
    s = await sim();
    const dir = tempDir();
    const file = writeRunbook(dir, runbook(s, "sales"));
    const r = await cli(["rehearse", file, "--renderer", "simple", "--to", "start"], { cwd: dir, env });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toContain("rehearsal: preflight reads the real clusters, so it is stood in for");
    expect(r.all).not.toContain("secret-pw");
  });
});

describe("a rehearsal shaped by preflight's namespace set", () => {
  it("copies preflight's byte total", async () => {
    const { parseRunbook } = await import("../../src/runbook/index.js");
    const { prepareRehearsal } = await import("../../src/rehearse/index.js");
    const loaded = await parseRunbook(
      `runbook: 1
name: shaped
clusters: { cluster0: { topology: replicaSet }, cluster1: { topology: replicaSet } }
instances: [http://127.0.0.1:27182]
steps:
  - start: { source: cluster0, destination: cluster1 }
`,
      "shaped.yaml",
      { env: {} },
    );
    const reh = await prepareRehearsal(loaded, { namespaces: { collections: 2, bytes: 3_000_900 } });
    try {
      expect(reh.sim.control.state().instances[0]!.shareBytes).toBe(3_000_900);
    } finally {
      await reh.close();
    }
  });
});
