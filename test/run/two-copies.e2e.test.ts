/**
 * Issue 30, point 5: "Two copies of one runbook (two checkouts, or a hard link) have two locks;
 * launched together against one fleet, `start` went out twice in 7 of 12 launches." One runner per
 * fleet, not per file: the instances' locks (src/journal/fleet-lock.ts) hold across copies, and
 * across machines (or users) the fleet's own state does: start's interlock refuses a fleet that is
 * not IDLE, naming the instances.
 */
import { copyFileSync, linkSync, mkdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, posts, runbookFor, sim, startCli, tempDir, writeRunbook, START, type CliResult } from "../support/run.js";

let s: Simulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await s?.close();
  s = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A runbook that starts the sync and then waits on lag that never drops: its runner holds the fleet until stopped. */
const HOLDING = `${START}  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n`;

/** Two files that are one runbook: a copy in another checkout, or a hard link in another folder. */
function twoCopies(root: string, s: Simulator, how: "copy" | "hard link"): [string, string] {
  const a = join(root, "checkout-a");
  const b = join(root, "checkout-b");
  mkdirSync(a);
  mkdirSync(b);
  const first = writeRunbook(a, runbookFor(s, HOLDING));
  const second = join(b, "rb.yaml");
  if (how === "copy") copyFileSync(first, second);
  else linkSync(first, second);
  return [first, second];
}

