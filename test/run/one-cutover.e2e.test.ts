/**
 * Issue 37, points 1 and 4: the cutover is the unit across runs. A split commit fixed with
 * `--from commit --only <instance>` continues the same cutover (its id in every journal, its
 * PagerDuty `dedup_key`, its trace id), and its last line gives the cutover's time and write-stop
 * window across both runs; a plain run after an unfinished cutover is refused and says the ways
 * on, `--new-cutover` starts one, said; `--abort` keeps the id, resolves the incident and lets
 * a new cutover start. Notifications say writes are STILL STOPPED (a failed undo) or may be
 * stopped (a stop hook that failed), and an operator's Ctrl-C is no failure page.
 */
import { cell } from "../../src/cli/step-summary.js";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Simulator } from "../../src/sim/index.js";
import { cli, startCli } from "../support/run.js";
import {
  COMMIT,
  COMMITTED,
  CLI_CUTOVER_DEFAULTS,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  posts,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";
import { startServer } from "../support/http-server.js";
import { inPty } from "../support/pty.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies
type Json = any;

const closers: (() => Promise<void>)[] = [];
let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
  while (closers.length) await closers.pop()?.();
});

async function pager() {
  const srv = await startServer((_req, _n, res) => {
    res.writeHead(202, { "content-type": "application/json" }).end('{"status":"success"}');
  });
  closers.push(srv.close);
  const bodies = (): Json[] => srv.seen.filter((x) => x.url === "/v2/enqueue").map((x) => JSON.parse(x.body));
  return { ...srv, bodies };
}

