/** `confirm`: a yes/no question to the operator. `--yes` answers it; it never lifts an interlock. */
import type { ConfirmBody } from "../runbook/types.js";
import { askOperator } from "./kit/ask.js";
import { keyed, type StepKindDef } from "./kit/define.js";
import { unchanged } from "./kit/sequence.js";

const messageOf = (c: ConfirmBody): string => (typeof c === "string" ? c : (c.message ?? "Continue?"));

export const confirm: StepKindDef<ConfirmBody> = {
  body: keyed("confirm"),
  title: (c) => (typeof c === "string" ? c : (c.message ?? "Confirm")),
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: "person",
    afterWritesBack: "again",
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
  run(ctx, c) {
    return askOperator(ctx, messageOf(c), {
      noTerminal: "needs an answer and there is no terminal",
      noTerminalHint: "Run it in a terminal, or pass --yes to answer every confirm with yes.",
      declinedHint: "The run stopped here; nothing after this step was done.",
    });
  },
};
