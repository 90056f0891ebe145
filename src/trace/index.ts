/**
 * OpenTelemetry traces of a cutover, opt-in through the standard variables (`config.ts`).
 *
 * - `startTracing`: a run listener that exports the run's spans over OTLP/HTTP (protobuf or
 *   JSON) while it runs, and the `traceparent` hooks get (their own spans join the cutover's).
 * - `journalToOtlp`: the same spans from a journal, as an OTLP JSON request body
 *   (`syncbook report --otlp <file>`), for a window run without a collector.
 *
 * The official packages are loaded here, at run time (`runtimeImport`), and only when tracing is
 * on: lint and a run without the variables never load them. No global of OpenTelemetry's is set
 * (no global tracer provider, context manager or propagator): the provider is this run's own.
 */
import type * as Api from "@opentelemetry/api";
import type * as Sdk from "@opentelemetry/sdk-trace";
import type * as Resources from "@opentelemetry/resources";
import type * as Transformer from "@opentelemetry/otlp-transformer";
import type { Emit, RunEvent, RunListener } from "../events.js";
import { errorMessage } from "../errors.js";
import { runtimeImport } from "../runtime-import.js";
import { traceConfig, type TraceConfig } from "./config.js";
import { createTraceFold } from "./spans.js";
import { createSpanIdSource } from "./ids.js";

export { traceConfig, traceProblem, type TraceConfig } from "./config.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A CommonJS package through `import()`: its exports are named, or under `default`. */
async function load<M>(name: string): Promise<M> {
  const m = await runtimeImport<M & { default?: M }>(name);
  // Node's import() of a CommonJS build puts its exports on `default` (named ones only where its
  // lexer finds them); an ESM build (vitest's pick) names them all, and its `default` is a subset
  // (@opentelemetry/api's lacks TraceFlags): both, the named ones winning
  return { ...m.default, ...m };
}

interface Otel {
  api: typeof Api;
  sdk: typeof Sdk;
  resources: typeof Resources;
}

async function loadOtel(): Promise<Otel> {
  const [api, sdk, resources] = await Promise.all([
    load<typeof Api>("@opentelemetry/api"),
    load<typeof Sdk>("@opentelemetry/sdk-trace"),
    load<typeof Resources>("@opentelemetry/resources"),
  ]);
  return { api, sdk, resources };
}

/**
 * `service.name` syncbook (unless OTEL_SERVICE_NAME says otherwise), plus OTEL_RESOURCE_ATTRIBUTES
 * as OpenTelemetry's own env detector reads them (from the process's environment, which is the
 * `env` every caller passes), every string value passed through the run's redaction (an attribute
 * must never carry a secret).
 */
function resourceOf(o: Otel, env: Env, redact: (s: string) => string): Resources.Resource {
  const attrs: Record<string, string | number | boolean> = { "service.name": env.OTEL_SERVICE_NAME ?? "syncbook" };
  const detected = o.resources.detectResources({ detectors: [o.resources.envDetector] }).attributes;
  for (const [k, v] of Object.entries(detected))
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") attrs[k] = v;
  for (const [k, v] of Object.entries(attrs)) if (typeof v === "string") attrs[k] = redact(v);
  return o.resources.resourceFromAttributes(attrs);
}

export interface Tracing {
  listener: RunListener;
  /** `traceparent` for a hook starting now. */
  traceparent(): string | undefined;
  /** Where the spans the collector acknowledged are journaled (`trace.exported`), once the run's stream exists. */
  record(emit: Emit): void;
  /** Flushes and shuts the exporter down (bounded); resolves to a warning when spans were lost. */
  finish(): Promise<string | undefined>;
}

export interface TracingOptions {
  /**
   * The events of the cutover's earlier runs (the journals a resume or a continuing run reads),
   * oldest first: their spans that no `trace.exported` line says the collector has are exported
   * now, with the ids they would have had (a runner killed before its spans left), and the root
   * span starts at the first run's start.
   */
  earlier?: readonly RunEvent[];
}

const FLUSH_LIMIT_MS = 5_000;
/** `ExportResultCode.SUCCESS` of @opentelemetry/core (an enum there; not worth loading the package for). */
const ExportResultCode = { SUCCESS: 0 } as const;

/** The run's trace export, or undefined when the OTLP variables do not ask for one. */
export async function startTracing(
  env: Env,
  redact: (s: string) => string,
  opts: TracingOptions = {},
): Promise<Tracing | undefined> {
  const config = traceConfig(env);
  if (!config) return undefined;
  return createTracing(config, await loadOtel(), env, redact, opts);
}

/**
 * The earlier runs' events a resume exports spans of: runs whose runner derived span ids and
 * journaled what its collector acknowledged (`run.started` `traced`; an older runner's spans had
 * random ids, and sending them again would show them twice), less the spans acknowledged.
 */
