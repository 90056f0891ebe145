/**
 * Whether application writes are stopped now, read rather than remembered. A stopWrites may
 * carry a `check:` (a hook call that succeeds only while writes are stopped), and a rehearsal
 * sees its simulator's writes (`writesProbe`). The stop runs its own check right after the hook;
 * commit runs every check before it right before it is sent: the journal tells what the run did
 * (and a journal restored from a snapshot, an orphaned undo or a person at the switch can make
 * that stale), the check tells what is true at the point of no return.
 */
import { runHook, stepInfo } from "../../plugin/index.js";
import { expectationText, unmetExpectations } from "../../fleet/index.js";
import { durationOr, formatDuration } from "../../runbook/index.js";
import { delay } from "../../timers.js";
import type { Step } from "../../runbook/types.js";
import type { StepContext } from "./context.js";

/** A check's time limit when it sets none: a read, so short, yet longer than one slow HTTP answer. */
export const CHECK_TIMEOUT_MS = 30_000;

export type WritesCheckCall = NonNullable<NonNullable<Step["stopWrites"]>["check"]>;

/** A stopWrites step's check, with the step it belongs to. */
export interface WritesCheck {
  index: number;
  step: Step;
  call: WritesCheckCall;
}

/**
 * The checks a commit at `before` relies on: every stopWrites before it that declares one and
 * is not switched off (`when: false`). Each speaks for its own writers, so each must pass: a
 * stop that was skipped or failed while another held still leaves its writers writing.
 */
export function writesChecks(steps: readonly Step[], before: number): WritesCheck[] {
  const out: WritesCheck[] = [];
  steps.slice(0, before).forEach((s, index) => {
    const call = s.stopWrites?.check;
    if (call && s.when !== false) out.push({ index, step: s, call });
  });
  return out;
}

/** What was read, and who read it: the rehearsal's simulator (`probe`) or a runbook's `check`. */
export interface WritesSeen {
  stopped: boolean;
  by: "probe" | "check";
  detail: string;
}

/**
 * Runs the rehearsal's probe and the given checks in turn; the first that does not say
 * "stopped" decides. `undefined` when there is nothing to read (no probe, no check): the caller
 * then has only the journal. A check that fails, times out or cannot run counts as "writes may
 * flow": the reading that fails safe. Whatever undo a check's hook returns is ignored: a check
 * changes nothing.
 */
export async function readWrites(ctx: StepContext, checks: readonly WritesCheck[]): Promise<WritesSeen | undefined> {
  const probe = ctx.run.writesProbe;
  if (!probe && checks.length === 0) return undefined;
  const seen: string[] = [];
  if (probe) {
    const p = await probe(ctx.signal);
    if (!p.stopped) return { ...p, by: "probe" };
    seen.push(p.detail);
  }
  for (const check of checks) {
    const failed = await holds(ctx, check);
    if (failed !== undefined) return { stopped: false, by: "check", detail: failed };
    seen.push(`the check of step ${check.index + 1} (${check.call.use}) passed`);
  }
  return { stopped: true, by: checks.length ? "check" : "probe", detail: seen.join("; ") };
}

/** The time between reads of a check with `until` when it sets none. */
export const CHECK_POLL_MS = 2_000;

/**
 * One check, read until it holds: once, or with `until:` again every `pollInterval` until it holds
 * or that bound has passed. Undefined when it holds; else why not (the last read's failure). Each
 * read is the hook succeeding and, with `expect`, every condition holding on what it read (the
 * comparisons of `waitFor.expect`: src/fleet/conditions.ts). What it waits for is logged once, and
 * again whenever the reason changes.
 */
async function holds(ctx: StepContext, { index, step, call }: WritesCheck): Promise<string | undefined> {
  const { registry, ctx: pctx } = ctx.run.plugins;
  const info = stepInfo(
    index,
    step.id ?? `stopWrites-${index + 1}`,
    "stopWrites",
    `check of step ${index + 1}`,
    step,
    pctx.redact,
  );
  const name = `the check of step ${index + 1}`;
  const untilMs = durationOr(call.until, 0);
  const pollMs = durationOr(call.pollInterval, CHECK_POLL_MS);
  const started = Date.now();
  let told: string | undefined;
  for (;;) {
    const outcome = await runHook(
      registry,
      call.with ? { use: call.use, with: call.with } : { use: call.use },
      info,
      pctx,
      {
        timeoutMs: durationOr(call.timeout, CHECK_TIMEOUT_MS),
        signal: ctx.signal,
      },
    );
    // interrupted (Ctrl-C) while it ran: that is what happened, not "writes flow"
    if (!outcome.ok && ctx.signal.aborted)
      throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("interrupted");
    const why = !outcome.ok
      ? outcome.error
      : call.expect
        ? unmetExpectations(call.expect, outcome.value)
            .map((u) => pctx.redact(`${u.condition}: now ${shown(u.value)}`))
            .join(", ") || undefined
        : undefined;
    // the read's time inside the window is the runbook's hook's, not the runner's (src/fleet/window.ts)
    ctx.run.say("writes.checked", {
      index: ctx.index,
      id: ctx.id,
      use: call.use,
      ok: why === undefined,
      durationMs: outcome.durationMs,
    });
    if (why === undefined) return undefined;
    const waited = Date.now() - started;
    if (waited + pollMs > untilMs)
      return `${name}: ${why}${untilMs > 0 ? ` (still, after ${formatDuration(waited)} of its ${formatDuration(untilMs)})` : ""}`;
    if (why !== told) {
      told = why;
      ctx.run.say("log", {
        level: "info",
        index: ctx.index,
        message: `waiting for ${name} (${call.use}${call.expect ? `: ${call.expect.map(expectationText).join(", ")}` : " to succeed"}), at most ${formatDuration(untilMs)}: ${why}`,
      });
    }
    await delay(pollMs, ctx.signal);
  }
}

/** A value read, short: `true`, `"on"`, `missing`. */
function shown(v: unknown): string {
  const t = v === undefined ? "missing" : JSON.stringify(v);
  return t.length > 80 ? `${t.slice(0, 79)}…` : t;
}
