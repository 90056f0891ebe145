/**
 * Notifications delivered once, and never holding the process (issue 29 point 4, issue 30).
 *
 * The journal is the outbox. A notification of a run event to a top-level `notify:` entry is
 * journaled before its first attempt (`notification.sent`) and when it ends
 * (`notification.settled`: delivered, or not after n attempts). So a `--resume` knows, for every
 * event the earlier runs journaled:
 * - delivered: never sent again;
 * - never sent, or failed: sent now, before the resumed run's own (the process died with it
 *   queued, or the service was down: a lost page is the harm to avoid);
 * - in doubt (sent, and no answer recorded: the run died in flight, or the attempt timed out):
 *   as the notifier says (`inDoubt`, default `resend`). Every built-in resends: PagerDuty's
 *   `dedup_key` makes a repeated trigger or resolve land on the one alert; for chat, Teams, a
 *   webhook, a file or stdout a duplicate message is the lesser harm than a page lost.
 *
 * Each entry sends in order (a trigger before its resolve) from its own queue, so the cutover is
 * never held. A failed delivery is retried with backoff while the entry's retry budget lasts
 * (`RETRY_BUDGET_MS`, the total time one entry may spend retrying in a run, not a count per event:
 * a dead service cannot multiply it by the queue's length). After the run, the drain has one total
 * bound (`DRAIN_MS`) for everything still queued; what it cuts off, or a Ctrl-C during it, is
 * journaled as not delivered and reported. The lines ride on the journal's next fsync
 * (`more`): written at once, so a killed process keeps them, and never an fsync of their own
 * inside the write-stop window; a power loss at most makes a resume send one again.
 *
 * Lines logged by notifiers come back as `log` events and are never notified (a notifier on `log`
 * that logs would feed itself); `notification.*` events are never notified either.
 */
import type { Emit, RunEvent } from "../events.js";
import { formatDuration } from "../runbook/duration.js";
import { retriesAfter, retryPauseMs, retryWait, type RetryPolicy } from "../retry.js";
import type { InDoubtPolicy, Notification, NotifyMessage } from "./api.js";
import { NOTIFY_STEP, eventMatcher } from "./events.js";
import { sendNotification, type NotifyOptions, type PluginRunContext } from "./invoke.js";
import type { PluginRegistry } from "./registry.js";
import type { LogSink } from "./util.js";

/** After the run ends, how long pending notifications may still take, all of them together. */
export const DRAIN_MS = 5_000;
/** How long one `notify:` entry may spend retrying failed deliveries in a run, in total. */
export const RETRY_BUDGET_MS = 60_000;
/**
 * A delivery's retries: 1, 2, 4, then 8 s apart while the entry's budget lasts (no count: the
 * budget ends them); every failure is retried but one that may have arrived at a notifier that
 * asks never to send twice (`inDoubt: "skip"`).
 */
export function deliveryRetry(policy: InDoubtPolicy): RetryPolicy<{ inDoubt?: boolean | undefined }> {
  return {
    attempts: Infinity,
    baseMs: 1_000,
    capMs: 8_000,
    jitter: "none",
    retryable: (r) => !(r.inDoubt === true && policy === "skip"),
  };
}

/** A top-level `notify:` entry. */
export interface NotifyEntry {
  use: string;
  with?: Record<string, unknown>;
  on: readonly string[];
}

/** The journal's lines of a delivery: never notified themselves. */
export function isDeliveryEvent(e: { type: string }): boolean {
  return e.type === "notification.sent" || e.type === "notification.settled";
}

/** One notification: the `notify:` entry (by place and name) and the journaled event it tells of. */
export function deliveryKey(d: { entry: number; use: string; event: number }): string {
  return `${d.entry}:${d.use}@${d.event}`;
}

/** A delivery as `status`, the report and the run's end name it: `pagerduty (#1) run.finished`. */
export function deliveryLabel(d: { entry: number; use: string; about: string }): string {
  return `${d.use} (notify #${d.entry + 1}) of ${d.about}`;
}

export interface DeliveryNote {
  key: string;
  label: string;
  attempts: number;
  error?: string;
  inDoubt?: boolean;
}

/** What a journal's `notification.*` lines say: each delivery's last state. */
export interface DeliveryLedger {
  delivered: number;
  /** Settled without delivery (their last line). */
  failed: DeliveryNote[];
  /** Sent, with no settled line after it: the run died with the delivery in flight. */
  inDoubt: DeliveryNote[];
  state: ReadonlyMap<string, "delivered" | "failed" | "in-doubt">;
}

