/**
 * Child process of failure-paths.e2e.test.ts: a run whose journal (a critical listener) fails on one
 * event type, with a 30-minute step timeout. It prints the run's result as one JSON line and must
 * then exit by itself: nothing the run started may keep the process alive.
 */
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { runRunbook } from "../../src/run/runner.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { runbookFor, sim, START, STOP } from "../support/run.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const failOn = process.argv[2] ?? "step.started";
const failAt = Number(process.argv[3] ?? "1");
const s = await sim();
const yaml = runbookFor(s, `${START}${STOP}  - { id: ready, waitFor: { canCommit: true, lagBelow: 5 } }\n`, "").replace(
  "timeout: 20s",
  "timeout: 30m",
);
const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
let seen = 0;
// a rejection is printed, not thrown: like the CLI, the process must then end by itself
const result = await runRunbook({
  loaded,
  registry,
  print: () => undefined,
  critical: [
    (e) => {
      if (e.type === failOn && ++seen === failAt) throw new Error("ENOSPC: no space left on device (simulated)");
    },
  ],
}).catch((err: unknown) => ({ rejected: String(err) }));
const writes = s.control.state().writes;
await s.close();
process.stdout.write(`${JSON.stringify({ result, writes })}\n`);
