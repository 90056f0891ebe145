/**
 * Child process of crash.test.ts: opens a journal, records a start step and the start POST's
 * request.sent lines, says so on stdout, then waits to be killed (SIGKILL) before any answer.
 */
import { openJournal } from "../../src/journal/index.js";
import { eventFactory, inst, STEPS } from "../support/journal.js";

const dir = process.argv[2]!;
const ev = eventFactory();
const journal = openJournal({ dir, runbookName: "crash", runbookHash: "h1" });
journal.write(
  ev("run.started", {
    runbook: "crash",
    file: "crash.yaml",
    hash: "h1",
    instances: [inst(0), inst(1)],
    mode: "run",
    steps: STEPS,
  }),
);
journal.write(ev("step.started", { index: 0, id: "start", kind: "start", title: "start" }));
journal.write(
  ev("request.sent", {
    id: 1,
    instance: inst(0),
    target: "service",
    method: "POST",
    path: "/api/v1/start",
    body: { source: "cluster0", destination: "cluster1" },
  }),
);
journal.write(
  ev("request.sent", {
    id: 2,
    instance: inst(1),
    target: "service",
    method: "POST",
    path: "/api/v1/start",
    body: { source: "cluster0", destination: "cluster1" },
  }),
);
// a sample: written, not fsynced; a process crash must not lose it either (it is in the page cache)
journal.write(ev("progress.sampled", { instance: inst(0), progress: { state: "IDLE" } }));
process.stdout.write(`${journal.file}\n`);
setTimeout(() => undefined, 60_000);