async function otlp() {
  const bodies: Json[] = [];
  const srv = await startServer((req, _n, res) => {
    if (req.url === "/v1/traces") bodies.push(JSON.parse(req.body));
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  closers.push(srv.close);
  const traceIds = (): Set<string> =>
    new Set(
      bodies.flatMap((b) =>
        (b.resourceSpans ?? []).flatMap((rs: Json) =>
          (rs.scopeSpans ?? []).flatMap((ss: Json) => (ss.spans ?? []).map((x: Json) => x.traceId as string)),
        ),
      ),
    );
  return { ...srv, bodies, traceIds };
}

/** The `run.started` cutover ids of every journal in the folder. */
function cutoversIn(dir: string): string[] {
  const folder = join(dir, ".syncbook", "crash");
  return readdirSync(folder)
    .filter((n) => n.endsWith(".jsonl"))
    .flatMap((n) =>
      readFileSync(join(folder, n), "utf8")
        .split("\n")
        .filter((l) => l.includes('"run.started"'))
        .map((l) => (JSON.parse(l) as { cutover: string }).cutover),
    );
}

const NOTIFY = (pd: string, file = "notes.jsonl"): string =>
  `notify:\n  - { use: pagerduty, with: { routingKey: "\${env.PD_KEY}", url: "${pd}" }, on: [step.failed, run.finished] }\n  - { use: file, with: { path: ${file} }, on: [run.finished] }\n`;

const notes = (dir: string, file = "notes.jsonl"): { text: string; severity: string }[] =>
  readFileSync(join(dir, file), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { text: string; severity: string });

describe("one cutover across runs: one identity", () => {
  it("a split commit fixed with --from commit --only keeps the cutover id, the dedup_key and the trace id; its last line gives the cutover's time and window; a plain run between is refused", async () => {
    s = await fastSim({ instances: 3, timeScale: 100, graceMs: 120_000 });
    s.control.addFault("commit-refused@2");
    const pd = await pager();
    const tr = await otlp();
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: CLI_CUTOVER_DEFAULTS,
        head: NOTIFY(pd.url),
        steps: START + READY + stopVia(s.verifierUrl) + DRAINED + COMMIT + COMMITTED,
      }),
    );
    const summary = join(dir, "summary.md");
    const env = {
      PD_KEY: "pd-routing-key-123456",
      OTEL_EXPORTER_OTLP_ENDPOINT: tr.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      // the GitHub job summary says it too
      GITHUB_STEP_SUMMARY: summary,
    };
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir, env });

    const split = await run();
    expect(split.code, split.all).toBe(1);
    expect(split.all).toContain("split: commit reached 2 of 3 instances");
    const trigger = pd.bodies().find((b) => b.event_action === "trigger");
    expect(trigger, JSON.stringify(pd.bodies())).toBeDefined();
    // a split leaves writes stopped: the page says so in words
    expect(notes(dir).at(-1)!.text).toContain("writes are STILL STOPPED");
    expect(readFileSync(summary, "utf8")).toContain("application writes are STILL STOPPED");
    // and names the way on the terminal named (it named none)
    // the split's hint (what to check on the instance that refused) is to be done first: said so
    const way = /^ {2}(once the hint above is done, resume with: syncbook run .*)$/m.exec(split.all)?.[1];
    expect(way, split.all).toBeDefined();
    expect(readFileSync(summary, "utf8")).toContain(`| next | ${cell(way!)} |`);
    s.control.clearFaults();

    // a plain run would start a second cutover of a split fleet: refused, with the ways on
    const before = s.control.counts();
    const plain = await run("--yes");
    expect(plain.code, plain.all).toBe(2);
    expect(plain.stderr).toMatch(/the runbook's last cutover did not finish: cutover \S+ \(journal .*\.jsonl\)/);
    expect(plain.stderr).toContain("--resume");
    expect(plain.stderr).toContain(`syncbook run ${file} --abort`);
    expect(plain.stderr).toContain(`syncbook run ${file} --new-cutover`);
    expect(s.control.counts(), "a refused run sent something").toEqual(before);

    const fixed = await run("--from", "commit", "--only", "sync2", "--yes");
    expect(fixed.code, fixed.all).toBe(0);
    expect(fixed.stderr).toMatch(/cutover: this run continues cutover \S+ \(journal .*\): its last run ended failed/);
    expect(posts(s, "commit")).toEqual([1, 1, 2]);
    // one id in both journals
    const ids = cutoversIn(dir);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(1);
    // one incident: the fixing run resolves the split's page
    const resolve = pd.bodies().find((b) => b.event_action === "resolve");
    expect(resolve?.dedup_key).toBe(trigger.dedup_key);
    expect(trigger.dedup_key).toContain(ids[0]);
    // one trace
    expect(tr.traceIds().size).toBe(1);
    // the last line: the cutover's time over both runs and the write-stop window measured across them
    const last = /■ run ok in (\S+) · cutover (\S+) over 2 runs · writes stopped (\S+) · committed/.exec(fixed.all);
    expect(last, fixed.all).not.toBeNull();
    const ms = (d: string): number => (d.endsWith("ms") ? Number(d.slice(0, -2)) : Number(d.replace(/s$/, "")) * 1000);
    expect(ms(last![2]!)).toBeGreaterThan(ms(last![1]!));
    // the window opened in the split run: longer than the fixing run's own time from its start
    expect(ms(last![3]!)).toBeGreaterThan(ms(last![1]!));
    const final = notes(dir).at(-1)!;
    expect(final.text).toMatch(
      /run finished \(committed\) after \S+; the cutover: \S+ over 2 runs; writes stopped \S+/,
    );
    expect(final.text).not.toContain("STILL STOPPED");
    expect(readFileSync(summary, "utf8")).toMatch(/\| cutover \| \S+ over 2 runs; writes stopped \S+ \|/);
  }, 120_000);

  it("--abort keeps the id and resolves the incident; after it a plain run starts a new cutover; --new-cutover is refused with --resume", async () => {
    s = await fastSim({ instances: 1, timeScale: 100 });
    const pd = await pager();
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const gate = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, {
        defaults: CLI_CUTOVER_DEFAULTS,
        head: NOTIFY(pd.url),
        steps: START + READY + stopVia(s.verifierUrl) + gate + COMMIT,
      }),
    );
    const env = { PD_KEY: "pd-routing-key-123456" };
    const run = (...a: string[]) => cli(["run", file, "--renderer", "simple", ...a], { cwd: dir, env });
    const first = await run();
    expect(first.code, first.all).toBe(1);
    const key = pd.bodies().find((b) => b.event_action === "trigger")?.dedup_key;
    expect(key).toBeDefined();

    const both = await run("--resume", "--new-cutover");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--new-cutover starts a new cutover: --resume and --abort continue the last one");

    const abort = await run("--abort");
    expect(abort.code, abort.all).toBe(0);
    expect(new Set(cutoversIn(dir)).size).toBe(1);
    const resolved = pd.bodies().filter((b) => b.event_action === "resolve");
    expect(resolved.map((b) => b.dedup_key)).toEqual([key]);
    const said = notes(dir).at(-1)!;
    expect(said.text).toContain("run called off by the operator (--abort)");
    expect(said.severity).toBe("info");

    // called off: a new cutover may start (the fleet's own interlocks still apply)
    const again = await run();
    expect(again.stderr).not.toContain("last cutover did not finish");
    expect(new Set(cutoversIn(dir)).size).toBe(2);
  }, 120_000);

  it("--new-cutover starts a second cutover after an unfinished one, and says so", async () => {
    s = await fastSim({ instances: 1, timeScale: 100 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const gate = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }\n`;
    writeFileSync(file, cutoverYaml(s, { defaults: CLI_CUTOVER_DEFAULTS, steps: gate + START }));
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    const second = await cli(["run", file, "--renderer", "simple", "--new-cutover"], { cwd: dir });
    expect(second.code, second.all).toBe(1);
    expect(second.stderr).toMatch(
      /cutover: starting a new cutover \(--new-cutover\); cutover \S+ \(journal .*\) did not finish and is left as it is: its last run ended failed/,
    );
    expect(new Set(cutoversIn(dir)).size).toBe(2);
  }, 60_000);

  it("a --new-cutover that fails having sent nothing says its --resume goes on with the earlier cutover, not with it", async () => {
    // an adversarial run: the bare --resume such a run offered went on with the earlier cutover
    s = await fastSim({ instances: 1, timeScale: 100 });
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const idle = "  - { id: idle, assert: { state: IDLE } }\n";
    const gate = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }\n`;
    writeFileSync(file, cutoverYaml(s, { defaults: CLI_CUTOVER_DEFAULTS, steps: idle + START + gate }));
    const first = await cli(["run", file, "--renderer", "simple"], { cwd: dir });
    expect(first.code, first.all).toBe(1);
    const firstId = cutoversIn(dir)[0];
    const second = await cli(["run", file, "--renderer", "simple", "--new-cutover"], { cwd: dir });
    expect(second.code, second.all).toBe(1);
    expect(second.all).toMatch(/step idle failed/);
    const line = second.stderr.split("\n").find((l) => l.includes("resume with:"));
    expect(line, second.all).toMatch(
      new RegExp(
        `resume with: syncbook run \\S+ --resume {3}\\(it goes on with cutover ${firstId} \\(journal \\S+\\), not this run's: this run sent nothing and ran no hook, so --resume passes its journal over; see both first: syncbook status \\S+\\)$`,
      ),
    );
    // and the first run's own end offered the plain --resume: its journal is the one --resume picks
    expect(first.stderr.split("\n").find((l) => l.includes("resume with:"))).toMatch(/--resume$/);
  }, 60_000);
});

