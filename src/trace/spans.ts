/**
 * The run's events as spans: one fold, used live (`syncbook run` with OTLP variables set) and
 * after the fact (`syncbook report --otlp`, over a journal), so both tell the same trace.
 *
 * - the cutover: the root (its trace id and span id derive from the cutover's id), the parent of
 *   every run's span, so a run and its `--resume` are one trace; the root span itself is made
 *   when the cutover ends (a run that finishes ok, or `--abort` with every undo done), from its
 *   first run's start;
 * - every span's id derives from the cutover, its run and the event that started it
 *   (`spanIdOf`): a span exported live and the same span built from the journal (`report
 *   --otlp`, a resume exporting what a killed runner never sent) have one id;
 * - a span per run (`run <runbook>`), per step (`step <id>`), per command fan-out
 *   (`<path> fan-out`: the same command to every instance) with a span per request (instance,
 *   command, outcome, HTTP status), per hook call (and undo);
 * - the write-stop window (the application's downtime) as its own span under the run;
 * - interlock and other decisions, stalled waits and failed progress reads as span events.
 *
 * Every attribute comes from an event, and events are redacted when emitted: no secret reaches a
 * span. Only types are imported from OpenTelemetry; the caller passes the loaded API in.
 */
import type * as Api from "@opentelemetry/api";
import type { RunEvent, RunEventOf } from "../events.js";
import { cutoverOfRun } from "../journal/cutover.js";
import { rootSpanIdOf, spanIdOf, traceIdOf, traceparent as formatTraceparent, type SpanIdSource } from "./ids.js";

export interface TraceFold {
  /** Feed one event. */
  apply(e: RunEvent): void;
  /** `traceparent` of the span a hook runs under now (its step's, else the run's). */
  traceparent(): string | undefined;
  /** Ends every span still open at `at` (a run cut short: a crash leaves no `run.finished`). */
  endAll(at: number): void;
  /** The cutover's trace id, once a run started. */
  traceId(): string | undefined;
}

type OtelApi = Pick<typeof Api, "trace" | "ROOT_CONTEXT" | "SpanStatusCode" | "SpanKind" | "TraceFlags">;

interface Open {
  span: Api.Span;
  ctx: Api.Context;
}

const label = (i: { name?: string; url: string } | undefined): string | undefined => i && (i.name ?? i.url);

export interface TraceFoldOptions {
  /** The ids of the next span, set before each is started (the tracer's provider asks it). */
  ids: SpanIdSource;
  /** When the cutover's first run started, when this fold does not see it (a resume's live fold). */
  cutoverStartedAt?: number;
}

