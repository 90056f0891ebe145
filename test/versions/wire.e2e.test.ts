/**
 * What the service receives, by version, through the built CLI: x-passthrough fields at the top
 * level of the start body (in the run and in the --dry-run plan), the plan's notes from the
 * version table, and INITIALIZING (1.20) waited out before start instead of refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { localServer, type LocalServer } from "../support/http-server.js";
import { cli, CUTOVER, posts, runbookFor, sim, tempDir, writeRunbook } from "../support/run.js";

let s: Simulator | undefined;
let server: LocalServer | undefined;
afterEach(async () => {
  await s?.close();
  await server?.close();
  s = undefined;
  server = undefined;
});

const IDLE = {
  success: true,
  progress: {
    state: "IDLE",
    canCommit: false,
    canWrite: null,
    info: null,
    lagTimeSeconds: null,
    totalEventsApplied: null,
    collectionCopy: null,
    directionMapping: null,
    mongosyncID: null,
    coordinatorID: null,
  },
};

function startOnly(url: string, version: string, start: string): string {
  return `runbook: 1
name: wire
serviceVersion: "${version}"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "7.0" }
instances: ["${url}"]
defaults: { pollInterval: 50ms, timeout: 10s, requestTimeout: 2s }
steps:
  - id: start
    start: { source: cluster0, destination: cluster1, ${start} }
`;
}

describe("the start body on the wire", () => {
  // facts: "All of these are top-level fields of the start body. A field the format does not know
  // yet must reach the service as a top-level field too."
  it("x-passthrough fields are merged into the top level of the body the service receives, and the plan shows that body", async () => {
    server = await localServer((path) => (path.endsWith("/progress") ? { body: IDLE } : { body: { success: true } }));
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      startOnly(
        server.url,
        "1.22.0",
        'skipDiskSpaceCheck: true, x-passthrough: { futureOption: { level: 2 }, futureFlag: "on" }',
      ),
    );
    const r = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    const sent = server.requests.filter((q) => q.method === "POST");
    expect(sent.map((q) => q.path)).toEqual(["/api/v1/start"]);
    expect(JSON.parse(sent[0]!.body)).toEqual({
      source: "cluster0",
      destination: "cluster1",
      skipDiskSpaceCheck: true,
      futureOption: { level: 2 },
      futureFlag: "on",
    });

    const plan = await cli(["run", file, "--dry-run"], { cwd: dir });
    expect(plan.code, plan.all).toBe(0);
    expect(plan.stdout).toContain(
      '"source":"cluster0","destination":"cluster1","skipDiskSpaceCheck":true,"futureOption":{"level":2},"futureFlag":"on"}',
    );
    expect(plan.stdout).not.toContain("x-passthrough");
    // the plan's notes come from the version table
    expect(plan.stdout).toContain("service 1.22.0: skipDiskSpaceCheck (service 1.22+)");
    expect(plan.stdout).toContain("INITIALIZING, 1.20+, is waited out");
  });

  it("a field the version does not have never reaches the fleet: lint stops the run, nothing is sent", async () => {
    server = await localServer((path) => (path.endsWith("/progress") ? { body: IDLE } : { body: { success: true } }));
    const dir = tempDir();
    const file = writeRunbook(dir, startOnly(server.url, "1.20.0", "enableUserWriteBlocking: true"));
    const r = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.all).toMatch(/enableUserWriteBlocking was removed from start in service 1\.20/);
    expect(server.requests).toEqual([]);
  });
});

describe("states by version", () => {
  it("--probe: a fleet still INITIALIZING allows a plan that starts (the start waits it out)", async () => {
    s = await sim({ serviceVersion: "1.20.0", model: { initializingSeconds: 5000 } });
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(s, CUTOVER)
        .replace('serviceVersion: "1.8.0"', 'serviceVersion: "1.20.0"')
        .replaceAll('serverVersion: "6.0"', 'serverVersion: "7.0"'),
    );
    const r = await cli(["run", file, "--dry-run", "--probe"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/probe: sync0: INITIALIZING/);
    expect(posts(s, "start")).toEqual([0]);
  });

  // facts: "INITIALIZING (1.20, before RUNNING)"; "Documented refusals: … `start` while INITIALIZING (1.20)"
  it("1.20: a fleet still INITIALIZING is waited out, then started once per instance", async () => {
    s = await sim({ instances: 2, serviceVersion: "1.20.0", model: { initializingSeconds: 250 } });
    const dir = tempDir();
    const file = writeRunbook(
      dir,
      runbookFor(s, CUTOVER)
        .replace('serviceVersion: "1.8.0"', 'serviceVersion: "1.20.0"')
        .replaceAll('serverVersion: "6.0"', 'serverVersion: "7.0"'),
    );
    const r = await cli(["run", file, "--yes", "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/INITIALIZING \(not ready for start yet\): reading progress until every instance is IDLE/);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
  });
});
