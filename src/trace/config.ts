/**
 * Whether a run exports a trace, from OpenTelemetry's standard variables alone (nothing of
 * OpenTelemetry is imported here: `syncbook lint` and a run without them never load it).
 *
 * On when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) and `OTEL_TRACES_EXPORTER` is unset or `otlp`; `none` turns it
 * off whatever else is set. The protocol is `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else the specification's default `http/protobuf`. `grpc` (or any
 * other) is not supported (one transport fewer to carry: every collector takes OTLP over HTTP):
 * the run goes on untraced, and `traceProblem` says why. A trace is an aid, never a reason to
 * stop a cutover.
 */
export type TraceProtocol = "http/protobuf" | "http/json";

export interface TraceConfig {
  protocol: TraceProtocol;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The protocol the variables ask for, when an OTLP endpoint turns tracing on; undefined when off. */
function asked(env: Env): string | undefined {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.includes("none") || !exporters.includes("otlp")) return undefined;
  if (!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim();
}

export function traceConfig(env: Env): TraceConfig | undefined {
  const protocol = asked(env);
  return protocol === "http/protobuf" || protocol === "http/json" ? { protocol } : undefined;
}

/** Why the variables ask for a trace that will not be exported (a protocol syncbook does not speak); undefined otherwise. */
export function traceProblem(env: Env): string | undefined {
  const protocol = asked(env);
  if (protocol === undefined || traceConfig(env)) return undefined;
  const name =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== undefined
      ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
      : "OTEL_EXPORTER_OTLP_PROTOCOL";
  return `${name}=${protocol} is not supported by syncbook's trace export: this run is not traced (set it to http/protobuf, the default, or http/json: every OpenTelemetry collector accepts OTLP over HTTP on port 4318)`;
}
