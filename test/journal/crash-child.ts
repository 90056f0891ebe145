/**
 * Child process of crash.test.ts: opens a journal, records a start step and the start POST's
 * request.sent lines and a sample, says so on stdout, then waits to be killed (SIGKILL) before any
 * answer; with `exit` as its second argument it exits at once instead, without closing the journal.
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
// a sample: never fsynced, and written at the end of this turn of the event loop (journal.ts):
// once that turn is over a crash of the process does not lose it (it is in the page cache)
journal.write(ev("progress.sampled", { instance: inst(0), progress: { state: "IDLE" } }));
if (process.argv[3] === "exit") {
  // a process that exits in the same turn, without closing the journal (a forced exit): still written
  process.stdout.write(`${journal.file}\n`);
  process.exit(0);
}
setImmediate(() => process.stdout.write(`${journal.file}\n`));
setTimeout(() => undefined, 60_000);