describe("one runner per fleet, not per runbook file", () => {
  it("two copies (two checkouts, a hard link) launched together: one start per instance, the second runner refused naming the instance and the holder", async () => {
    // rounds of the race: each launches both runners at once against a fresh IDLE fleet
    for (const how of ["copy", "hard link", "copy", "hard link"] as const) {
      s = await sim({ instances: 2 });
      s.control.addFault("lag-floor=30");
      const root = tempDir();
      dirs.push(root);
      const files = twoCopies(root, s, how);
      const runs = files.map((f) => startCli(["run", f, "--renderer", "simple"], { cwd: root }));
      try {
        // the loser ends by itself; the winner waits (lag never drops) until stopped
        const loser = await Promise.race(runs.map((r, i) => r.done.then((res) => ({ res, i }))));
        const winner = runs[1 - loser.i]!;
        await winner.waitFor(/waiting \(ready\)|▶ \[2\/2\]/, 20_000);
        const l: CliResult = loser.res;
        expect(l.code, `${how}: ${l.all}`).toBe(1);
        expect(l.stderr, how).toMatch(
          new RegExp(
            `instance sync\\d \\(http://127\\.0\\.0\\.1:\\d+\\) is in use: another syncbook run \\(pid \\d+, started [^,]+, runbook ${files[1 - loser.i]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\) holds .*instance-[0-9a-f]{32}\\.lock`,
          ),
        );
        expect(l.stderr, how).toMatch(/hint: wait for it to finish, or stop it \(kill -INT \d+/);
        expect(l.all, `${how}: the loser sent nothing`).not.toMatch(/▶ \[1\/2\]/);
        expect(posts(s, "start"), how).toEqual([1, 1]);
      } finally {
        for (const r of runs) r.child.kill("SIGINT");
        await Promise.all(runs.map((r) => r.done));
      }
      await s.close();
      s = undefined;
    }
  }, 60_000);

  it("a runner that cannot see the other's lock (another machine or user: another state folder) is stopped by the fleet's state: exit 3, naming each instance, start not sent", async () => {
    s = await sim({ instances: 2 });
    s.control.addFault("lag-floor=30");
    const root = tempDir();
    dirs.push(root);
    const [a, b] = twoCopies(root, s, "copy");
    const first = startCli(["run", a, "--renderer", "simple"], {
      cwd: root,
      env: { SYNCBOOK_STATE_DIR: join(root, "machine-a") },
    });
    try {
      await first.waitFor(/waiting \(ready\)|▶ \[2\/2\]/, 20_000);
      const second = await cli(["run", b, "--renderer", "simple"], {
        cwd: root,
        env: { SYNCBOOK_STATE_DIR: join(root, "machine-b") },
      });
      expect(second.code, second.all).toBe(3);
      expect(second.stderr).toMatch(
        /refused \(fleet-idle\): start is allowed only in IDLE; sync0 is RUNNING, sync1 is RUNNING/,
      );
      expect(posts(s, "start")).toEqual([1, 1]);
    } finally {
      first.child.kill("SIGINT");
      await first.done;
    }
  });

  it("the same instance written as localhost in one runbook and 127.0.0.1 in the other: one lock, the second runner refused before it sends anything", async () => {
    s = await sim({ instances: 1 });
    s.control.addFault("lag-floor=30");
    const root = tempDir();
    dirs.push(root);
    mkdirSync(join(root, "a"));
    mkdirSync(join(root, "b"));
    const a = writeRunbook(join(root, "a"), runbookFor(s, HOLDING));
    const b = writeRunbook(
      join(root, "b"),
      runbookFor(s, HOLDING).replaceAll("http://127.0.0.1:", "http://localhost:"),
    );
    const first = startCli(["run", a, "--renderer", "simple", "--journal-dir", "ja"], { cwd: root });
    try {
      await first.waitFor(/waiting \(ready\)|▶ \[2\/2\]/, 20_000);
      const second = await cli(["run", b, "--renderer", "simple"], { cwd: root });
      expect(second.code, second.all).toBe(1);
      expect(second.stderr).toMatch(/instance sync0 \(http:\/\/localhost:\d+\) is in use: another syncbook run/);
      expect(posts(s, "start")).toEqual([1]);
      // the way on names the holder's runbook and journal folder, as a command (a previous review:
      // "then run again (with --resume to continue that run)"); run, it shows that run's journal
      const status = `syncbook status ${a} --journal-dir ${join(root, "ja")}`;
      expect(second.stderr).toContain(`then see where that run stopped and the exact way on: ${status};`);
      expect(second.stderr).not.toContain("run again");
      const st = await cli(status.split(" ").slice(1), { cwd: join(root, "b") });
      expect(st.code, st.all).toBe(0);
      expect(st.stdout).toContain(`journal: ${join(root, "ja")}`);
    } finally {
      first.child.kill("SIGINT");
      await first.done;
    }
  });

  it("which service a URL names: the loopback spellings are one host; scheme, port, path and other hosts still tell instances apart", async () => {
    const { serviceKey: c } = await import("../../src/instance-identity.js");
    const one = [
      "http://localhost:27182",
      "http://127.0.0.1:27182/",
      "http://127.0.0.2:27182",
      "http://[::1]:27182",
      "http://sync.localhost:27182",
      "http://u:p@LOCALHOST:27182/?x=1",
    ];
    expect(new Set(one.map(c))).toEqual(new Set(["http://loopback:27182"]));
    expect(c("http://localhost")).toBe("http://loopback");
    for (const other of [
      "https://localhost:27182",
      "http://localhost:27183",
      "http://localhost:27182/b",
      "http://10.0.0.1:27182",
      "http://localhost.example.com:27182",
      "http://127.0.0.1.nip.io:27182",
    ])
      expect(c(other), other).not.toBe("http://loopback:27182");
  });

  it("the instances' locks are released at the end of a run, and a lock left by a killed runner is taken over", async () => {
    s = await sim({ instances: 1 });
    const root = tempDir();
    dirs.push(root);
    const state = join(root, "state");
    const file = writeRunbook(root, runbookFor(s, "  - { id: nap, sleep: 1ms }\n"));
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: root, env: { SYNCBOOK_STATE_DIR: state } });
    expect(r.code, r.all).toBe(0);
    const { readdirSync, writeFileSync } = await import("node:fs");
    expect(readdirSync(join(state, "locks"))).toEqual([]);
    // a runner killed with -9 leaves its lock: a pid that no longer runs
    const { instanceLockName } = await import("../../src/journal/index.js");
    writeFileSync(
      join(state, "locks", instanceLockName(s.instances[0]!.url)),
      JSON.stringify({
        pid: 2 ** 22 + 7,
        host: (await import("node:os")).hostname(),
        startedAt: "2026-01-01T00:00:00Z",
        // a killed runner of this PID namespace (issue 42: a lock that names no namespace, or
        // another, is never stale here: test/journal/lock.test.ts)
        pidns: readlinkSync("/proc/self/ns/pid"),
      }),
    );
    const again = await cli(["run", file, "--renderer", "simple"], { cwd: root, env: { SYNCBOOK_STATE_DIR: state } });
    expect(again.code, again.all).toBe(0);
    expect(again.stderr).toMatch(
      /fleet: took over the stale lock of instance sync0 \(http:\/\/127\.0\.0\.1:\d+\) \(left by pid 4194311 on .*, since 2026-01-01T00:00:00Z: that process is gone\)/,
    );
    expect(readdirSync(join(state, "locks"))).toEqual([]);
  });

  // an adversarial run: a second runbook, its own fleet, named the first's verifier (which runs one
  // verification per process); it adopted the first's running check and ended "verified" with the
  // first's sync RUNNING. The verifier is locked as the instances are (src/journal/fleet-lock.ts)
  it("two cutovers that name one verifier: the second runner is refused before it sends anything, naming the verifier and the holder", async () => {
    s = await sim({ instances: 1 });
    s.control.addFault("lag-floor=30");
    const other = await sim({ instances: 1 });
    const root = tempDir();
    dirs.push(root);
    try {
      mkdirSync(join(root, "a"));
      mkdirSync(join(root, "b"));
      const a = writeRunbook(join(root, "a"), runbookFor(s, HOLDING));
      // its own fleet, the first's verifier (spelled localhost: one service, one lock)
      const b = writeRunbook(
        join(root, "b"),
        runbookFor(other, HOLDING).replace(other.verifierUrl, s.verifierUrl.replace("127.0.0.1", "localhost")),
      );
      const first = startCli(["run", a, "--renderer", "simple"], { cwd: root });
      try {
        await first.waitFor(/waiting \(ready\)|▶ \[2\/2\]/, 20_000);
        const second = await cli(["run", b, "--renderer", "simple"], { cwd: root });
        expect(second.code, second.all).toBe(1);
        expect(second.stderr).toMatch(
          /verifier http:\/\/localhost:\d+ is in use: another syncbook run \(pid \d+, started [^,]+, runbook .*a\/rb\.yaml\) holds .*verifier-[0-9a-f]{32}\.lock/,
        );
        expect(posts(other, "start")).toEqual([0]);
        // --abort sends the verifier nothing: another cutover's verify does not keep it from its undos
        const abort = await cli(["run", b, "--renderer", "simple", "--abort"], { cwd: root });
        expect(abort.all).not.toMatch(/is in use/);
      } finally {
        first.child.kill("SIGINT");
        await first.done;
      }
      // the first's run over, its locks released: the second goes
      const again = await cli(["run", b, "--renderer", "simple", "--to", "start"], { cwd: root });
      expect(again.code, again.all).toBe(0);
      expect(posts(other, "start")).toEqual([1]);
    } finally {
      await other.close();
    }
  }, 60_000);
});
