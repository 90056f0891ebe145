/**
 * The built-in `shell` hook against real processes: "argv array, never a shell string; cwd, env,
 * timeout with kill, stdout and stderr captured into the log; non-zero exit fails the step"
 * (issue #5, point 3), and "a hook that hangs is killed at its timeout and its undo is not
 * skipped" (tests).
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../../src/sim/index.js";
import {
  loadPlugins,
  runHook,
  stepInfo,
  undoFor,
  UndoStack,
  type HookCallSpec,
  type PluginRegistry,
} from "../../src/plugin/index.js";
import { recordingContext, sleep, tempDir, writeFiles } from "../support/plugin.js";

const NODE = process.execPath;
let registry: PluginRegistry | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function reg(): Promise<PluginRegistry> {
  registry ??= (await loadPlugins({ runbookFile: "/tmp/rb.yaml", entries: [], builtins: ["shell"] })).registry;
  return registry;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // a dead orphan stays a zombie until init reaps it (slowly in some containers): it is dead
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

async function gone(pid: number, ms = 2000): Promise<boolean> {
  for (let t = 0; t < ms && alive(pid); t += 20) await sleep(20);
  return !alive(pid);
}

/** A context whose environment has one inherited variable (and no secrets of the loader unless given). */
function context(dir: string, secrets: string[] = []) {
  return { ...recordingContext(dir, secrets), env: { FROM_PARENT: "inherited-value" } };
}

const step = (redact: (s: string) => string) =>
  stepInfo(3, "stop-writes", "stopWrites", "Stop writes", { id: "stop-writes" }, redact);

