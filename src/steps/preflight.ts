/**
 * `preflight`: the checks of `syncbook preflight` as a step (usually the first): the real clusters,
 * read-only, through the MongoDB driver, minutes before `start`. Findings go to the event stream
 * (redacted, with their runbook line); the step fails on errors (or on warnings with
 * `failOn: warning`). A rehearsal stands in for it: a rehearsal never touches real systems.
 */
import type { RuleInfo } from "../diagnostics.js";
import { countBySeverity } from "../diagnostics.js";
import type { PreflightBody } from "../runbook/types.js";
import { StepFailure } from "./kit/context.js";
import { keyed, type StepKindDef } from "./kit/define.js";

/** Lint's `preflight-after-start` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const PREFLIGHT_AFTER_START: RuleInfo = {
  id: "preflight-after-start",
  severity: "warning",
  description: "A `preflight` step after a `start`: the sync is writing to the destination by then.",
  spec: "Checks against the live clusters in the days before the window, and again minutes before `start`.",
  source: "DESIGN.md",
  hint: "Put the preflight step first, before start.",
};

export const preflight: StepKindDef<PreflightBody> = {
  body: keyed("preflight"),
  title: () => "Preflight: check the real clusters (read-only)",
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [PREFLIGHT_AFTER_START],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: undefined,
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
  plan: () => [
    {
      method: "GET",
      target: "every cluster with a `uri` (MongoDB driver)",
      path: "",
      note: "read-only checks of `syncbook preflight`; nothing is written",
    },
  ],
  timing: (b) => ({ timeout: b.timeout }),
  sequence(_b, at) {
    // after a start the destination is being written by the sync: "not empty" and friends would be noise
    if (at.flow.starts.length > 0)
      at.report(
        PREFLIGHT_AFTER_START,
        `This preflight runs after ${at.line(at.flow.starts[0]!)}: the sync is writing to the destination by then, so the checks of an empty destination, free disk and the namespaces to copy no longer mean what they say.`,
      );
    return { ok: at.flow };
  },
  async run(ctx, body) {
    if (ctx.run.mode === "rehearse") {
      ctx.run.emit("log", {
        level: "info",
        index: ctx.index,
        message:
          "rehearsal: preflight reads the real clusters, so it is stood in for (run `syncbook preflight` for it)",
      });
      return;
    }
    const { runPreflight } = await import("../preflight/index.js");
    // the kinds' table (index.ts) imports this module: read it when the step runs
    const { firstStartRequest, stepsSending } = await import("./index.js");
    const result = await runPreflight(ctx.run.loaded, {
      start: firstStartRequest(ctx.run.loaded.runbook),
      reverses: stepsSending(ctx.run.loaded.runbook, "reverse"),
      signal: ctx.signal,
    });
    for (const d of result.diagnostics) {
      ctx.run.emit("log", {
        level: d.severity === "info" ? "info" : d.severity === "warning" ? "warn" : "error",
        index: ctx.index,
        message: `preflight ${d.rule} (line ${d.line}): ${d.message}${d.hint ? ` — hint: ${d.hint}` : ""}`,
      });
    }
    const n = countBySeverity(result.diagnostics);
    const failing = body.failOn === "warning" ? n.error + n.warning : n.error;
    if (failing > 0) {
      const first = result.diagnostics.find(
        (d) => d.severity === "error" || (body.failOn === "warning" && d.severity === "warning"),
      );
      throw new StepFailure(
        `preflight found ${n.error} error(s)${body.failOn === "warning" ? ` and ${n.warning} warning(s)` : ""}${first ? `, first: ${first.rule} (line ${first.line}): ${first.message}` : ""}`,
        {
          hint: "Fix the clusters (or the runbook) as the findings above say, then run again; `syncbook preflight <runbook>` shows them all with their lines.",
        },
      );
    }
    ctx.run.emit("log", {
      level: "info",
      index: ctx.index,
      message: `preflight: ${n.error} errors, ${n.warning} warnings, ${n.info} notes`,
    });
  },
};
