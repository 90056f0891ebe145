/**
 * A linted wave for the engine that runs it: a GitHub Actions matrix (`include` entries with a
 * stage, one job per stage) or an Argo Workflow (a DAG with a task per runbook). syncbook
 * schedules nothing itself: the engine's `max-parallel` / `parallelism` bound how many cut over
 * at once, and its lease (a concurrency group, a mutex) keyed by the runbook's name keeps two
 * jobs off one runbook.
 */
import type { WavePlan } from "./lint.js";

export interface GithubMatrix {
  include: { name: string; runbook: string; stage: number }[];
}

/** `{"include": [{name, runbook, stage}, …]}`, of one stage when `stage` is given. */
export function githubMatrix(plan: WavePlan, stage?: number): GithubMatrix {
  return {
    include: plan.items
      .filter((i) => stage === undefined || i.stage === stage)
      .map((i) => ({ name: i.name, runbook: i.runbook, stage: i.stage })),
  };
}

/** The number of stages (the GitHub workflow needs a job for each). */
export const stageCount = (plan: WavePlan): number => 1 + Math.max(-1, ...plan.items.map((i) => i.stage));

/**
 * DAG task names: lower-case letters, digits and `-`, starting with a letter or digit (Argo
 * refers to them in expressions, where `.` and `_` do not belong). Made unique when two runbook
 * names fold to one.
 */
export function argoTaskNames(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  for (const n of names) {
    const base =
      n
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, "-")
        .replace(/^-+|-+$/g, "")
        .slice(0, 60) || "runbook";
    let name = base;
    for (let i = 2; used.has(name); i++) name = `${base}-${i}`;
    used.add(name);
    out.set(n, name);
  }
  return out;
}

/** Where the job keeps the journal and the report (uploaded as artifacts, success or not). */
const JOURNALS = "/work/.syncbook";
const REPORTS = "/work/reports";

/**
 * An Argo Workflow running the wave: a DAG task per runbook, `dependencies` from `after`,
 * `parallelism: maxParallel`, and a mutex per runbook name (the lease: a second submission of
 * the wave waits rather than driving the same fleet). The image is a parameter: one with node,
 * syncbook and the repository's runbooks at /work.
 */
export function argoWorkflow(plan: WavePlan): Record<string, unknown> {
  const tasks = argoTaskNames(plan.items.map((i) => i.name));
  const task = (name: string): string => tasks.get(name) ?? name;
  // the runbook's name and path go in as parameters, never into the script's text
  const script = [
    "set -u",
    'mkdir -p "$JOURNALS" "$REPORTS/$NAME"',
    // a journal from an earlier attempt (restored into $JOURNALS): continue it, never start again
    'if ls "$JOURNALS/$NAME"/*.jsonl >/dev/null 2>&1; then resume="--resume"; else resume=""; fi',
    'exec syncbook run "$RUNBOOK" $resume --yes --renderer simple --journal-dir "$JOURNALS" --report "$REPORTS/$NAME"',
  ].join("\n");
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Workflow",
    metadata: {
      generateName: `${argoTaskNames([plan.name]).get(plan.name) ?? "wave"}-`,
      labels: { "syncbook/wave": argoTaskNames([plan.name]).get(plan.name) ?? "wave" },
    },
    spec: {
      entrypoint: "wave",
      parallelism: plan.maxParallel,
      arguments: {
        parameters: [
          {
            name: "image",
            value: "ghcr.io/example/cutovers:latest",
            description: "an image with node, syncbook and this repository's runbooks at /work",
          },
        ],
      },
      templates: [
        {
          name: "wave",
          dag: {
            tasks: plan.items.map((i) => ({
              name: task(i.name),
              template: "cutover",
              ...(i.after.length ? { dependencies: i.after.map(task) } : {}),
              arguments: {
                parameters: [
                  { name: "name", value: i.name },
                  { name: "runbook", value: i.runbook },
                ],
              },
            })),
          },
        },
        {
          name: "cutover",
          inputs: { parameters: [{ name: "name" }, { name: "runbook" }] },
          // the lease: one job per runbook at a time, whatever submitted it
          synchronization: { mutexes: [{ name: "syncbook-{{inputs.parameters.name}}" }] },
          container: {
            name: "main",
            image: "{{workflow.parameters.image}}",
            workingDir: "/work",
            command: ["sh", "-c", script],
            env: [
              { name: "NAME", value: "{{inputs.parameters.name}}" },
              { name: "RUNBOOK", value: "{{inputs.parameters.runbook}}" },
              { name: "JOURNALS", value: JOURNALS },
              { name: "REPORTS", value: REPORTS },
            ],
          },
          outputs: {
            // kept whatever the outcome: a failed cutover's journal is what --resume continues
            artifacts: [
              { name: "journal", path: JOURNALS, optional: true },
              { name: "report", path: REPORTS, optional: true },
            ],
          },
        },
      ],
    },
  };
}
