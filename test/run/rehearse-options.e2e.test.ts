/**
 * Issue 14, points 7 and 9, for rehearsals: "`rehearse --fault bogus=1` is a usage error (exit 2),
 * not 'internal error … please report it'; a rehearsal never suggests `--resume` (it has no
 * journal); a rehearsal's verdict and exit code agree, and fleet errors print as sentences, not
 * raw JSON" and "a `notify:` entry in a rehearsal prints its stand-in line as the README promises,
 * and `--keep-hooks` says whether it also sends real notifications".
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { prepareRehearsal } from "../../src/rehearse/index.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { cli, tempDir } from "../support/run.js";
import { call } from "../support/sim.js";

const root = process.cwd();
const RUNBOOK = `runbook: 1
name: notify-rehearsal
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: [{ url: "http://127.0.0.1:27182", name: rs }]
notify:
  - { use: webhook, on: [run.finished], with: { url: "https://hooks.example.invalid/cutover" } }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: stop-writes, stopWrites: { use: shell, with: { command: [node, -e, "0"] }, undo: { use: shell, with: { command: [node, -e, "0"] } } } }
  - { id: drained, waitFor: { canCommit: true, lagBelow: 3 } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
`;

describe("rehearse", () => {
  it("a fault that does not parse is a usage error (exit 2), not an internal error", async () => {
    const r = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--fault", "bogus=1"], {
      cwd: tempDir(),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^syncbook: --fault: invalid fault "bogus=1": unknown kind "bogus" \(one of /);
    expect(r.stderr).not.toContain("internal error");
  });

  it("a fault the runbook's fleet cannot take is a usage error with the fleet it was checked against, not an internal error", async () => {
    // rs-to-sharded.yaml has one instance: there is no instance 1
    const r = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--fault", "commit-refused@1"], {
      cwd: tempDir(),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^syncbook: --fault: invalid fault "commit-refused@1": there is no instance 1 \(the fleet has 1\)\n/,
    );
    expect(r.stderr).toContain(
      "hint: the runbook's fleet has one instance, numbered 0: name one after @, e.g. --fault http500=0.2@0",
    );
    expect(r.stderr).not.toContain("internal error");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("a --data smaller than a byte per instance, and a runbook with one cluster, are usage errors, not internal errors", async () => {
    // an outside review: each ended "internal error … please report it" with a stack
    for (const data of ["0", "2"]) {
      const r = await cli(["rehearse", join(root, "runbooks/sharded-to-sharded.yaml"), "--data", data], {
        cwd: tempDir(),
      });
      expect(r.code, r.all).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(`^syncbook: --data: data \\(${data} bytes\\) must be at least one byte per instance\n`),
      );
      expect(r.stderr).toContain(
        "hint: the rehearsal splits the data across the runbook's 3 instances, at least one byte each: give 3 bytes or more, e.g. --data 2GiB",
      );
      expect(r.stderr).not.toContain("internal error");
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const dir = tempDir();
    const one = join(dir, "one.yaml");
    writeFileSync(
      one,
      `runbook: 1
name: one-cluster
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
instances: [{ url: "http://127.0.0.1:27182", name: rs }]
steps:
  - { id: committed, waitFor: { state: COMMITTED } }
`,
    );
    const r = await cli(["rehearse", one], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.stderr).toMatch(/^syncbook: the runbook's clusters: give at least two cluster settings\n/);
    expect(r.stderr).toContain("hint: a rehearsal simulates a source and a destination: declare both under `clusters`");
    expect(r.stderr).not.toContain("internal error");
  });

  it("an empty namespace set (0 bytes) on three instances is rehearsed, not refused", async () => {
    const dir = tempDir();
    const ns = join(dir, "ns.json");
    writeFileSync(ns, JSON.stringify({ format: 1, totals: { collections: 4, bytes: 0 } }));
    const r = await cli(["rehearse", join(root, "runbooks/sharded-to-sharded.yaml"), "--namespaces", ns], {
      cwd: dir,
    });
    expect(r.stderr).not.toContain("internal error");
    expect(r.all).toContain("namespaces: 4 collection(s), 0 bytes");
    expect(r.code, r.all).toBe(0);
  }, 60_000);

  it("a failed rehearsal: the verdict says FAILED with the exit code, and nothing suggests --resume", async () => {
    const r = await cli(["rehearse", join(root, "runbooks/rs-to-sharded.yaml"), "--from", "commit"], {
      cwd: tempDir(),
    });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^rehearsal verdict: FAILED \(exit 3: stopped by an interlock\)$/m);
    expect(r.all).not.toContain("--resume");
  });

  it.each([[[]], [["--keep-hooks"]]])("notifiers print their stand-in line and send nothing (%j)", async (extra) => {
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(file, RUNBOOK);
    const r = await cli(["rehearse", file, "--renderer", "simple", ...extra], { cwd: dir });
    expect(r.stdout).toMatch(/\[notify \S\] \S+ rehearsal: webhook notification not sent: /);
    // the runbook's own write stop (a no-op here) runs with --keep-hooks: writes go on, and the
    // verdict and the exit code agree that it is unsafe
    if (extra.length) {
      expect(r.code, r.all).not.toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^rehearsal verdict: (UNSAFE|FAILED) \\(exit ${r.code}`, "m"));
    } else {
      expect(r.code, r.all).toBe(0);
      // nothing unsafe, and no verify step in this runbook: never a bare SAFE (issue 36, point 2)
      expect(r.stdout).toMatch(
        /^rehearsal verdict: NOT VERIFIED, with .*commit-without-verify.* \(exit 0: nothing unsafe was seen/m,
      );
    }
    expect(r.all).not.toMatch(/hooks\.example\.invalid.*(failed|ENOTFOUND)/);
  });

  // service facts, "Supported versions": "1.20 is the oldest supported release; all earlier ones are end of
  // life [release notes index]. 1.22 is the current stable release"
  it("a runbook without serviceVersion is rehearsed against the current release (1.22); one that declares it, at it", async () => {
    for (const [text, want] of [
      [RUNBOOK.replace('serviceVersion: "1.8.0"\n', ""), "1.22.0"],
      [RUNBOOK, "1.8.0"],
    ] as const) {
      const reh = await prepareRehearsal(await parseRunbook(text, "rb.yaml", { env: {} }));
      try {
        expect(reh.sim.serviceVersion).toBe(want);
        // and the fleet answers as that version: `lag` (1.21) only at 1.22
        const p = await call(`${reh.sim.instances[0]!.url}/api/v1/progress`);
        expect(Object.keys(p.json.progress as object).includes("lag")).toBe(want === "1.22.0");
      } finally {
        await reh.close();
      }
    }
  });

  it("fleet errors in the verdict are the simulator's sentences", async () => {
    const loaded = await parseRunbook(
      RUNBOOK.replace(
        'instances: [{ url: "http://127.0.0.1:27182", name: rs }]',
        'instances: ["http://127.0.0.1:1", "http://127.0.0.1:2"]',
      ).replaceAll("replicaSet", "sharded, shards: 2"),
      "rb.yaml",
      { env: {} },
    );
    const reh = await prepareRehearsal(loaded);
    try {
      // start on one instance only: past the grace window, the fleet is in error
      await call(`${reh.sim.instances[0]!.url}/api/v1/start`, "POST", { source: "cluster0", destination: "cluster1" });
      await new Promise((r) => setTimeout(r, 2300));
      const v = await reh.verdict({ verified: false });
      expect(v.safe).toBe(false);
      expect(v.fleetErrors).toEqual([
        expect.stringMatching(/^start was accepted by instance\(s\) 0 but not by 1 within \d+ ms/),
      ]);
    } finally {
      await reh.close();
    }
  });
});

describe("the largest fleet: lint and rehearse agree on 1024 instances", () => {
  // one instance per source shard; sim-writes turns the (rehearsal's) simulated switch
  const fleet = (n: number): string => `runbook: 1
name: fleet-${n}
serviceVersion: "1.22.0"
clusters:
  cluster0: { topology: sharded, shards: ${n}, serverVersion: "7.0" }
  cluster1: { topology: sharded, shards: ${n}, serverVersion: "7.0" }
instances:
${Array.from({ length: n }, (_, i) => `  - http://127.0.0.1:${20000 + i}`).join("\n")}
defaults: { requestTimeout: 60s }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1, buildIndexes: beforeDataCopy } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "http://127.0.0.1:20000" }, undo: { use: sim-writes, with: { url: "http://127.0.0.1:20000", enabled: true } } } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
`;

  it("5,000 instances: lint refuses them at `instances` and rehearse says the same (exit 2), never an internal error", async () => {
    const dir = tempDir();
    const file = join(dir, "big.yaml");
    writeFileSync(file, fleet(5000));
    const why =
      /error\[schema\]: `instances` lists 5000 items, at most 1024: the most syncbook rehearses and drives \(a rehearsal of 2048, simulator and runner in one process on 2 cores, could not deliver a commit to every instance within its request time limit\)\n --> \S*big\.yaml:8:3\n/;
    const lint = await cli(["lint", file], { cwd: dir });
    expect(lint.code, lint.all).toBe(1);
    expect(lint.all).toMatch(why);
    const r = await cli(["rehearse", file], { cwd: dir });
    expect(r.code, r.all).toBe(2);
    expect(r.all).toMatch(why);
    expect(r.all).not.toMatch(/internal error|RangeError/);
  }, 60_000);

  it("1,024 instances: lint accepts them and the rehearsal commits every one", async () => {
    const dir = tempDir();
    const file = join(dir, "fleet.yaml");
    writeFileSync(file, fleet(1024));
    const lint = await cli(["lint", file], { cwd: dir });
    expect(lint.code, lint.all).toBe(0);
    const r = await cli(["rehearse", file, "--renderer", "simple"], { cwd: dir });
    expect(r.code, r.all.slice(-3000)).toBe(0);
    expect(r.stdout).toMatch(
      // its runbook has no `verify`: nothing unsafe seen, nothing verified (issue 36, point 2)
      /^rehearsal verdict: NOT VERIFIED, with 1 lint warning \(commit-without-verify\) \(exit 0[^\n]*\)\n {2}committed: {5}COMMITTED on all 1024 instance\(s\)$/m,
    );
  }, 180_000);
});
