import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InstanceRef, RunEvent, RunEventMap, RunEventType } from "../../src/events.js";

/** A fresh temp folder per test, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-journal-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Builds events with increasing seq, like the runner's emitter. */
export function eventFactory(start = 0): <K extends RunEventType>(type: K, payload: RunEventMap[K]) => RunEvent {
  let seq = start;
  return (type, payload) => ({ type, seq: ++seq, at: 1_700_000_000_000 + seq, ...payload }) as unknown as RunEvent;
}

/** A command's POST as the fleet journals it (`op`: commit, reverse, pause…), to one instance. */
export const commandSent = (id: number, op: string, instance: InstanceRef): RunEventMap["request.sent"] => ({
  id,
  instance,
  target: "service",
  method: "POST",
  path: `/api/v1/${op}`,
  body: {},
});

/** The service's acceptance of request `id` (`{"success": true}`), as the fleet journals it. */
export const commandAccepted = (id: number, instance: InstanceRef): RunEventMap["response.received"] => ({
  id,
  instance,
  target: "service",
  status: 200,
  ok: true,
  body: { success: true },
  durationMs: 1,
});

export const inst = (index: number, name = `i${index}`): InstanceRef => ({
  url: `http://127.0.0.1:${27182 + index}`,
  name,
  index,
});

export const STEPS = [
  { index: 0, id: "start", kind: "start", title: "start" },
  { index: 1, id: "wait", kind: "waitFor", title: "wait" },
  { index: 2, id: "stop", kind: "stopWrites", title: "stop writes" },
  { index: 3, id: "commit", kind: "commit", title: "commit" },
  { index: 4, id: "done", kind: "waitFor", title: "wait committed" },
];

/** The `run.started` of the journals these tests write: the runbook `sales`, one instance, `STEPS`. */
export const salesStarted = (file = "rb.yaml"): RunEventMap["run.started"] => ({
  runbook: "sales",
  file,
  hash: "abc",
  instances: [inst(0)],
  mode: "run",
  steps: STEPS,
});
