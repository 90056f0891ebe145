/**
 * Waves end to end through the built CLI (issue 28): the 4-runbook example wave with `after`
 * ordering lints, plans for GitHub Actions and Argo, rehearses SAFE with a wave report linking
 * each runbook's; a failing runbook fails the wave and skips what comes after it; `report --wave`
 * builds the wave report from the reports and journals an engine's jobs upload.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Workflow } from "@kubernetes-models/argo-workflows/argoproj.io/v1alpha1/Workflow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Simulator } from "../../src/sim/index.js";
import type { WaveReport } from "../../src/wave/report.js";
import { CUTOVER, cli, runbookFor, sim, startCli, tempDir, writeRunbook } from "../support/run.js";
import { assertWellFormedXml } from "../support/xml.js";

const root = process.cwd();
const wave = (...args: string[]) => cli(["wave", ...args], { cwd: root });
const EXAMPLE = "waves/example.yaml";
const FIXTURES = "test/fixtures/wave";

const dirs: string[] = [];
const temp = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

beforeAll(() => {
  expect(existsSync(join(root, "dist/cli/syncbook.cjs")), "run `npm run build` first").toBe(true);
});

describe("wave lint", () => {
  it("the example wave: exit 0, every file linted", async () => {
    const r = await wave("lint", EXAMPLE);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/✔ 5 files linted: no problems/);
  });
  it("a rule broken: exit 1, at file:line:col in lint's formats (github, json, junit, sarif)", async () => {
    const f = `${FIXTURES}/unknown-name.wave.yaml`;
    const gh = await wave("lint", f, "--format", "github");
    expect(gh.code).toBe(1);
    expect(gh.stdout).toContain(`::error file=${f},line=6,col=29,title=wave-unknown-name::`);
    const json = JSON.parse((await wave("lint", f, "--format", "json")).stdout) as {
      diagnostics: { rule: string; line: number }[];
    };
    expect(json.diagnostics.find((d) => d.rule === "wave-unknown-name")?.line).toBe(6);
    const junit = await wave("lint", f, "--format", "junit");
    expect(assertWellFormedXml(junit.stdout).root).toBe("testsuites");
    const sarif = JSON.parse((await wave("lint", f, "--format", "sarif")).stdout) as {
      runs: { tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string }[] }[];
    };
    expect(sarif.runs[0]?.results.map((x) => x.ruleId)).toContain("wave-unknown-name");
    expect(sarif.runs[0]?.tool.driver.rules.map((x) => x.id)).toContain("wave-after-cycle");
  });
  it("pretty: the wave file's line under the finding, with the hint", async () => {
    const r = await wave("lint", `${FIXTURES}/cycle.wave.yaml`);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`--> ${FIXTURES}/cycle.wave.yaml:6:29`);
    expect(r.stdout).toContain("bravo → delta → charlie → bravo");
    expect(r.stdout).toContain("hint: Remove one of the `after` entries of the cycle.");
  });
  it("usage: a missing wave file, a folder, an unknown format: exit 2, a message and a hint", async () => {
    for (const args of [["nope.yaml"], ["waves"], [EXAMPLE, "--format", "xml"]]) {
      const r = await wave("lint", ...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/syncbook: |error: /);
    }
    expect((await wave("lint", "nope.yaml")).stderr).toContain("hint:");
  });
});

describe("wave plan", () => {
  it("--format github: one JSON object, include entries with name, runbook and stage", async () => {
    const r = await wave("plan", EXAMPLE, "--format", "github");
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toEqual({
      include: [
        { name: "orders", runbook: "runbooks/wave/orders.yaml", stage: 0 },
        { name: "inventory", runbook: "runbooks/wave/inventory.yaml", stage: 0 },
        { name: "billing", runbook: "runbooks/wave/billing.yaml", stage: 1 },
        { name: "reporting", runbook: "runbooks/wave/reporting.yaml", stage: 2 },
      ],
    });
    const one = await wave("plan", EXAMPLE, "--stage", "1");
    expect(JSON.parse(one.stdout)).toEqual({
      include: [{ name: "billing", runbook: "runbooks/wave/billing.yaml", stage: 1 }],
    });
    expect(JSON.parse((await wave("plan", EXAMPLE, "--stage", "7")).stdout)).toEqual({ include: [] });
  });
  it("--format argo: a Workflow valid under the Argo Workflows schema, a DAG task per runbook", async () => {
    const r = await wave("plan", EXAMPLE, "--format", "argo");
    expect(r.code).toBe(0);
    const doc = parse(r.stdout) as {
      kind: string;
      spec: {
        parallelism: number;
        entrypoint: string;
        templates: {
          name: string;
          dag?: { tasks: { name: string; template: string; dependencies?: string[] }[] };
          synchronization?: { mutexes?: { name: string }[] };
        }[];
      };
    };
    // the schema the Argo Workflows project publishes (as @kubernetes-models/argo-workflows ships it)
    expect(() => new Workflow(doc as never).validate()).not.toThrow();
    expect(doc.kind).toBe("Workflow");
    expect(doc.spec.parallelism).toBe(2);
    const entry = doc.spec.templates.find((t) => t.name === doc.spec.entrypoint);
    expect(entry?.dag?.tasks.map((t) => [t.name, t.dependencies ?? []])).toEqual([
      ["orders", []],
      ["inventory", []],
      ["billing", ["orders"]],
      ["reporting", ["billing", "inventory"]],
    ]);
    // every task runs a template that holds a mutex keyed by the runbook's name
    for (const t of entry?.dag?.tasks ?? []) {
      const tpl = doc.spec.templates.find((x) => x.name === t.template);
      expect(tpl?.synchronization?.mutexes?.[0]?.name).toBe("syncbook-{{inputs.parameters.name}}");
    }
    expect(r.stdout).toMatch(/- name: name\n\s+value: reporting/);
  });
  it("a wave that does not lint is never planned: exit 2, its findings on stderr, nothing on stdout", async () => {
    const r = await wave("plan", `${FIXTURES}/cycle.wave.yaml`, "--format", "argo");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("wave-after-cycle");
    expect(r.stderr).toContain("nothing was planned");
  });
  it("usage: --stage with argo, a stage that is not a number", async () => {
    expect((await wave("plan", EXAMPLE, "--format", "argo", "--stage", "1")).code).toBe(2);
    expect((await wave("plan", EXAMPLE, "--stage", "one")).code).toBe(2);
    expect((await wave("plan", EXAMPLE, "--format", "gitlab")).code).toBe(2);
  });
});

describe("wave rehearse", () => {
  it("the example wave: every runbook SAFE in after order, exit 0, one wave report linking each runbook's", async () => {
    const out = temp();
    const r = await wave("rehearse", EXAMPLE, "--report", out);
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/^wave shop-migration: SAFE \(4 SAFE\)/);
    for (const n of ["orders", "inventory", "billing", "reporting"])
      expect(r.stdout).toMatch(new RegExp(`${n}\\s+SAFE`));
    // after order: billing starts only once orders is SAFE; reporting once billing and inventory are
    const at = (s: string): number => r.stderr.indexOf(s);
    expect(at("orders: SAFE")).toBeGreaterThan(-1);
    expect(at("billing: rehearsing")).toBeGreaterThan(at("orders: SAFE"));
    expect(at("reporting: rehearsing")).toBeGreaterThan(at("billing: SAFE"));
    expect(at("reporting: rehearsing")).toBeGreaterThan(at("inventory: SAFE"));
    const report = JSON.parse(readFileSync(join(out, "wave.json"), "utf8")) as WaveReport;
    expect(report.outcome).toBe("PASSED");
    expect(report.runbooks.map((x) => [x.name, x.status, x.stage])).toEqual([
      ["orders", "SAFE", 0],
      ["inventory", "SAFE", 0],
      ["billing", "SAFE", 1],
      ["reporting", "SAFE", 2],
    ]);
    const html = readFileSync(join(out, "wave.html"), "utf8");
    for (const x of report.runbooks) {
      expect(x.report).toBe(`${x.name}/report.html`);
      expect(existsSync(join(out, x.report as string))).toBe(true);
      expect(html).toContain(`href="${x.report}"`);
    }
    const junit = assertWellFormedXml(readFileSync(join(out, "junit.xml"), "utf8"));
    expect(junit.elements.filter((e) => e.name === "testcase")).toHaveLength(4);
    expect(junit.elements.filter((e) => e.name === "failure")).toHaveLength(0);

    // report --wave over the same folder (as artifacts) with the wave file: the same statuses
    const again = temp();
    const rebuilt = await cli(["report", "--wave", out, "--wave-file", EXAMPLE, "--out", again], { cwd: root });
    expect(rebuilt.code, rebuilt.all).toBe(0);
    const second = JSON.parse(readFileSync(join(again, "wave.json"), "utf8")) as WaveReport;
    expect(second.runbooks.map((x) => [x.name, x.status, x.stage])).toEqual(
      report.runbooks.map((x) => [x.name, x.status, x.stage]),
    );
    for (const x of second.runbooks) expect(existsSync(join(again, x.report as string))).toBe(true);
  }, 120_000);

  it("a failing runbook fails the wave (exit 1) and skips what comes after it; the others still run", async () => {
    const out = temp();
    const r = await wave("rehearse", `${FIXTURES}/fails.wave.yaml`, "--report", out);
    expect(r.code, r.all).toBe(1);
    expect(r.stdout).toMatch(/^wave fails: NOT SAFE/);
    const report = JSON.parse(readFileSync(join(out, "wave.json"), "utf8")) as WaveReport;
    expect(report.outcome).toBe("FAILED");
    expect(Object.fromEntries(report.runbooks.map((x) => [x.name, x.status]))).toEqual({
      alpha: "SAFE",
      fails: "FAILED",
      charlie: "SKIPPED",
      delta: "SKIPPED",
      bravo: "SAFE",
    });
    expect(report.runbooks.find((x) => x.name === "fails")?.message).toMatch(/too-soon/);
    expect(report.runbooks.find((x) => x.name === "charlie")?.message).toBe("fails was FAILED");
    // a skipped runbook never started: no simulator, no report of its own
    expect(existsSync(join(out, "charlie"))).toBe(false);
    const junit = assertWellFormedXml(readFileSync(join(out, "junit.xml"), "utf8"));
    expect(junit.elements.filter((e) => e.name === "failure")).toHaveLength(1);
    expect(junit.elements.filter((e) => e.name === "skipped")).toHaveLength(2);
  }, 120_000);

  it("maxParallel bounds how many run at once", async () => {
    const r = await wave("rehearse", `${FIXTURES}/ok.wave.yaml`, "--max-parallel", "1");
    expect(r.code, r.all).toBe(0);
    // one at a time: each start is followed by its own end before the next start
    const lines = r.stderr.split("\n").filter((l) => /: (rehearsing|SAFE)/.test(l));
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]).toMatch(/rehearsing/);
      expect(lines[i + 1]).toMatch(/SAFE/);
    }
  }, 120_000);

  it("Ctrl-C: the rehearsals running stop (INTERRUPTED), none starts after, exit 130, the wave report still written", async () => {
    const out = temp();
    const run = startCli(["wave", "rehearse", `${FIXTURES}/ok.wave.yaml`, "--report", out, "--time-scale", "5"], {
      cwd: root,
    });
    await run.waitFor(/alpha: rehearsing/, 30_000);
    run.child.kill("SIGINT");
    const r = await run.done;
    expect(r.code, r.all).toBe(130);
    const report = JSON.parse(readFileSync(join(out, "wave.json"), "utf8")) as WaveReport;
    expect(report.outcome).toBe("FAILED");
    const by = Object.fromEntries(report.runbooks.map((x) => [x.name, x.status]));
    expect(by.alpha).toBe("INTERRUPTED");
    // charlie comes after alpha: never started
    expect(by.charlie).toBe("SKIPPED");
    expect(existsSync(join(out, "charlie"))).toBe(false);
  }, 120_000);

  it("a wave that does not lint is not rehearsed: exit 2", async () => {
    const r = await wave("rehearse", `${FIXTURES}/shared-instance.wave.yaml`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("wave-shared-instance");
    expect(r.stderr).not.toContain("hunter2");
  });
});

describe("report --wave from an engine's artifacts (journals of real runs)", () => {
  let s1: Simulator;
  let s2: Simulator;
  beforeAll(async () => {
    // s2 copies far more than its runbook waits for: its job fails
    [s1, s2] = await Promise.all([sim(), sim({ data: "500GiB" })]);
  });
  afterAll(async () => {
    await Promise.all([s1?.close(), s2?.close()]);
  });

  it("a job that finished, a job that failed, and one never run after it: DONE, FAILED, SKIPPED", async () => {
    const work = temp();
    const named = (yaml: string, name: string): string => yaml.replace("name: e2e", `name: ${name}`);
    const good = writeRunbook(work, named(runbookFor(s1, CUTOVER), "good"), "good.yaml");
    const bad = writeRunbook(
      work,
      named(
        runbookFor(
          s2,
          "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n  - { id: too-soon, waitFor: { copyComplete: true, timeout: 300ms } }\n",
        ),
        "bad",
      ),
      "bad.yaml",
    );
    writeRunbook(
      work,
      named(runbookFor(s1, CUTOVER), "later")
        .replace(s1.instances[0]?.url ?? "", "http://127.0.0.1:9")
        .replace(s1.verifierUrl, "http://127.0.0.1:10"),
      "later.yaml",
    );
    const waveFile = join(work, "w.yaml");
    writeFileSync(
      waveFile,
      "wave: 1\nname: real\nmaxParallel: 2\nrunbooks:\n  - good.yaml\n  - bad.yaml\n  - { path: later.yaml, after: [bad] }\n",
    );
    // each job keeps its journal in a folder of its own, uploaded as an artifact
    const artifacts = join(work, "artifacts");
    const [g, b] = await Promise.all([
      cli(["run", good, "--yes", "--renderer", "simple", "--journal-dir", join(artifacts, "journal-good")], {
        cwd: work,
      }),
      cli(["run", bad, "--yes", "--renderer", "simple", "--journal-dir", join(artifacts, "journal-bad")], {
        cwd: work,
      }),
    ]);
    expect(g.code, g.all).toBe(0);
    expect(b.code, b.all).toBe(1);
    mkdirSync(join(artifacts, "noise"));
    writeFileSync(join(artifacts, "noise", "report.json"), "{not json");

    const out = join(work, "wave-report");
    const r = await cli(["report", "--wave", artifacts, "--wave-file", waveFile, "--out", out], { cwd: work });
    expect(r.code, r.all).toBe(0);
    expect(r.stdout).toMatch(/wave real: FAILED \(1 DONE, 1 FAILED, 1 SKIPPED\)/);
    expect(r.stderr).toMatch(/warning: .*noise\/report\.json: not a run's report\.json/);
    const report = JSON.parse(readFileSync(join(out, "wave.json"), "utf8")) as WaveReport;
    expect(report.runbooks.map((x) => [x.name, x.status, x.committed ?? null])).toEqual([
      ["good", "DONE", true],
      ["bad", "FAILED", false],
      ["later", "SKIPPED", null],
    ]);
    expect(report.runbooks[1]?.message).toMatch(/too-soon/);
    // each journal's report is built beside the wave report and linked
    for (const x of report.runbooks.slice(0, 2)) expect(existsSync(join(out, x.report as string))).toBe(true);
    expect(readFileSync(join(out, "wave.html"), "utf8")).toContain('href="journals/bad/report.html"');

    // without the wave file: what was uploaded, by name
    const bare = await cli(["report", "--wave", artifacts, "--out", join(work, "bare")], { cwd: work });
    expect(bare.code, bare.all).toBe(0);
    const r2 = JSON.parse(readFileSync(join(work, "bare", "wave.json"), "utf8")) as WaveReport;
    expect(r2.runbooks.map((x) => [x.name, x.status])).toEqual([
      ["bad", "FAILED"],
      ["good", "DONE"],
    ]);
    expect(r2.outcome).toBe("FAILED");

    // a wave cut short (the workflow cancelled after the first job): only good's journal was
    // uploaded; without the wave file nothing says bad and later never ran, so never PASSED
    const short = join(work, "short");
    cpSync(join(artifacts, "journal-good"), join(short, "journal-good"), { recursive: true });
    const cut = await cli(["report", "--wave", short, "--out", join(work, "short-report")], { cwd: work });
    expect(cut.code, cut.all).toBe(0);
    expect(cut.stdout).toMatch(/^wave short: UNKNOWN \(1 DONE\)/);
    expect(cut.stderr).toMatch(/warning: without --wave-file the runbooks that never ran .* never PASSED/);
    const r3 = JSON.parse(readFileSync(join(work, "short-report", "wave.json"), "utf8")) as WaveReport;
    expect(r3.outcome).toBe("UNKNOWN");
    expect(readFileSync(join(work, "short-report", "wave.html"), "utf8")).toMatch(
      /<h1>wave short: <span[^>]*>UNKNOWN</,
    );
    // with it: the runbooks that never ran are NOT RUN, and the wave FAILED
    const known = await cli(["report", "--wave", short, "--wave-file", waveFile, "--out", join(work, "short-known")], {
      cwd: work,
    });
    expect(known.stdout).toMatch(/wave real: FAILED \(1 DONE, 1 NOT RUN, 1 SKIPPED\)/);
  }, 120_000);

  it("a runner killed mid-cutover: its uploaded journal (no lock) resumes on another machine's folder, and the wave report says DONE", async () => {
    const s3 = await sim({ data: "20GiB" });
    try {
      const work = temp();
      const rb = writeRunbook(work, runbookFor(s3, CUTOVER).replace("name: e2e", "name: moved"), "moved.yaml");
      const first = join(work, "runner-1");
      const run = startCli(["run", rb, "--yes", "--renderer", "simple", "--journal-dir", first], { cwd: work });
      await run.waitFor(/copy \d+%/, 30_000);
      run.child.kill("SIGKILL");
      await run.done;
      // the artifact: the journal and its witness (upload-artifact paths **/*.jsonl and
      // **/*.jsonl.witness, docs/waves.md), downloaded elsewhere
      const journals = readdirSync(join(first, "moved")).filter((f) => f.endsWith(".jsonl"));
      expect(journals).toHaveLength(1);
      expect(readdirSync(join(first, "moved"))).toContain("syncbook.lock");
      const second = join(work, "runner-2");
      mkdirSync(join(second, "moved"), { recursive: true });
      const journal = join(second, "moved", journals[0] as string);
      copyFileSync(join(first, "moved", journals[0] as string), journal);
      copyFileSync(join(first, "moved", `${journals[0] as string}.witness`), `${journal}.witness`);
      const resumed = await cli(
        ["run", rb, "--yes", "--renderer", "simple", "--journal-dir", second, "--resume", journal],
        { cwd: work },
      );
      expect(resumed.code, resumed.all).toBe(0);
      // start was sent once, by the first runner
      expect(s3.control.counts().instances[0]?.["POST /api/v1/start"]).toBe(1);
      const out = join(work, "wave");
      const r = await cli(["report", "--wave", second, "--out", out], { cwd: work });
      expect(r.code, r.all).toBe(0);
      const report = JSON.parse(readFileSync(join(out, "wave.json"), "utf8")) as WaveReport;
      expect(report.runbooks.map((x) => [x.name, x.status, x.committed])).toEqual([["moved", "DONE", true]]);
      // its wave's list was not given: the one runbook seen is DONE, the wave is not said to pass
      expect(report.outcome).toBe("UNKNOWN");
    } finally {
      await s3.close();
    }
  }, 120_000);

  it("an empty folder without a wave file: exit 2 with a hint", async () => {
    const r = await cli(["report", "--wave", temp()], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no report.json and no journal");
    expect(r.stderr).toContain("hint:");
  });
});