/**
 * Folds a journal's events into each delivery's last state (one home for `status`, the report,
 * the run's end and a resume's catch-up). Seqs are the journal's: read the events back from it.
 */
export function foldDeliveries(events: Iterable<RunEvent>): DeliveryLedger {
  const last = new Map<string, { state: "delivered" | "failed" | "in-doubt"; note: DeliveryNote }>();
  for (const e of events) {
    if (e.type !== "notification.sent" && e.type !== "notification.settled") continue;
    const key = deliveryKey(e);
    const label = deliveryLabel(e);
    if (e.type === "notification.sent") last.set(key, { state: "in-doubt", note: { key, label, attempts: 0 } });
    else
      last.set(key, {
        state: e.delivered ? "delivered" : e.inDoubt ? "in-doubt" : "failed",
        note: {
          key,
          label,
          attempts: e.attempts,
          ...(e.error ? { error: e.error } : {}),
          ...(e.inDoubt ? { inDoubt: true } : {}),
        },
      });
  }
  const ledger: DeliveryLedger = { delivered: 0, failed: [], inDoubt: [], state: new Map() };
  const state = ledger.state as Map<string, "delivered" | "failed" | "in-doubt">;
  for (const [key, v] of last) {
    state.set(key, v.state);
    if (v.state === "delivered") ledger.delivered++;
    else if (v.state === "failed") ledger.failed.push(v.note);
    else ledger.inDoubt.push(v.note);
  }
  return ledger;
}

/** What `status` and the report say of a journal's notifications; undefined when it has none. */
export function deliveryReport(events: readonly RunEvent[]): { delivered: number; notDelivered: string[] } | undefined {
  const lines = events.filter(isDeliveryEvent);
  if (!lines.length) return undefined;
  const ledger = foldDeliveries(lines);
  return {
    delivered: ledger.delivered,
    notDelivered: [
      ...ledger.failed.map((n) => `${n.label}${n.error ? `: ${n.error}` : ""}`),
      ...ledger.inDoubt.map((n) => `${n.label}: in doubt (sent, no answer recorded)`),
    ],
  };
}

export interface DrainResult {
  /** A Ctrl-C (the drain's signal) ended it. */
  interrupted: boolean;
  /** This run's notifications that were not delivered (cut off, failed, or skipped in doubt), labelled. */
  undelivered: string[];
  delivered: number;
}

export interface NotifierListener {
  (event: RunEvent): void;
  /**
   * Queues a `notify` step's message to every entry whose `on:` lists `notify`. Returns at
   * once, like the listener; failures are reported the same way (not journaled: a message is
   * no journaled event).
   */
  message(message: NotifyMessage): void;
  /** Waits until every notification queued so far was sent or failed, without a bound (library callers, tests). */
  flush(): Promise<void>;
  /**
   * The run's end: waits for what is queued at most `boundMs` (default `DRAIN_MS`) in all, or until
   * `signal` aborts (Ctrl-C); what is left is journaled as not delivered. `waiting` is told first,
   * when anything is pending, how many.
   */
  drain(o?: { boundMs?: number; signal?: AbortSignal; waiting?: (pending: number) => void }): Promise<DrainResult>;
}

export interface NotifierListenerOptions extends NotifyOptions {
  onError?: (failure: { use: string; event: string; error: string }) => void;
  /** Journals each delivery (the runner's `say`); without it nothing is journaled or caught up. */
  record?: Emit;
  /** The earlier runs' events (a resumed journal's, the journal's seqs): what they still owe is sent first. */
  history?: readonly RunEvent[];
  retryBudgetMs?: number;
}

interface Item {
  n: Notification;
  /** The journaled event's seq (the journal shifts a live one); undefined for a step's message. */
  event: number | undefined;
  earlier: boolean;
  inDoubt: boolean;
}

interface Sub {
  index: number;
  entry: NotifyEntry;
  matches: (e: RunEvent) => boolean;
  policy: InDoubtPolicy;
  retry: RetryPolicy<{ inDoubt?: boolean | undefined }>;
  queue: Item[];
  running: Promise<void> | undefined;
  spentMs: number;
}