function replayable(earlier: readonly RunEvent[]): { events: RunEvent[]; acked: Set<string> } {
  const acked = new Set<string>();
  const events: RunEvent[] = [];
  let traced = false;
  for (const e of earlier) {
    if (e.type === "run.started") traced = e.traced === true;
    if (e.type === "trace.exported") for (const id of e.spans) acked.add(id);
    else if (traced) events.push(e);
  }
  return { events, acked };
}

async function createTracing(
  config: TraceConfig,
  o: Otel,
  env: Env,
  redact: (s: string) => string,
  opts: TracingOptions,
): Promise<Tracing> {
  const mod = await load<{ OTLPTraceExporter: new () => Sdk.SpanExporter }>(
    config.protocol === "http/json"
      ? "@opentelemetry/exporter-trace-otlp-http"
      : "@opentelemetry/exporter-trace-otlp-proto",
  );
  // the exporter reads its endpoint, headers and timeout from OTEL_EXPORTER_OTLP_* itself
  const inner = new mod.OTLPTraceExporter();
  let lost = 0;
  let why = "";
  let record: Emit | undefined;
  const exporter: Sdk.SpanExporter = {
    export: (spans, done) =>
      inner.export(spans, (r) => {
        if (Number(r.code) !== ExportResultCode.SUCCESS) {
          lost += spans.length;
          why = r.error ? errorMessage(r.error) : "export failed";
        } else {
          // journaled (never fsynced, never failing the run): a resume leaves these out
          try {
            record?.("trace.exported", { spans: spans.map((x) => x.spanContext().spanId) });
          } catch {
            // the journal failed: the run says so itself; a span may be sent twice by a resume
          }
        }
        done(r);
      }),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  const { events: earlier, acked } = replayable(opts.earlier ?? []);
  // the standard variable for the batch's delay (this SDK package does not read it itself)
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const batch = new o.sdk.BatchSpanProcessor({
    exporter,
    ...(env.OTEL_BSP_SCHEDULE_DELAY && Number.isInteger(delay) && delay >= 0 ? { scheduledDelayMillis: delay } : {}),
  });
  // what the collector already has is not sent again (ids are the same live and from the journal)
  const processor: Sdk.SpanProcessor = {
    onStart: (span, ctx) => batch.onStart(span, ctx),
    onEnd: (span) => {
      if (!acked.has(span.spanContext().spanId)) batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
  };
  const ids = createSpanIdSource();
  const provider = new o.sdk.TracerProvider({
    resource: resourceOf(o, env, redact),
    idGenerator: ids.generator,
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer("syncbook");
  const firstRun = (opts.earlier ?? []).find((e) => e.type === "run.started");
  const fold = createTraceFold(o.api, tracer, { ids, ...(firstRun ? { cutoverStartedAt: firstRun.at } : {}) });
  // the earlier runs' spans that never reached the collector (a runner killed before it flushed,
  // or run without a collector): built from the journal and sent in the background, as live ones
  if (earlier.length) {
    const replay = createTraceFold(o.api, tracer, { ids });
    for (const e of earlier) replay.apply(e);
    replay.endAll(earlier.at(-1)!.at);
  }
  let last = 0;
  return {
    listener: (e: RunEvent) => {
      last = e.at;
      fold.apply(e);
    },
    traceparent: () => fold.traceparent(),
    record: (emit) => {
      record = emit;
    },
    finish: async () => {
      fold.endAll(last || Date.now());
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), FLUSH_LIMIT_MS)));
      try {
        const r = await Promise.race([provider.forceFlush().then(() => provider.shutdown()), limit]);
        if (r === "late") return `trace export did not finish within ${FLUSH_LIMIT_MS / 1000}s: spans may be missing`;
      } catch (err) {
        return redact(`trace export failed: ${errorMessage(err)}`);
      } finally {
        clearTimeout(timer);
      }
      return lost ? redact(`trace export lost ${lost} span(s): ${why}`) : undefined;
    },
  };
}

/** The spans of a journal's events as an OTLP/JSON `ExportTraceServiceRequest` (the body a collector takes). */
export async function journalToOtlp(
  events: readonly RunEvent[],
  env: Env,
  redact: (s: string) => string = (s) => s,
): Promise<{ json: string; spans: number; traceId: string | undefined }> {
  const o = await loadOtel();
  const transformer = await load<typeof Transformer>("@opentelemetry/otlp-transformer");
  const memory = new o.sdk.InMemorySpanExporter();
  const ids = createSpanIdSource();
  const provider = new o.sdk.TracerProvider({
    resource: resourceOf(o, env, redact),
    idGenerator: ids.generator,
    spanProcessors: [new o.sdk.SimpleSpanProcessor({ exporter: memory })],
  });
  const fold = createTraceFold(o.api, provider.getTracer("syncbook"), { ids });
  for (const e of events) fold.apply(e);
  fold.endAll(events.at(-1)?.at ?? Date.now());
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  const bytes = transformer.JsonTraceSerializer.serializeRequest([...spans]);
  await provider.shutdown();
  return { json: new TextDecoder().decode(bytes), spans: spans.length, traceId: fold.traceId() };
}
