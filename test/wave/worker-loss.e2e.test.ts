/**
 * Issue 37, point 5: a journal that outlives the worker that wrote it. The Argo plan
 * (`wave plan --format argo`, through the built CLI) is run as Argo would run it, with its own
 * paths: its container script, its environment (each runbook variable from the Kubernetes Secret
 * the wave maps it to), its working directory and its volume mount, the PersistentVolumeClaim
 * standing as a folder both workers see. The first worker is killed (kill -9: the pod is lost,
 * its last steps never run) inside the write-stop window and leaves its lock naming its own host;
 * the retry on another worker (its own state folder, as a new pod has) continues the journal
 * on the volume with `--resume` and finishes the cutover: one start, one commit, no write lost.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Simulator } from "../../src/sim/index.js";
import { CLI, cli } from "../support/run.js";
import {
  CLI_CUTOVER_DEFAULTS,
  COMMIT,
  COMMITTED,
  DRAINED,
  READY,
  START,
  cutoverYaml,
  fastSim,
  posts,
  stopVia,
  tempDir,
} from "../support/crash-harness.js";
import { spawn } from "node:child_process";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Workflow as YAML
type Json = any;

let s: Simulator | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const TOKEN = "hook-token-value-31337";

/** A worker: the plan's container, its paths mapped onto this machine's folders. */
function worker(
  wf: Json,
  at: { work: string; volume: string; state: string; bin: string },
  secrets: Record<string, Record<string, string>>,
) {
  const dag = wf.spec.templates.find((t: Json) => t.dag).dag.tasks[0];
  const params = Object.fromEntries(dag.arguments.parameters.map((p: Json) => [p.name, p.value]));
  const tpl = wf.spec.templates.find((t: Json) => t.name === dag.template);
  const c = tpl.container;
  const volume = wf.spec.volumes.find((v: Json) => v.persistentVolumeClaim);
  const mount = c.volumeMounts.find((m: Json) => m.name === volume.name).mountPath as string;
  // a path of the plan, on this machine: under the volume's mount, or under the working directory
  const local = (p: string): string =>
    p === mount || p.startsWith(`${mount}/`)
      ? at.volume + p.slice(mount.length)
      : p === c.workingDir || p.startsWith(`${c.workingDir}/`)
        ? at.work + p.slice(c.workingDir.length)
        : p;
  const env: Record<string, string> = {};
  for (const e of c.env as Json[]) {
    if (e.valueFrom) env[e.name] = secrets[e.valueFrom.secretKeyRef.name]![e.valueFrom.secretKeyRef.key]!;
    else
      env[e.name] = local(String(e.value).replace(/\{\{inputs\.parameters\.(\w+)\}\}/g, (_m, k: string) => params[k]));
  }
  expect(c.command.slice(0, 2)).toEqual(["sh", "-c"]);
  const child = spawn(c.command[0], [c.command[1], c.command[2]], {
    cwd: at.work,
    env: {
      ...process.env,
      ...env,
      PATH: `${at.bin}:${process.env.PATH ?? ""}`,
      // a pod of its own: its own per-user state (the fleet's locks), nothing of the other's
      SYNCBOOK_STATE_DIR: at.state,
      CI: "1",
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let all = "";
  child.stdout.on("data", (d: Buffer) => (all += d.toString()));
  child.stderr.on("data", (d: Buffer) => (all += d.toString()));
  const done = new Promise<{ code: number | null; all: string }>((r) => child.on("close", (code) => r({ code, all })));
  return {
    child,
    done,
    output: () => all,
    journals: env.JOURNALS!,
    name: env.NAME!,
  };
}

describe("a journal that outlives its worker (Argo Workflows, the plan's own paths)", () => {
  it("the pod is lost inside the window; the retry on another worker resumes the journal on the volume and finishes", async () => {
    s = await fastSim({ instances: 2, timeScale: 100 });
    const root = tempDir();
    const work = join(root, "work");
    const volume = join(root, "volume");
    const bin = join(root, "bin");
    for (const d of [work, volume, bin]) mkdirSync(d, { recursive: true });
    // the image's `syncbook`: the built CLI
    writeFileSync(join(bin, "syncbook"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, "syncbook"), 0o755);
    // a hook that needs the secret, and one that holds inside the window until `go` exists
    const gate = `  - { id: gate, hook: { use: shell, with: { command: [node, -e, "process.exit(process.argv[1] === '${TOKEN}' ? 0 : 9)", "\${env.HOOK_TOKEN}"] } } }\n`;
    const hold = `  - { id: hold, hook: { use: shell, with: { command: [node, -e, "console.log('holding'); setInterval(() => { if (require('fs').existsSync('go')) process.exit(0) }, 50)"] } } }\n`;
    writeFileSync(
      join(work, "rb.yaml"),
      cutoverYaml(s, {
        defaults: CLI_CUTOVER_DEFAULTS,
        steps: START + READY + gate + stopVia(s.verifierUrl) + hold + DRAINED + COMMIT + COMMITTED,
      }),
    );
    writeFileSync(
      join(work, "wave.yaml"),
      "wave: 1\nname: lost-pod\nmaxParallel: 1\njournal: { volumeClaim: cutover-journals }\nsecrets:\n  HOOK_TOKEN: { secret: cutover, key: hook-token }\nrunbooks: [rb.yaml]\n",
    );
    const planned = await cli(["wave", "plan", "wave.yaml", "--format", "argo"], { cwd: work });
    expect(planned.code, planned.all).toBe(0);
    const wf = parse(planned.stdout);
    const secrets = { cutover: { "hook-token": TOKEN } };

    const a = worker(wf, { work, volume, bin, state: join(root, "state-a") }, secrets);
    // the journal is on the volume, not in the pod
    expect(a.journals.startsWith(volume)).toBe(true);
    for (let i = 0; i < 600 && !/holding/.test(a.output()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(a.output()).toMatch(/holding/);
    a.child.kill("SIGKILL");
    await a.done;
    expect(s.control.state().writes.enabled, "the lost pod had stopped writes").toBe(false);
    // the lost pod's lock names its host: another pod could never check it
    const lockFile = join(a.journals, a.name, "syncbook.lock");
    const lock = JSON.parse(readFileSync(lockFile, "utf8")) as { host: string };
    writeFileSync(lockFile, JSON.stringify({ ...lock, host: "lost-pod-a" }));
    writeFileSync(join(work, "go"), "");

    const b = worker(wf, { work, volume, bin, state: join(root, "state-b") }, secrets);
    const r = await b.done;
    expect(r.code, r.all).toBe(0);
    expect(r.all).toMatch(/journal: .*volume/);
    expect(r.all).toMatch(/▶ run crash \(resume\)/);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([1, 1]);
    const st = s.control.state();
    expect(st.instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
    expect(st.writes.lost).toBe(0);
    // no secret in anything the pods wrote
    expect(r.all + a.output()).not.toContain(TOKEN);
  }, 120_000);
});
