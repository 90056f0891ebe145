/**
 * `syncbook sim` end to end: the built CLI (`npm test` builds before vitest) on free ports,
 * its printed URLs answering, and SIGTERM ending it with exit code 0.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { RS_TO_SHARDED, call, until } from "../support/sim.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = `${root}dist/cli/syncbook.cjs`;
let child: ChildProcess | undefined;

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first (npm test does)`);
});
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

/** Starts the CLI and resolves with its printed lines once the `control` line is out. */
function startCli(args: string[]): Promise<{ lines: string[]; exit: Promise<number | null> }> {
  const p = spawn(process.execPath, [cli, "sim", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  child = p;
  const exit = new Promise<number | null>((resolve) => p.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (/^control /m.test(out)) resolve({ lines: out.trim().split("\n"), exit });
    });
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("exit", (code) => reject(new Error(`sim exited early with ${code}: ${err}`)));
    setTimeout(() => reject(new Error(`no URLs printed within 10 s: ${out} ${err}`)), 10_000);
  });
}

describe("syncbook sim (built CLI)", () => {
  // issue 39, point 5: "`syncbook sim` always reports a 2-shard destination whatever the runbook says"
  it("--runbook: the fleet's shape is the runbook's (instances, clusters, shard counts, service version), and what it does not say is said", async () => {
    const dir = mkdtempSync(join(tmpdir(), "syncbook-sim-shape-"));
    try {
      const file = join(dir, "rb.yaml");
      writeFileSync(
        file,
        `runbook: 1
name: shape
serviceVersion: "1.21.0"
clusters:
  src: { topology: sharded, shards: 3, serverVersion: "8.0" }
  dst: { topology: sharded, serverVersion: "8.0" }
instances: [http://127.0.0.1:27182, http://127.0.0.1:27183, http://127.0.0.1:27184]
steps:
  - { id: start, start: { source: src, destination: dst } }
`,
      );
      const { lines, exit } = await startCli(["--port", "0", "--verifier-port", "0", "--runbook", file]);
      expect(lines[0]).toBe(
        `simulator: service 1.21.0, 3 instances, src (sharded, 3 shards, server 8.0), dst (sharded, 3 shards, server 8.0) (the shape of ${file})`,
      );
      expect(lines[1]).toBe("shape: dst: sharded, its shard count not in the runbook: simulated with 3");
      expect(lines.filter((l) => l.startsWith("instance "))).toHaveLength(3);
      const url = lines.find((l) => l.startsWith("instance 0 "))!.split(" ")[2]!;
      const state = (await call(`${url}/sim/state`)).json.state as { instances: unknown[] };
      expect(state.instances).toHaveLength(3);
      child!.kill("SIGTERM");
      expect(await exit).toBe(0);
      // a runbook that does not load: a usage error naming it, nothing started
      writeFileSync(file, "runbook: 1\nname: broken\n");
      const bad = spawnSync(process.execPath, [cli, "sim", "--port", "0", "--verifier-port", "0", "--runbook", file], {
        encoding: "utf8",
      });
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(`--runbook ${file} does not load`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints one line per URL, serves them, and exits 0 on SIGTERM", async () => {
    // 1 simulated second per wall second: INITIALIZING (1.22) lasts 2 s, the copy long enough
    const { lines: all, exit } = await startCli([
      ...["--port", "0", "--verifier-port", "0", "--instances", "2", "--time-scale", "1"],
    ]);
    // the banner says what is simulated (issue 26): the service version (default: the current release, facts: "1.22
    // is the current stable release") and the topology
    expect(all[0]).toBe(
      "simulator: service 1.22.0, 2 instances, cluster0 (replica set, server 7.0) → cluster1 (sharded, 2 shards, server 7.0)",
    );
    const lines = all.slice(1);
    const urls = Object.fromEntries(lines.map((l) => [l.split(" http")[0], l.slice(l.indexOf("http")).split(" ")[0]]));
    expect(Object.keys(urls)).toEqual(["instance 0", "instance 1", "verifier", "control"]);
    for (const k of ["instance 0", "instance 1", "verifier"]) expect(urls[k]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(urls["instance 0"]).not.toBe(urls["instance 1"]);

    // facts: "INITIALIZING: the service rejects `start` while in it; once initialization completes it reports IDLE"
    expect((await call(`${urls["instance 1"]}/api/v1/progress`)).json.progress.state).toBe("INITIALIZING");
    await until(async () => (await call(`${urls["instance 1"]}/api/v1/progress`)).json.progress.state === "IDLE", 5000);
    await until(async () => (await call(`${urls["instance 0"]}/api/v1/progress`)).json.progress.state === "IDLE", 5000);
    expect((await call(`${urls["instance 0"]}/api/v1/start`, "POST", RS_TO_SHARDED)).json).toEqual({ success: true });
    expect((await call(`${urls["instance 1"]}/api/v1/start`, "POST", RS_TO_SHARDED)).json).toEqual({ success: true });
    expect((await call(`${urls.verifier}/api/v1/progress`)).json.progress.phase).toBe("idle");
    expect((await call(`${urls.verifier}/sim/writes`, "POST", { enabled: false })).json).toMatchObject({
      success: true,
      writes: { enabled: false },
    });
    const state = (await call(`${urls["instance 0"]}/sim/state`)).json.state;
    expect(state.instances.map((i: { state: string }) => i.state)).toEqual(["RUNNING", "RUNNING"]);

    child!.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("a port in use is a clear error, exit 1", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const p = spawn(process.execPath, [cli, "sim", "--port", String(port), "--verifier-port", "0"], {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = p;
      let err = "";
      p.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((resolve) => p.on("exit", resolve));
      expect(code).toBe(1);
      expect(err).toMatch(/cannot listen/);
      expect(err).toMatch(/--port 0/);
    } finally {
      blocker.close();
    }
  });

  // facts: "the simulator … emulates the version it is started with"; "IDLE, INITIALIZING (1.20, before RUNNING)"
  it("--service-version and --data-set shape the simulated service", async () => {
    const { lines, exit } = await startCli([
      "--port",
      "0",
      "--verifier-port",
      "0",
      "--time-scale",
      "1",
      "--service-version",
      "1.22.0",
      "--data-set",
      "collections=3,unique=1,ttl=0,hidden=0",
    ]);
    expect(lines[0]).toMatch(/^simulator: service 1\.22\.0, 1 instance, /);
    const url = lines[1]!.split(" ")[2]!;
    const p = (await call(`${url}/api/v1/progress`)).json;
    expect(p.success).toBe(true);
    expect(p.progress.state).toBe("INITIALIZING");
    expect((await call(`${url}/sim/state`)).json.state.serviceVersion).toBe("1.22.0");
    child!.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  // migration-verifier v0.2.1 check.go `CreateInitialTasksIfNeeded`: without --verifyAll or
  // --srcNamespace, "if len(verifier.srcNamespaces) == 0 { return nil }" (src/sim/README.md)
  it("--verifier-namespaces none, --check-filter-matches none and --verifier-ddl-handling warnMost start the verifier so", async () => {
    const { lines, exit } = await startCli([
      "--port",
      "0",
      "--verifier-port",
      "0",
      "--verifier-namespaces",
      "none",
      "--check-filter-matches",
      "none",
      "--verifier-ddl-handling",
      "warnMost",
    ]);
    const url = lines[1]!.split(" ")[2]!;
    const state = (await call(`${url}/sim/state`)).json.state;
    expect(state.verifier).toMatchObject({ namespaces: "none", filterMatchesNothing: false, ddlHandling: "warnMost" });
    child!.kill("SIGTERM");
    expect(await exit).toBe(0);
  });

  it("--help lists the new options", async () => {
    const p = spawn(process.execPath, [cli, "sim", "--help"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    child = p;
    let out = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    expect(await new Promise<number | null>((resolve) => p.on("exit", resolve))).toBe(0);
    for (const s of [
      "--service-version",
      "--data-set",
      "--verifier-namespaces",
      "--check-filter-matches",
      "--verifier-ddl-handling",
      "drop-after-effect",
      "late-effect",
      "identity-change",
    ])
      expect(out).toContain(s);
  });

  it("bad options are usage errors, exit 2", async () => {
    const p = spawn(process.execPath, [cli, "sim", "--fault", "http500=2", "--port", "0"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = p;
    let err = "";
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    expect(await new Promise<number | null>((resolve) => p.on("exit", resolve))).toBe(2);
    expect(err).toMatch(/rate must be/);
    const q = spawn(process.execPath, [cli, "sim", "--data-set", "tables=3", "--port", "0"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = q;
    let err2 = "";
    q.stderr.on("data", (d: Buffer) => (err2 += d.toString()));
    expect(await new Promise<number | null>((resolve) => q.on("exit", resolve))).toBe(2);
    expect(err2).toMatch(/--data-set must be/);
  });
});
