/**
 * Issue 38 point 3: the run's live view, `syncbook status` and `syncbook watch` say the same
 * readiness words for the same journal (src/model/readiness.ts, `fleetReadiness` and
 * `readinessLine`, their one home), and so does the line renderer (`--renderer simple`, CI logs). A journal of a run waiting for its commit (two instances: one
 * held back by its lag over the runbook's `lagBelow` and by canCommit, one ready) is folded by the
 * live view (the default renderer's panel, as it draws it) and by watch (`/state.json` from the
 * journal folder); the built CLI's `status` reads instances that answer what the journal holds.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pc from "picocolors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceRef } from "../../src/events.js";
import { readinessLine } from "../../src/model/readiness.js";
import { traitsOf } from "../../src/steps/index.js";
import { UiModel } from "../../src/ui/model.js";
import { SimpleUi } from "../../src/ui/simple.js";
import { startWatch } from "../../src/watch/index.js";
import { localServer, type LocalServer } from "../support/http-server.js";
import { tempDir } from "../support/crash-harness.js";
import { EventBuilder } from "../support/ui-fixtures.js";
import { cli } from "../support/run.js";

const HELD = {
  state: "RUNNING",
  canCommit: false,
  canWrite: false,
  info: "change event application",
  lagTimeSeconds: 45,
  collectionCopy: { estimatedTotalBytes: 1000, estimatedCopiedBytes: 1000 },
};
const READY = { ...HELD, canCommit: true, lagTimeSeconds: 1 };

describe("readiness: the live view, status and watch say the same words for the same journal", () => {
  let dir: string;
  const servers: LocalServer[] = [];
  let ui: string[] = [];
  let panel: string[] = [];
  const simple: string[] = [];
  let watch: string[] = [];
  let status = "";

  beforeAll(async () => {
    dir = tempDir("syncbook-readiness-words-");
    for (const p of [HELD, READY]) servers.push(await localServer({ status: 200, body: { progress: p } }));
    const instances: InstanceRef[] = servers.map((s, index) => ({ url: s.url, name: `sync${index}`, index }));
    const file = join(dir, "rb.yaml");
    writeFileSync(
      file,
      `runbook: 1
name: words
serviceVersion: "1.8.0"
clusters:
  cluster0: { topology: sharded, shards: 2, serverVersion: "6.0" }
  cluster1: { topology: sharded, shards: 2, serverVersion: "6.0" }
instances:
${instances.map((i) => `  - { url: "${i.url}", name: ${i.name} }`).join("\n")}
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }
  - { id: commit, commit: {} }
`,
    );
    // the journal of a run that started the sync and waits in `ready`
    const b = new EventBuilder();
    b.emit("run.started", {
      runbook: "words",
      file,
      hash: "h",
      cutover: "20250115T030000Z-h-00000000",
      instances,
      mode: "run",
      steps: [
        { index: 0, id: "start", kind: "start", title: "start" },
        { index: 1, id: "ready", kind: "waitFor", title: "ready" },
        { index: 2, id: "commit", kind: "commit", title: "commit" },
      ],
    });
    b.emit("step.started", { index: 0, id: "start", kind: "start", title: "start" });
    b.advance(100).emit("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 100 });
    b.emit("step.started", { index: 1, id: "ready", kind: "waitFor", title: "ready" });
    b.advance(100);
    b.progress(instances[0]!, HELD);
    b.progress(instances[1]!, READY);
    const folder = join(dir, ".syncbook", "words");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "20250115T030000Z.jsonl"), b.events.map((e) => JSON.stringify(e)).join("\n") + "\n");

    // 1. the live view: the default renderer's model, given the runbook's lagBelow as the run gives it
    const m = new UiModel(undefined, { lagBelowSeconds: 5 });
    for (const e of b.events) m.apply(e);
    ui = m.readinessLines(6, b.at);
    panel = m.panel(1, pc.createColors(false), b.at);
    // 1b. the line renderer, given the same plan
    const lines = new SimpleUi({
      write: (t) => simple.push(...t.split("\n").filter(Boolean)),
      colors: pc.createColors(false),
      readiness: { lagBelowSeconds: 5 },
    });
    for (const e of b.events) lines.listener(e);
    // 2. watch, from the journal folder (no reads of its own)
    const w = await startWatch({
      folder,
      traits: traitsOf,
      redact: (s) => s,
      host: "127.0.0.1",
      port: 0,
      noLive: true,
      lagBelowSeconds: 5,
      tickMs: 60_000,
    });
    try {
      watch = (await w.tick()).readiness.map((r) => `${r.instance}: ${readinessLine(r)}`);
    } finally {
      await w.close();
    }
    // 3. status, the built CLI, reading the instances (which answer what the journal holds)
    const r = await cli(["status", file], { cwd: dir });
    status = r.stdout;
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("watch says why sync0 is not ready and that sync1 is", () => {
    expect(watch).toEqual([
      "sync0: not ready (ETA unknown): lag 45s, not below the runbook's lagBelow 5s (trend not known yet)",
      "sync1: ready",
    ]);
  });

  it("the live view says the same words, in its panel under the waiting step", () => {
    expect(ui).toEqual([
      "sync0  not ready (ETA unknown): lag 45s, not below the runbook's lagBelow 5s (trend not known yet)",
      "sync1  ready",
    ]);
    const at = panel.indexOf("ready to commit?");
    expect(at).toBeGreaterThan(0);
    expect(panel.slice(at + 1, at + 3)).toEqual(ui);
  });

  it("the line renderer says the same words, once, under the fleet's read", () => {
    const at = simple.findIndex((l) => / ready to commit\?$/.test(l));
    expect(at).toBeGreaterThan(0);
    expect(simple.slice(at + 1, at + 3)).toEqual(ui.map((l) => `         ${l}`));
    expect(simple.filter((l) => l.includes("ready to commit?"))).toHaveLength(1);
  });

  it("status says the same words", () => {
    expect(status).toContain(
      "      not ready (ETA unknown): lag 45s, not below the runbook's lagBelow 5s (trend not known yet)",
    );
    expect(status).toMatch(/^ {6}ready$/m);
  });
});
