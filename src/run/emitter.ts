/**
 * The event stream's one producer. `emit` is synchronous, so an event is in every listener (the
 * journal writes and fsyncs it) before the runner does the next thing, e.g. send a POST.
 * A listener that throws or rejects is reported once as a `log` event and never stops the run:
 * a broken renderer must not break a cutover. A *critical* listener (the journal) is the
 * opposite: if it cannot record an event, `emit` throws, so a POST whose `request.sent` is not
 * on disk is never sent.
 *
 * Redaction happens here, once, for every event: whatever a step, a plugin or the service put in
 * a payload (an error description echoing a start body, a hook's output), no listener — journal,
 * report, UI, notifier — ever sees a secret.
 */
import type { CriticalListener, Emit, RunEvent, RunListener } from "../events.js";
import type { Redactor } from "../redact.js";

export type { Emit };
import { errorMessage } from "../errors.js";

export interface Emitter {
  emit: Emit;
  /**
   * To every listener but the critical ones: what happened after the journal failed (the undo, the
   * run's end). The operator must still see it; the journal cannot record it, and the emit that
   * failed already said so. Never for a request: one whose line is not on disk is not sent.
   */
  tell: Emit;
  add(listener: RunListener): void;
  /** Waits for listeners' pending promises (notifiers, report writers). */
  settle(): Promise<void>;
}

/** Fields whose values are syncbook's own words, never user data: kept whole (a secret `step` must not turn `step.started` into `***.started`). */
const OWN_WORDS: ReadonlySet<string> = new Set([
  "type",
  "kind",
  "target",
  "method",
  "path",
  "outcome",
  "level",
  "errorKind",
  "mode",
  "check",
]);

export function createEmitter(
  listeners: readonly RunListener[] = [],
  critical: readonly CriticalListener[] = [],
  redact?: Redactor,
): Emitter {
  const all = [...listeners];
  const pending = new Set<Promise<unknown>>();
  let seq = 0;
  let reporting = false;
  const failed = (err: unknown): void => {
    if (reporting) return;
    reporting = true;
    try {
      emit("log", {
        level: "warn",
        message: `an output failed and was skipped: ${errorMessage(err)}`,
      });
    } finally {
      reporting = false;
    }
  };
  const emit: Emit = (type, payload, options) => deliver(type, payload, options, true);
  const tell: Emit = (type, payload) => deliver(type, payload, undefined, false);
  const deliver = (
    type: Parameters<Emit>[0],
    payload: Parameters<Emit>[1],
    options: Parameters<Emit>[2],
    recorded: boolean,
  ): RunEvent => {
    // both clocks at once: the report measures with the monotonic one where the wall clock jumped
    const raw = { type, seq: ++seq, at: Date.now(), mono: Math.round(performance.now()), ...payload };
    // leaf by leaf, never as serialized text: a secret that is a JSON token (`true`) or has a
    // quote in it must neither survive escaped nor break the event
    const event = (redact ? redact.value(raw, OWN_WORDS) : raw) as RunEvent;
    if (recorded) for (const c of critical) c(event, options);
    for (const l of all) {
      try {
        const r = l(event);
        if (r && typeof r.then === "function") {
          const p = r.catch(failed).finally(() => pending.delete(p));
          pending.add(p);
        }
      } catch (err) {
        failed(err);
      }
    }
    return event;
  };
  return {
    emit,
    tell,
    add: (l) => void all.push(l),
    settle: async () => {
      while (pending.size) await Promise.all([...pending]);
    },
  };
}
