/**
 * Whether a run exports a trace, from OpenTelemetry's standard variables alone (nothing of
 * OpenTelemetry is imported here: `syncbook lint` and a run without them never load it).
 *
 * On when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`) and `OTEL_TRACES_EXPORTER` is unset or `otlp`; `none` turns it
 * off whatever else is set. The protocol is `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else the specification's default `http/protobuf`; `grpc` is
 * refused with a hint (one transport fewer to carry: every collector takes OTLP over HTTP).
 */
import { ExitCode, UserError } from "../errors.js";

export type TraceProtocol = "http/protobuf" | "http/json";

export interface TraceConfig {
  protocol: TraceProtocol;
}

type Env = Readonly<Record<string, string | undefined>>;

export function traceConfig(env: Env): TraceConfig | undefined {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.includes("none") || !exporters.includes("otlp")) return undefined;
  if (!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    "http/protobuf"
  ).trim();
  if (protocol === "http/protobuf" || protocol === "http/json") return { protocol };
  throw new UserError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported by syncbook's trace export`, {
    hint: "Use http/protobuf (the default) or http/json: every OpenTelemetry collector accepts OTLP over HTTP on port 4318.",
    exitCode: ExitCode.usage,
  });
}
