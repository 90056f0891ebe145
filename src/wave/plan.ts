/**
 * A linted wave for the engine that runs it: a GitHub Actions matrix (`include` entries with a
 * stage, one job per stage) or an Argo Workflow (a DAG with a task per runbook). syncbook
 * schedules nothing itself: the engine's `max-parallel` / `parallelism` bound how many cut over
 * at once, and its lease (a concurrency group, a mutex) keyed by the runbook's name keeps two
 * jobs off one runbook.
 */
import { ExitCode, UserError } from "../errors.js";
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

/**
 * Where a task keeps its journal: on the wave's PersistentVolumeClaim, mounted here. A volume
 * that outlives the pod is the one place a journal survives a lost worker: an output artifact is
 * saved by the pod's own wait container, which dies with the pod (docs/waves.md).
 */
export const ARGO_JOURNALS = "/journals";
const JOURNAL_VOLUME = "journals";
/** Where the task writes its report (an output artifact). */
const REPORTS = "/work/reports";

/** The environment a GitHub Actions job step gives `syncbook run`: each runbook variable from its secret. */
export function githubEnv(plan: WavePlan): Record<string, string> {
  return Object.fromEntries(Object.entries(plan.secrets).map(([name, s]) => [name, `\${{ secrets.${s.github} }}`]));
}

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
  if (!plan.volumeClaim)
    throw new UserError(
      `the wave ${plan.name} names no volume for its journals: an Argo task keeps its journal on a PersistentVolumeClaim, so that --resume continues it after the pod was lost`,
      {
        hint: "Add `journal: { volumeClaim: <claim> }` to the wave file (a PersistentVolumeClaim in the workflow's namespace; ReadWriteMany when tasks may run on several nodes).",
        exitCode: ExitCode.usage,
      },
    );
  const script = [
    "set -u",
    'mkdir -p "$JOURNALS" "$REPORTS/$NAME"',
    // the lease (the mutex below) stands for the journal lock across pods: a lock left by a pod
    // that was lost names a host no other pod can check, and would refuse every retry
    'rm -f "$JOURNALS/$NAME/syncbook.lock"',
    // the journal of an earlier attempt (on the volume): continue it, never start again
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
      volumes: [{ name: JOURNAL_VOLUME, persistentVolumeClaim: { claimName: plan.volumeClaim } }],
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
          // a pod that was deleted or whose node was lost is retried, and continues the journal on
          // the volume ("To retry pods that were deleted, set retryStrategy.retryPolicy: OnError":
          // argoproj/argo-workflows docs/tolerating-pod-deletion.md, main); a cutover that failed
          // (the container's exit code) is not: a person reads why first
          retryStrategy: { limit: 2, retryPolicy: "OnError" },
          container: {
            name: "main",
            image: "{{workflow.parameters.image}}",
            workingDir: "/work",
            command: ["sh", "-c", script],
            env: [
              { name: "NAME", value: "{{inputs.parameters.name}}" },
              { name: "RUNBOOK", value: "{{inputs.parameters.runbook}}" },
              { name: "JOURNALS", value: ARGO_JOURNALS },
              { name: "REPORTS", value: REPORTS },
              // each runbook variable from the Kubernetes Secret the wave maps it to (never a value here)
              ...Object.entries(plan.secrets).map(([name, s]) => ({
                name,
                valueFrom: { secretKeyRef: { name: s.secret, key: s.key } },
              })),
            ],
            volumeMounts: [{ name: JOURNAL_VOLUME, mountPath: ARGO_JOURNALS }],
          },
          outputs: {
            // a copy for the wave report (report --wave), kept whatever the outcome; what --resume
            // continues is the journal on the volume
            artifacts: [
              { name: "journal", path: `${ARGO_JOURNALS}/{{inputs.parameters.name}}`, optional: true },
              { name: "report", path: REPORTS, optional: true },
            ],
          },
        },
      ],
    },
  };
}
