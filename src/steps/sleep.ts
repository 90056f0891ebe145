/** `sleep`: wait a fixed time (interruptible). */
import { durationOr, formatDuration } from "../runbook/index.js";
import { delay } from "../timers.js";
import type { Duration } from "../runbook/types.js";
import { keyed, type StepKindDef } from "./kit/define.js";
import { unchanged } from "./kit/sequence.js";
import { abortReason } from "./kit/wait.js";

export const sleep: StepKindDef<Duration> = {
  body: keyed("sleep"),
  title: (d) => `Sleep ${String(d)}`,
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: "time",
    afterWritesBack: "kept",
    usesVerifier: false,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: undefined,
  startRequest: undefined,
  rehearsal: undefined,
  plan: () => [],
  sequence: (_b, at) => unchanged(at),
  async run(ctx, d) {
    const stated = durationOr(d, 0);
    try {
      await delay(ctx.run.defaults.scale(stated), ctx.signal);
    } catch {
      // the sleep as the runbook states it (a rehearsal's clock runs faster)
      throw abortReason(ctx, [], { describe: `a ${formatDuration(stated)} sleep` });
    }
  },
};