/**
 * A run listener that sends each event to the `notify:` entries whose `on:` selects it, journals
 * each delivery, and on a resume first sends what the earlier runs owe. Returns at once (a slow
 * chat server never slows the cutover). A failure goes to `onError` (default: a `warn` line).
 */
export function createNotifierListener(
  registry: PluginRegistry,
  entries: readonly NotifyEntry[] | undefined,
  ctx: PluginRunContext,
  opts: NotifierListenerOptions = {},
): NotifierListener {
  const subs: Sub[] = (entries ?? []).map((entry, index) => {
    const policy = registry.notifier(entry.use)?.inDoubt ?? "resend";
    return {
      index,
      entry,
      matches: eventMatcher(entry.on),
      policy,
      retry: deliveryRetry(policy),
      queue: [],
      running: undefined,
      spentMs: 0,
    };
  });
  const own = new Set<string>();
  const log: LogSink = (level, message) => {
    if (own.size > 1000) own.clear();
    own.add(message);
    ctx.log(level, message);
  };
  const nctx: PluginRunContext = { ...ctx, log };
  const report =
    opts.onError ??
    ((f: { use: string; event: string; error: string }) =>
      log("warn", `${f.error} (event ${f.event}); the run goes on`));
  const budget = opts.retryBudgetMs ?? RETRY_BUDGET_MS;
  // aborts every attempt and backoff: the drain's bound, or a Ctrl-C during it
  const stop = new AbortController();
  let closed = false;
  const undelivered: string[] = [];
  let delivered = 0;

  const record = (type: "notification.sent" | "notification.settled", payload: Record<string, unknown>): void => {
    if (!opts.record || closed) return;
    try {
      // durable with the journal's next fsync: never an fsync of its own (inside the write-stop window)
      opts.record(type, payload as never, { more: true });
    } catch {
      // the journal failed: the runner stops on it; a delivery goes on
    }
  };
  const ids = (sub: Sub, item: Item) => ({
    entry: sub.index,
    use: sub.entry.use,
    event: item.event as number,
    about: item.n.type,
    ...(item.earlier ? { earlier: true } : {}),
  });
  const settle = (
    sub: Sub,
    item: Item,
    r: { delivered: boolean; attempts: number; ms: number; error?: string; inDoubt?: boolean },
  ): void => {
    if (r.delivered) delivered++;
    else
      undelivered.push(
        `${deliveryLabel({ entry: sub.index, use: sub.entry.use, about: item.n.type })}${r.error ? `: ${r.error}` : ""}`,
      );
    if (item.event === undefined) return;
    record("notification.settled", {
      ...ids(sub, item),
      delivered: r.delivered,
      attempts: r.attempts,
      durationMs: Math.round(r.ms),
      ...(r.error ? { error: r.error } : {}),
      ...(r.inDoubt ? { inDoubt: true } : {}),
    });
  };

  const deliver = async (sub: Sub, item: Item): Promise<void> => {
    if (item.inDoubt && sub.policy === "skip") {
      settle(sub, item, {
        delivered: false,
        attempts: 0,
        ms: 0,
        error: `in doubt (an earlier run sent it and got no answer): ${sub.entry.use} asks never to send twice`,
        inDoubt: true,
      });
      return;
    }
    if (item.event !== undefined) record("notification.sent", ids(sub, item));
    const call = sub.entry.with ? { use: sub.entry.use, with: sub.entry.with } : { use: sub.entry.use };
    const t0 = performance.now();
    let attempts = 0;
    for (;;) {
      attempts++;
      const tried = performance.now();
      const r = await sendNotification(registry, call, item.n, nctx, { ...opts, signal: stop.signal });
      if (attempts > 1) sub.spentMs += performance.now() - tried;
      if (r.ok) return settle(sub, item, { delivered: true, attempts, ms: performance.now() - t0 });
      const wait = retryPauseMs(sub.retry, attempts - 1);
      if (stop.signal.aborted || !retriesAfter(sub.retry, r, attempts) || sub.spentMs + wait >= budget) {
        try {
          // cut off by the drain: the run's end lists it with the rest
          if (!stop.signal.aborted) report({ use: sub.entry.use, event: item.n.type, error: r.error });
        } catch {
          // a reporting callback that throws must not break the queue
        }
        return settle(sub, item, {
          delivered: false,
          attempts,
          ms: performance.now() - t0,
          error: `${r.error}${attempts > 1 ? ` (after ${attempts} attempts)` : ""}`,
          ...(r.inDoubt ? { inDoubt: true } : {}),
        });
      }
      sub.spentMs += wait;
      await retryWait(wait, stop.signal);
    }
  };

  const pump = (sub: Sub): void => {
    if (sub.running) return;
    // set before any of it runs: a delivery's own journal line comes back through the listener
    sub.running = Promise.resolve().then(async () => {
      while (sub.queue.length && !stop.signal.aborted) {
        await deliver(sub, sub.queue[0]!);
        sub.queue.shift();
      }
      sub.running = undefined;
    });
  };
  const enqueue = (sub: Sub, item: Item): void => {
    if (closed) return;
    sub.queue.push(item);
    pump(sub);
  };

  // what the earlier runs owe, sent before this run's first event
  let owed: { sub: Sub; item: Item }[] | undefined = opts.record ? owedBy(opts.history ?? [], subs) : [];
  const listener = (event: RunEvent): void => {
    if (owed) {
      const first = owed;
      owed = undefined;
      for (const o of first) enqueue(o.sub, o.item);
    }
    if (isDeliveryEvent(event)) return;
    if (event.type === "log" && own.delete(event.message)) return;
    for (const sub of subs)
      if (sub.matches(event)) enqueue(sub, { n: event, event: event.seq, earlier: false, inDoubt: false });
  };
  const idle = async (): Promise<void> => {
    for (;;) {
      const busy = subs.flatMap((s) => (s.running !== undefined ? [s.running] : []));
      if (!busy.length) return;
      await Promise.all(busy);
    }
  };
  return Object.assign(listener, {
    message: (m: NotifyMessage) => {
      for (const sub of subs)
        if (sub.entry.on.includes(NOTIFY_STEP))
          enqueue(sub, { n: m, event: undefined, earlier: false, inDoubt: false });
    },
    flush: idle,
    drain: async (o: { boundMs?: number; signal?: AbortSignal; waiting?: (pending: number) => void } = {}) => {
      const boundMs = o.boundMs ?? DRAIN_MS;
      const pending = subs.reduce((n, s) => n + s.queue.length, 0);
      if (pending > 0) {
        o.waiting?.(pending);
        const timer = setTimeout(
          () => stop.abort(new Error(`not delivered within ${formatDuration(boundMs)} of the run's end`)),
          boundMs,
        );
        const onSignal = (): void =>
          stop.abort(new Error("interrupted (Ctrl-C) while notifications were still being sent"));
        if (o.signal?.aborted) onSignal();
        else o.signal?.addEventListener("abort", onSignal, { once: true });
        try {
          await idle();
        } finally {
          clearTimeout(timer);
          o.signal?.removeEventListener("abort", onSignal);
        }
        // what the bound or the Ctrl-C left queued was never sent: journaled, so a resume owes it
        for (const sub of subs)
          for (const item of sub.queue.splice(0))
            settle(sub, item, {
              delivered: false,
              attempts: 0,
              ms: 0,
              error: `not sent: ${String((stop.signal.reason as Error).message)}`,
            });
      }
      closed = true;
      return { interrupted: o.signal?.aborted === true, undelivered: [...undelivered], delivered };
    },
  });
}

/**
 * What the earlier runs owe: every event of a run that journaled its deliveries (`run.started`
 * `deliveries`) that an entry selects and that was not delivered, oldest first. `log` lines are
 * left out: they are the run's chatter (and a notifier's own failures), not news an hour later.
 */
function owedBy(history: readonly RunEvent[], subs: readonly Sub[]): { sub: Sub; item: Item }[] {
  if (!history.length || !subs.length) return [];
  const ledger = foldDeliveries(history);
  const out: { sub: Sub; item: Item }[] = [];
  let journaled = false;
  for (const e of history) {
    if (e.type === "run.started") journaled = e.deliveries === true;
    if (!journaled || e.type === "log" || isDeliveryEvent(e)) continue;
    for (const sub of subs) {
      if (!sub.matches(e)) continue;
      const state = ledger.state.get(deliveryKey({ entry: sub.index, use: sub.entry.use, event: e.seq }));
      if (state === "delivered") continue;
      out.push({ sub, item: { n: e, event: e.seq, earlier: true, inDoubt: state === "in-doubt" } });
    }
  }
  return out;
}