export function createTraceFold(api: OtelApi, tracer: Api.Tracer, opts: TraceFoldOptions): TraceFold {
  let traceId: string | undefined;
  let cutover = "";
  let cutoverStartedAt = opts.cutoverStartedAt;
  let runs = 0;
  let runbook = "";
  // the run's start (its key in span ids) and its run.started seq (events are keyed by their
  // distance from it: the journal shifts a resumed segment's seqs, never their distances)
  let runAt = 0;
  let runSeq = 0;
  let run: Open | undefined;
  let window: Api.Span | undefined;
  let lastAt = 0;
  const steps = new Map<number, Open>();
  const stepOrder: number[] = [];
  const requests = new Map<number, { span: Api.Span; fanout: string }>();
  const fanouts = new Map<string, { open: Open; pending: number }>();
  const hooks = new Map<string, Api.Span>();

  const child = (
    by: RunEvent,
    name: string,
    parent: Api.Context,
    at: number,
    attributes: Api.Attributes,
    kind?: Api.SpanKind,
  ): Open => {
    opts.ids.next(spanIdOf(cutover, `${runAt}/${by.seq - runSeq}/${name}`));
    const span = tracer.startSpan(name, { startTime: at, attributes, ...(kind !== undefined ? { kind } : {}) }, parent);
    return { span, ctx: api.trace.setSpan(parent, span) };
  };
  const stepCtx = (index: number | undefined): Api.Context | undefined =>
    (index !== undefined ? steps.get(index)?.ctx : undefined) ?? run?.ctx;
  const currentStep = (): Open | undefined => {
    const i = stepOrder[stepOrder.length - 1];
    return i === undefined ? undefined : steps.get(i);
  };
  const fail = (span: Api.Span, message: string | undefined) =>
    span.setStatus({ code: api.SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  const endStep = (index: number, at: number) => {
    steps.get(index)?.span.end(at);
    steps.delete(index);
    const k = stepOrder.indexOf(index);
    if (k >= 0) stepOrder.splice(k, 1);
  };

  function endAll(at: number): void {
    for (const r of requests.values()) r.span.end(at);
    requests.clear();
    for (const f of fanouts.values()) f.open.span.end(at);
    fanouts.clear();
    for (const h of hooks.values()) h.end(at);
    hooks.clear();
    for (const i of [...stepOrder]) endStep(i, at);
    if (window) {
      window.setAttribute("syncbook.window.open_at_run_end", true);
      window.end(at);
      window = undefined;
    }
    run?.span.end(at);
    run = undefined;
  }

  function started(e: RunEventOf<"run.started">): void {
    if (run) endAll(lastAt);
    // the one id a cutover has (src/journal/cutover.ts), also for a journal of a runner before ids
    cutover = cutoverOfRun(e);
    cutoverStartedAt ??= e.at;
    runs++;
    runAt = e.at;
    runSeq = e.seq;
    runbook = e.runbook;
    traceId = traceIdOf(cutover);
    const root = api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId,
      spanId: rootSpanIdOf(cutover),
      traceFlags: api.TraceFlags.SAMPLED,
      isRemote: true,
    });
    run = child(e, `run ${e.runbook}`, root, e.at, {
      "syncbook.runbook": e.runbook,
      "syncbook.cutover": cutover,
      "syncbook.mode": e.mode,
      "syncbook.runbook.hash": e.hash,
      "syncbook.instances": e.instances.length,
      ...(e.serviceVersion ? { "syncbook.service.version": e.serviceVersion } : {}),
      ...(e.syncbook ? { "syncbook.version": e.syncbook } : {}),
    });
  }

  /** The cutover's root span, once it ended: the parent every run's span already names. */
  function cutoverEnded(e: RunEventOf<"run.finished">): void {
    if (!traceId) return;
    opts.ids.next(rootSpanIdOf(cutover), traceId);
    const root = tracer.startSpan(
      `cutover ${runbook}`,
      {
        startTime: cutoverStartedAt ?? runAt,
        attributes: {
          "syncbook.runbook": runbook,
          "syncbook.cutover": cutover,
          "syncbook.outcome": e.aborted ? "aborted" : e.outcome,
          "syncbook.committed": e.committed,
          ...(e.commitInDoubt ? { "syncbook.commit_in_doubt": true } : {}),
          ...(e.reversed !== undefined ? { "syncbook.reversed": e.reversed } : {}),
          ...(e.reverseInDoubt !== undefined ? { "syncbook.reverse_in_doubt": e.reverseInDoubt } : {}),
          "syncbook.runs": e.cutover?.runs ?? runs,
          ...(e.window ? { "syncbook.window.ms": e.window.durationMs } : {}),
        },
      },
      api.ROOT_CONTEXT,
    );
    root.end(e.at);
  }

  function apply(e: RunEvent): void {
    lastAt = Math.max(lastAt, e.at);
    if (e.type === "run.started") return started(e);
    if (!run) return;
    switch (e.type) {
      case "step.started":
        steps.set(
          e.index,
          child(e, `step ${e.id}`, run.ctx, e.at, {
            "syncbook.step.index": e.index,
            "syncbook.step.id": e.id,
            "syncbook.step.kind": e.kind,
            "syncbook.step.title": e.title,
          }),
        );
        stepOrder.push(e.index);
        return;
      case "step.skipped": {
        const s = child(e, `step ${e.id}`, run.ctx, e.at, {
          "syncbook.step.index": e.index,
          "syncbook.step.id": e.id,
          "syncbook.step.skipped": e.reason,
        });
        s.span.end(e.at);
        return;
      }
      case "step.finished": {
        const s = steps.get(e.index);
        if (!s) return;
        s.span.setAttribute("syncbook.step.outcome", e.outcome);
        if (e.outcome === "failed") fail(s.span, e.error);
        if (e.hint) s.span.setAttribute("syncbook.step.hint", e.hint);
        endStep(e.index, e.at);
        return;
      }
      case "request.sent": {
        const parent = currentStep()?.ctx ?? run.ctx;
        const key = `${stepOrder[stepOrder.length - 1] ?? -1} ${e.target} ${e.method} ${e.path}`;
        let f = fanouts.get(key);
        if (!f) {
          f = {
            open: child(e, `${e.path} fan-out`, parent, e.at, {
              "syncbook.command": e.path,
              "syncbook.target": e.target,
            }),
            pending: 0,
          };
          fanouts.set(key, f);
        }
        f.pending++;
        const who = label(e.instance);
        const r = child(
          e,
          `${e.method} ${e.path}`,
          f.open.ctx,
          e.at,
          {
            "http.request.method": e.method,
            "url.path": e.path,
            "syncbook.command": e.path,
            "syncbook.target": e.target,
            ...(who ? { "syncbook.instance": who } : {}),
          },
          api.SpanKind.CLIENT,
        );
        requests.set(e.id, { span: r.span, fanout: key });
        return;
      }
      case "response.received": {
        const r = requests.get(e.id);
        if (!r) return;
        requests.delete(e.id);
        if (e.status !== undefined) r.span.setAttribute("http.response.status_code", e.status);
        r.span.setAttribute("syncbook.outcome", e.ok ? "ok" : (e.errorKind ?? "failed"));
        if (!e.ok) fail(r.span, e.error);
        r.span.end(e.at);
        const f = fanouts.get(r.fanout);
        if (f && --f.pending === 0) {
          f.open.span.end(e.at);
          fanouts.delete(r.fanout);
        }
        return;
      }
      case "hook.started":
        hooks.set(
          `${e.index} ${e.use} ${e.undo}`,
          child(e, `${e.undo ? "undo" : "hook"} ${e.use}`, stepCtx(e.index) ?? run.ctx, e.at, {
            "syncbook.hook": e.use,
            "syncbook.hook.undo": e.undo,
          }).span,
        );
        return;
      case "hook.finished": {
        const k = `${e.index} ${e.use} ${e.undo}`;
        const h = hooks.get(k);
        if (!h) return;
        hooks.delete(k);
        if (!e.ok) fail(h, e.error);
        h.end(e.at);
        return;
      }
      case "window.opened":
        window ??= child(e, "write-stop window", run.ctx, e.openedAt ?? e.at, {
          "syncbook.window.opened_by": e.id,
        }).span;
        return;
      case "window.closed": {
        // a window opened by an earlier run of the cutover is closed in this one: its span covers
        // the whole downtime, from when writes stopped
        const w = window ?? child(e, "write-stop window", run.ctx, e.openedAt ?? e.seenAt, {}).span;
        w.setAttribute("syncbook.window.closed_by", e.reason);
        w.end(e.seenAt);
        window = undefined;
        return;
      }
      case "decision":
        (steps.get(e.index ?? -1)?.span ?? run.span).addEvent(
          `${e.kind}${e.check ? ` ${e.check}` : ""}`,
          { "syncbook.decision.ok": e.ok, "syncbook.decision.reason": e.reason },
          e.at,
        );
        return;
      case "wait.slow":
        (steps.get(e.index)?.span ?? run.span).addEvent(
          "wait.slow",
          { "syncbook.stalled_ms": e.stalledForMs, "syncbook.detail": e.detail },
          e.at,
        );
        return;
      case "poll.failed":
        (currentStep()?.span ?? run.span).addEvent(
          "poll.failed",
          {
            "syncbook.target": e.target,
            ...(label(e.instance) ? { "syncbook.instance": label(e.instance)! } : {}),
            "syncbook.error": e.error,
          },
          e.at,
        );
        return;
      case "commit.sent":
        run.span.setAttribute("syncbook.committed", true);
        return;
      case "run.finished":
        run.span.setAttribute("syncbook.outcome", e.outcome);
        run.span.setAttribute("syncbook.exit_code", e.exitCode);
        // the run's end says what holds: a reverse after this run's commit undid it (the commit's
        // `true` above stayed, and the trace said committed after a rollback)
        run.span.setAttribute("syncbook.committed", e.committed);
        // sent, and no answer or read tells whether it took effect: `false` alone would say it did not
        if (e.commitInDoubt) run.span.setAttribute("syncbook.commit_in_doubt", true);
        if (e.reversed !== undefined) run.span.setAttribute("syncbook.reversed", e.reversed);
        // a reverse that may have reached the fleet: `committed` alone would say the destination takes writes
        if (e.reverseInDoubt !== undefined) run.span.setAttribute("syncbook.reverse_in_doubt", e.reverseInDoubt);
        if (e.outcome !== "ok") fail(run.span, e.message);
        endAll(e.at);
        // a run stopped at --to leaves its cutover open
        if ((e.outcome === "ok" && e.to === undefined) || (e.aborted === true && e.exitCode === 0)) cutoverEnded(e);
        return;
      default:
        return;
    }
  }

  return {
    apply,
    endAll: (at) => endAll(Math.max(at, lastAt)),
    traceId: () => traceId,
    traceparent: () => {
      const span = currentStep()?.span ?? run?.span;
      if (!span) return undefined;
      const sc = span.spanContext();
      return formatTraceparent(sc.traceId, sc.spanId);
    },
  };
}
