/**
 * `startVerification`: the migration verifier's check, started early (during change event
 * application, as the documentation's cutover does) without waiting for its result. The step
 * ends once the verifier shows the check running; a later `verify` tells it writes are off and
 * waits for the result. Sent at most once per verification (src/steps/kit/verifier.ts).
 */
import type { RuleInfo } from "../diagnostics.js";
import type { StartVerificationBody } from "../runbook/types.js";
import { toEach, type StepKindDef } from "./kit/define.js";
import { CEA, cloneFlow, type SequenceStep } from "./kit/sequence.js";
import { describeVerifier, ensureCheck, verifierTools, type VerificationBody } from "./kit/verifier.js";
import { redactLeaves } from "../redact.js";

/** Lint's `verify-before-cea`, reported by `checkNeedsCea` (startVerification, verify). */
export const VERIFY_BEFORE_CEA: RuleInfo = {
  id: "verify-before-cea",
  severity: "error",
  description:
    "`startVerification` or `verify` starts the verifier's check where the sync cannot reach change event application (not started yet, or paused before CEA).",
  spec: "after the sync service's progress shows `info` equal to `change event application`, verification checks may start and this endpoint is polled until phase is `idle`.",
  source: "sync-service-api.md",
  hint: "Move the step after start (it waits for change event application itself), and after any resume.",
};

/** Lint's `verify-without-writes-off` (the state model, src/lint/sequence.ts), reported by this kind's `sequence`. */
export const VERIFY_WITHOUT_WRITES_OFF: RuleInfo = {
  id: "verify-without-writes-off",
  severity: "warning",
  description:
    "`startVerification` starts a check that no later `verify` step finishes: the verifier never gets writesOff and never gives a result.",
  spec: "When the README's workflow sends `writesOff`: after writes on the source have stopped and the sync is **COMMITTED**.",
  source: "service-facts.md",
  hint: "Add a `verify` step after the commit and its `waitFor: { state: COMMITTED }`.",
};

/** Lint's `verify-after-reverse`, reported by `checkAfterReverse` (startVerification, verify). */
export const VERIFY_AFTER_REVERSE: RuleInfo = {
  id: "verify-after-reverse",
  severity: "warning",
  description:
    "`startVerification` or `verify` after a `reverse`, where the verifier may still hold the verification of the sync before it: the step refuses until a verifier restarted for the reversed sync answers.",
  spec: "The verifier runs one verification per process (a second check makes it exit); what it compared before the reverse does not verify the sync that runs the other way.",
  source: "service-facts.md",
  hint: "Restart the verifier for the reversed sync (its --srcURI and --dstURI swapped, with --clean or on a new metadata database) before this step: by a hook step, or by hand and then `--resume`.",
};

type Body = NonNullable<StartVerificationBody>;

/** `verify-after-reverse`: a check after a reverse, where the verifier may hold the verification from before it. */
export function checkAfterReverse(at: SequenceStep): void {
  const r = at.flow.checkBeforeReverse;
  // warned once, at the first check after the reverse (a reverse that may not run joins here too)
  at.flow.checkBeforeReverse = undefined;
  if (r === undefined) return;
  // a hook between them may restart the verifier for the reversed sync (this rule's own hint)
  if (at.runbook.steps.slice(r.reverse + 1, at.index).some((s) => "hook" in s)) return;
  at.report(
    VERIFY_AFTER_REVERSE,
    `The verifier's check at line ${at.lineOf(r.check)} came before the reverse at line ${at.lineOf(r.reverse)}: this step's check is a new verification, of the sync that runs the other way, and a verifier that finished (or still runs) the one before the reverse takes none.`,
  );
}

/** `verify-before-cea`: a check where the sync cannot reach change event application. */
export function checkNeedsCea(at: SequenceStep, what: string): void {
  const states = at.flow.states;
  // INITIALIZING (1.20+) comes before IDLE in lint's model: no sync runs there either
  const before = (s: string): boolean => s === "IDLE" || s === "INITIALIZING";
  if (states.size > 0 && [...states].every(before)) {
    at.report(
      VERIFY_BEFORE_CEA,
      `No sync is running here (the fleet is ${states.has("INITIALIZING") ? "INITIALIZING or IDLE" : "IDLE"} until start), so change event application is never reached and ${what} cannot begin.`,
    );
  } else if (!at.flow.ceaReached && states.has("PAUSED") && [...states].every((s) => s === "PAUSED" || before(s))) {
    at.report(
      VERIFY_BEFORE_CEA,
      `The sync is paused here and has not been seen in ${CEA}: it cannot reach it until resumed, so ${what} cannot begin.`,
    );
  }
}

/** The requests of a check this step may send (none when the run's check is already there: it cannot tell at plan time). */
export function checkRequests(b: VerificationBody, to: Parameters<StepKindDef<Body>["plan"]>[1]) {
  return [
    ...toEach(to, "GET", "/api/v1/progress", {
      note: "polled until change event application (unless the run's check runs)",
    }),
    { method: "GET" as const, target: to.verifier, path: "/api/v1/progress", note: "no check yet: the baseline" },
    {
      method: "POST" as const,
      target: to.verifier,
      path: "/api/v1/check",
      body: b.filter ? { filter: redactLeaves(b.filter, (s) => to.redact(s)) } : {},
      note: "once per verification; adopted, not sent, when the run's check (or another) already runs",
    },
  ];
}

export const startVerification: StepKindDef<Body> = {
  body: (step) => (step.startVerification === undefined ? undefined : (step.startVerification ?? {})),
  title: () => "Start the verifier's check",
  // the lint rules its `sequence` reports, with their metadata (the catalogue reads them here)
  rules: [VERIFY_BEFORE_CEA, VERIFY_WITHOUT_WRITES_OFF, VERIFY_AFTER_REVERSE],
  traits: {
    opensWriteStop: false,
    command: undefined,
    waitsFor: undefined,
    afterWritesBack: "kept",
    usesVerifier: true,
    callsPlugin: undefined,
    failureStopsRun: undefined,
  },
  hookCall: undefined,
  writesCheck: undefined,
  undoTimeoutMs: undefined,
  condition: undefined,
  startRequest: undefined,
  rehearsal: undefined,
  plan: (b, to) => [
    ...checkRequests(b, to),
    { method: "GET", target: to.verifier, path: "/api/v1/progress", note: "polled until the check runs" },
  ],
  timing: (b) => ({ timeout: b.timeout, pollInterval: b.pollInterval }),
  sequence(_b, at) {
    const f = at.flow;
    if (!f.checkMust) checkNeedsCea(at, "the verifier's check");
    checkAfterReverse(at);
    const later = at.runbook.steps.some((s, j) => j > at.index && "verify" in s && at.runs(j) !== "never");
    if (!later && at.step.continueOnError !== true)
      at.report(
        VERIFY_WITHOUT_WRITES_OFF,
        "This check is never told that writes are off (no `verify` step follows), so the verifier rechecks until it is stopped and never gives a result.",
      );
    f.checkMay ??= at.index;
    f.verifying = { at: at.index, embedded: false };
    const failed = cloneFlow(f);
    f.checkMust = true;
    f.ceaReached = true;
    return { ok: f, failed };
  },
  async run(ctx, body) {
    const t = verifierTools(ctx, body);
    const p = await ensureCheck(ctx, t);
    ctx.run.emit("log", {
      level: "info",
      index: ctx.index,
      message: `the verifier is checking: ${describeVerifier(p)}`,
    });
  },
};