describe("shell hook", () => {
  it("runs an argv list (no shell) in the runbook-relative cwd with env merged over the environment, logging stdout and stderr line by line", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "ops/show.mjs": [
        "console.log(`cwd=${process.cwd()}`);",
        "console.log(`arg=${process.argv[2]}`);",
        "console.log(`parent=${process.env.FROM_PARENT} extra=${process.env.EXTRA}`);",
        "console.error('warming up');",
        "process.stdout.write('no trailing newline');",
      ].join("\n"),
    });
    const ctx = context(dir);
    const literal = "$HOME; touch pwned | cat `id`";
    const out = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "show.mjs", literal], cwd: "ops", env: { EXTRA: "xyz" } } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(out).toMatchObject({ ok: true });
    if (out.ok) expect(out.summary).toMatch(/^\S+ show\.mjs "\$HOME; touch pwned \| cat `id`" exited 0 after \d/);
    const lines = ctx.logs.filter((l) => /^info shell: std(out|err): /.test(l));
    expect(lines.filter((l) => l.includes("stdout:"))).toEqual([
      `info shell: stdout: cwd=${join(dir, "ops")}`,
      `info shell: stdout: arg=${literal}`,
      // env values are shown as *** (they are often tokens)
      "info shell: stdout: parent=inherited-value extra=***",
      "info shell: stdout: no trailing newline",
    ]);
    expect(lines).toContain("info shell: stderr: warming up");
    expect(existsSync(join(dir, "ops/pwned"))).toBe(false);
  });

  it("runs in the runbook's folder when no cwd is given (a runbook does not depend on where syncbook was started)", async () => {
    const dir = tempDir();
    const ctx = context(dir);
    const out = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "-e", "console.log(process.cwd())"] } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(out.ok).toBe(true);
    expect(ctx.logs).toContain(`info shell: stdout: ${realpathSync(dir)}`);
  });

  it("returns when the command exits even if a background child keeps its output open", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "bg.mjs":
        "import { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\nconst c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { stdio: 'inherit' });\nwriteFileSync('pid', String(c.pid));\nconsole.log('left a daemon');\nprocess.exit(0);\n",
    });
    const ctx = context(dir);
    const t = performance.now();
    const out = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "bg.mjs"], cwd: "." } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
    cleanups.push(() => void (alive(pid) && process.kill(pid, "SIGKILL")));
    expect(out.ok).toBe(true);
    expect(performance.now() - t).toBeLessThan(4000);
    expect(ctx.logs).toContain("info shell: stdout: left a daemon");
    // a command that ended normally keeps what it started in the background
    expect(alive(pid)).toBe(true);
  });

  it("fails on a non-zero exit with the exit code and the last lines of stderr", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "fail.mjs":
        "for (let i = 1; i <= 8; i++) console.error(`e${i}`);\nconsole.log('partial work');\nprocess.exit(3);\n",
    });
    const ctx = context(dir);
    const out = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "fail.mjs"], cwd: "." } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(out).toMatchObject({ ok: false, timedOut: false });
    if (!out.ok)
      expect(out.error).toMatch(/^hook shell failed: \S+ fail\.mjs exited with code 3: e4 \| e5 \| e6 \| e7 \| e8$/);
    expect(ctx.logs).toContain("info shell: stdout: partial work");
    expect(ctx.logs.filter((l) => l.includes("stderr: e"))).toHaveLength(8);
  });

  it("fails clearly when the program does not exist, and never runs a shell string", async () => {
    const dir = tempDir();
    const ctx = context(dir);
    const missing = await runHook(
      await reg(),
      { use: "shell", with: { command: ["syncbook-no-such-program-42", "x"] } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(missing.ok).toBe(false);
    if (!missing.ok)
      expect(missing.error).toContain(
        "syncbook-no-such-program-42 x could not start: command not found: syncbook-no-such-program-42",
      );
    const noDir = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "-v"], cwd: "no/such/dir" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    if (!noDir.ok)
      expect(noDir.error).toContain(`could not start: its folder ${join(dir, "no/such/dir")} does not exist`);
    else expect.fail("a missing cwd must fail");
    // a whole command line as one argv element is one (missing) program name, not a shell command
    const str = await runHook(
      await reg(),
      { use: "shell", with: { command: [`touch ${join(dir, "pwned")}`], cwd: "." } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(str.ok).toBe(false);
    expect(existsSync(join(dir, "pwned"))).toBe(false);
    // and a string `command` is refused by the schema
    const bad = await runHook(await reg(), { use: "shell", with: { command: "node x.mjs" } }, step(ctx.redact), ctx, {
      timeoutMs: 10_000,
    });
    expect(bad).toMatchObject({ ok: false, error: "hook shell: option `command` must be array" });
  });

  it("stops the command at its own timeout: SIGTERM, then SIGKILL after the grace period, and waits until it died", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "stubborn.mjs":
        "import { writeFileSync } from 'node:fs';\nwriteFileSync('pid', String(process.pid));\nprocess.on('SIGTERM', () => console.log('ignoring SIGTERM'));\nsetInterval(() => {}, 1e9);\nconsole.log('started');\n",
      "polite.mjs": "setInterval(() => {}, 1e9);\nconsole.log('started');\n",
    });
    const ctx = context(dir);
    let t = performance.now();
    const stubborn = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "stubborn.mjs"], cwd: ".", timeout: "500ms", killGrace: "300ms" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(performance.now() - t).toBeLessThan(4000);
    expect(stubborn).toMatchObject({ ok: false });
    if (!stubborn.ok)
      expect(stubborn.error).toMatch(/stubborn\.mjs timed out after 500ms: killed \(it ignored SIGTERM for 300ms\)$/);
    expect(alive(Number(readFileSync(join(dir, "pid"), "utf8")))).toBe(false);
    expect(ctx.logs).toContain("info shell: stdout: ignoring SIGTERM");
    expect(
      ctx.logs.some(
        (l) => l.startsWith("warn shell: stopping ") && l.endsWith("timed out after 500ms (SIGTERM, SIGKILL in 300ms)"),
      ),
    ).toBe(true);

    t = performance.now();
    const polite = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "polite.mjs"], cwd: ".", timeout: "300ms" } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(performance.now() - t).toBeLessThan(3000);
    if (!polite.ok) expect(polite.error).toMatch(/polite\.mjs timed out after 300ms: stopped with SIGTERM$/);
    else expect.fail("a command past its timeout must fail");
  });

  it.skipIf(process.platform === "win32")(
    "a hung command is killed with its children at the step's timeout, and the step's undo still runs",
    async () => {
      const dir = tempDir();
      writeFiles(dir, {
        "hang.mjs": [
          "import { spawn } from 'node:child_process';",
          "import { writeFileSync } from 'node:fs';",
          "const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });",
          "writeFileSync('pids', `${process.pid} ${child.pid}`);",
          "setInterval(() => {}, 1e9);",
        ].join("\n"),
        "undo.mjs":
          "import { appendFileSync } from 'node:fs';\nappendFileSync('journal', `undo ${process.argv[2]}\\n`);\n",
      });
      const ctx = context(dir);
      const calls: HookCallSpec[] = [
        {
          use: "shell",
          with: { command: [NODE, "undo.mjs", "noop"], cwd: "." },
          undo: { use: "shell", with: { command: [NODE, "undo.mjs", "first"], cwd: "." } },
        },
        {
          use: "shell",
          with: { command: [NODE, "hang.mjs"], cwd: "." },
          undo: { use: "shell", with: { command: [NODE, "undo.mjs", "hung"], cwd: "." } },
        },
      ];
      const stack = new UndoStack();
      const r = await reg();
      const outcomes = [];
      for (const [i, call] of calls.entries()) {
        const info = stepInfo(i, `s${i}`, "hook", `s${i}`, {}, ctx.redact);
        const out = await runHook(r, call, info, ctx, { timeoutMs: i === 1 ? 600 : 10_000 });
        outcomes.push(out);
        stack.push(undoFor(r, call, out, info, ctx, 10_000));
      }
      expect(outcomes[1]).toMatchObject({
        ok: false,
        timedOut: true,
        error: "hook shell timed out after 600ms; abandoned",
      });
      const pids = readFileSync(join(dir, "pids"), "utf8").split(" ").map(Number);
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(await gone(pid)).toBe(true);
      const reports = await stack.unwind();
      expect(reports.map((x) => x.outcome.ok)).toEqual([true, true]);
      expect(readFileSync(join(dir, "journal"), "utf8")).toBe("undo noop\nundo hung\nundo first\n");
    },
  );

  it("Ctrl-C (the run's signal) stops the command", async () => {
    const dir = tempDir();
    writeFiles(dir, {
      "hang.mjs":
        "import { writeFileSync } from 'node:fs';\nwriteFileSync('pid', String(process.pid));\nsetInterval(() => {}, 1e9);\n",
    });
    const ctx = context(dir);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("interrupted")), 400);
    const out = await runHook(
      await reg(),
      { use: "shell", with: { command: [NODE, "hang.mjs"], cwd: "." } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000, signal: ctl.signal },
    );
    expect(out).toMatchObject({ ok: false, interrupted: true, error: "hook shell interrupted" });
    expect(await gone(Number(readFileSync(join(dir, "pid"), "utf8")))).toBe(true);
  });

  it("never shows a secret from env or from ${env.*} in the log, the summary or the error", async () => {
    const dir = tempDir();
    const TOKEN = "tok-PLANTED-env-31337";
    const LOADER = "pw-PLANTED-loader-777";
    writeFiles(dir, {
      "leak.mjs":
        "console.log(`token ${process.env.SWITCH_TOKEN} arg ${process.argv[2]}`);\nconsole.error(`denied for ${process.env.SWITCH_TOKEN}`);\nprocess.exit(Number(process.argv[3]));\n",
    });
    // LOADER stands for a `${env.*}` value the runbook interpolated into an argument
    const ctx = context(dir, [LOADER]);
    const r = await reg();
    const ok = await runHook(
      r,
      { use: "shell", with: { command: [NODE, "leak.mjs", LOADER, 0], cwd: ".", env: { SWITCH_TOKEN: TOKEN } } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    const failed = await runHook(
      r,
      { use: "shell", with: { command: [NODE, "leak.mjs", LOADER, 1], cwd: ".", env: { SWITCH_TOKEN: TOKEN } } },
      step(ctx.redact),
      ctx,
      { timeoutMs: 10_000 },
    );
    expect(ok.ok).toBe(true);
    expect(failed.ok).toBe(false);
    expect(ctx.logs).toContain("info shell: stdout: token *** arg ***");
    if (!failed.ok) expect(failed.error).toMatch(/leak\.mjs \*\*\* 1 exited with code 1: denied for \*\*\*$/);
    const everything = JSON.stringify({ ok, failed, logs: ctx.logs });
    expect(everything).not.toContain("PLANTED");
  });
});

describe("shell hook in a rehearsal", () => {
  it("runs the example runbooks' write switch against the simulator; its undo switches writes back on", async () => {
    const sim = await startSimulator({ instances: 1 });
    cleanups.push(() => sim.close());
    const ctx = { ...recordingContext(join(process.cwd(), "runbooks")), env: process.env };
    const url = `${sim.instances[0]!.url}/sim/writes`;
    const call: HookCallSpec = {
      use: "shell",
      with: { command: ["node", "hooks/app-writes.mjs", "off", url] },
      undo: { use: "shell", with: { command: ["node", "hooks/app-writes.mjs", "on", url] } },
    };
    const info = step(ctx.redact);
    const out = await runHook(await reg(), call, info, ctx, { timeoutMs: 20_000 });
    expect(out).toMatchObject({ ok: true });
    expect(sim.control.state().writes.enabled).toBe(false);
    expect(ctx.logs).toContain("info shell: stdout: application writes off");
    const stack = new UndoStack();
    stack.push(undoFor(await reg(), call, out, info, ctx, 20_000));
    const [report] = await stack.unwind();
    expect(report?.outcome.ok).toBe(true);
    expect(sim.control.state().writes.enabled).toBe(true);
  });
});