describe("notifications that tell the state", () => {
  it("a failed undo: every notifier says writes are STILL STOPPED; the stop hook itself failing: writes may be stopped", async () => {
    s = await fastSim({ instances: 1, timeScale: 100 });
    const pd = await pager();
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    // the stop works, its undo fails, a later step fails: the run ends with writes stopped
    const stuck = `  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${s.verifierUrl}" }, undo: { use: shell, with: { command: [node, -e, "process.exit(4)"] } } } }\n`;
    const gate = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(3)"] } } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, { defaults: CLI_CUTOVER_DEFAULTS, head: NOTIFY(pd.url), steps: START + READY + stuck + gate }),
    );
    const env = { PD_KEY: "pd-routing-key-123456" };
    const r = await cli(["run", file, "--renderer", "simple"], { cwd: dir, env });
    expect(r.code, r.all).toBe(1);
    const end = notes(dir).at(-1)!;
    expect(end.text).toMatch(/^crash: application writes are STILL STOPPED: /);
    expect(end.severity).toBe("critical");
    const page = pd
      .bodies()
      .filter((b) => b.event_action === "trigger")
      .at(-1);
    expect(page.payload.summary).toContain("writes are STILL STOPPED");

    // a stop hook that fails part-way, whose undo fails too: nobody knows; "may be stopped"
    const dir2 = tempDir();
    const file2 = join(dir2, "rb.yaml");
    const broken = `  - { id: stop-writes, stopWrites: { use: shell, with: { command: [node, -e, "process.exit(2)"] }, undo: { use: shell, with: { command: [node, -e, "process.exit(4)"] } } } }\n`;
    writeFileSync(file2, cutoverYaml(s, { defaults: CLI_CUTOVER_DEFAULTS, head: NOTIFY(pd.url), steps: broken }));
    const r2 = await cli(["run", file2, "--renderer", "simple"], { cwd: dir2, env });
    expect(r2.code, r2.all).toBe(1);
    const end2 = notes(dir2).at(-1)!;
    expect(end2.text).toMatch(/^crash: application writes may be stopped: /);
    expect(end2.text).not.toContain("STILL STOPPED");
  }, 120_000);

  it("an operator's Ctrl-C is its own event: told as the operator's, no failure page; writes stopped still said", async () => {
    s = await fastSim({ instances: 1, timeScale: 100 });
    const pd = await pager();
    const dir = tempDir();
    const file = join(dir, "rb.yaml");
    const stuck = `  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${s.verifierUrl}" }, undo: { use: shell, with: { command: [node, -e, "process.exit(4)"] } } } }\n`;
    const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setTimeout(() => {}, 60000)"] } } }\n`;
    writeFileSync(
      file,
      cutoverYaml(s, { defaults: CLI_CUTOVER_DEFAULTS, head: NOTIFY(pd.url), steps: START + READY + stuck + hold }),
    );
    // at a terminal: the Ctrl-C typed there (a SIGINT to a runner with no terminal is a CI job's cancel, below)
    const t = inPty(["run", file, "--renderer", "simple"], { cwd: dir, env: { PD_KEY: "pd-routing-key-123456" } });
    await t.waitFor(/holding/, 30_000);
    t.type("\x03");
    const r = await t.done;
    expect(r.code, r.output).toBe(130);
    const end = notes(dir).at(-1)!;
    expect(end.text).toContain("run interrupted by the operator");
    expect(end.text).toContain("writes are STILL STOPPED");
    expect(end.severity).toBe("warning");
    // the failed undo pages (hook.failed is not asked for here); the run's end does not
    expect(pd.bodies().filter((b) => b.event_action === "trigger")).toEqual([]);
  }, 60_000);

  // an adversarial run: an SSH session that dropped (SIGHUP) left writes stopped, and its end said
  // "interrupted by the operator" at warning: no page, and nobody at the terminal. So did a CI job
  // cancelled (GitHub Actions sends SIGINT to a runner with no terminal).
  it.each([
    [
      "a dropped session (SIGHUP)",
      "SIGHUP",
      "run interrupted by SIGHUP (its terminal's session ended: nobody may be at it)",
    ],
    [
      "a SIGINT with no terminal (a CI job cancelled)",
      "SIGINT",
      "run interrupted by SIGINT (no terminal: a CI job cancelled, or a supervisor's stop; nobody may be at it)",
    ],
  ] as const)(
    "%s that leaves writes stopped is nobody's Ctrl-C: said so, and it pages",
    async (_what, signal, words) => {
      s = await fastSim({ instances: 1, timeScale: 100 });
      const pd = await pager();
      const dir = tempDir();
      const file = join(dir, "rb.yaml");
      const stuck = `  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${s.verifierUrl}" }, undo: { use: shell, with: { command: [node, -e, "process.exit(4)"] } } } }\n`;
      const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setTimeout(() => {}, 60000)"] } } }\n`;
      writeFileSync(
        file,
        cutoverYaml(s, { defaults: CLI_CUTOVER_DEFAULTS, head: NOTIFY(pd.url), steps: START + READY + stuck + hold }),
      );
      const child = startCli(["run", file, "--renderer", "simple"], {
        cwd: dir,
        env: { PD_KEY: "pd-routing-key-123456" },
      });
      await child.waitFor(/holding/, 30_000);
      child.child.kill(signal);
      const r = await child.done;
      expect(r.code, r.all).toBe(130);
      const end = notes(dir).at(-1)!;
      expect(end.text, r.all).toContain(words);
      expect(end.text).not.toContain("by the operator");
      expect(end.text).toContain("writes are STILL STOPPED");
      expect(end.severity).toBe("critical");
      expect(pd.bodies().filter((b) => b.event_action === "trigger").length, r.all).toBeGreaterThan(0);
    },
    60_000,
  );
});
