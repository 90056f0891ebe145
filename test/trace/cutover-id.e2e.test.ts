/**
 * A trace's id is the cutover's, derived by the one function that names a cutover
 * (`cutoverOfRun`, src/journal/cutover.ts), also for a journal whose runner wrote no cutover id:
 * `report --otlp` then names the cutover as a resume of that journal names it to its notifiers
 * and its own trace (issue 40; the span fold had a derivation of its own). Through the built CLI,
 * which loads OpenTelemetry as a run does.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { cutoverOfRun } from "../../src/journal/cutover.js";
import { openJournal } from "../../src/journal/index.js";
import { traceIdOf } from "../../src/trace/ids.js";
import { eventFactory, inst, STEPS, tempDir } from "../support/journal.js";
import { cli } from "../support/run.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

function journalOf(cutover: string | undefined): { file: string; started: RunEvent } {
  const ev = eventFactory();
  const started = ev("run.started", {
    runbook: "sales",
    file: "rb.yaml",
    hash: "sha256:0123456789abcdef",
    instances: [inst(0)],
    mode: "run",
    steps: STEPS,
    ...(cutover ? { cutover } : {}),
  });
  const j = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  for (const e of [
    started,
    ev("step.started", STEPS[0]!),
    ev("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 3 }),
    ev("run.finished", { outcome: "ok", exitCode: 0, committed: false, durationMs: 9 }),
  ])
    j.write(e);
  j.close();
  return { file: j.file, started };
}

async function traceIds(file: string): Promise<string[]> {
  const out = join(dir, "trace.json");
  const r = await cli(["report", file, "--otlp", out], { cwd: dir });
  expect(r.code, r.all).toBe(0);
  const body = JSON.parse(readFileSync(out, "utf8")) as {
    resourceSpans: { scopeSpans: { spans: { traceId: string }[] }[] }[];
  };
  return [...new Set(body.resourceSpans.flatMap((x) => x.scopeSpans.flatMap((s) => s.spans.map((p) => p.traceId))))];
}

describe("the trace of a cutover", () => {
  it("of a journal without a cutover id is the id cutoverOfRun derives", async () => {
    const { file, started } = journalOf(undefined);
    expect(await traceIds(file)).toEqual([traceIdOf(cutoverOfRun(started))]);
  }, 30_000);

  it("of a journal with one is that id", async () => {
    const { file } = journalOf("20261129T101500Z-01234567-abcd");
    expect(await traceIds(file)).toEqual([traceIdOf("20261129T101500Z-01234567-abcd")]);
  }, 30_000);
});
