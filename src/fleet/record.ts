/**
 * The request/response events of every command the run sends (to the service's instances and to
 * the verifier): the fleet is their one producer, so every `response.received` carries the same
 * `errorKind` rule and every body is redacted the same way. The API client only returns outcomes.
 */
import type { CommandOutcome } from "../api/client.js";
import { mayStillArrive, ServiceError, TransportError, type ApiError } from "../api/errors.js";
import type { Emit, InstanceRef } from "../events.js";
import { userinfoRedactor } from "../redact.js";

/** Emits one event of the run's stream (the emitter adds `seq` and `at`). */
export type FleetEmit = (...args: Parameters<Emit>) => void;

export interface RequestTarget {
  target: "service" | "verifier";
  instance?: InstanceRef;
}

/** Whether a failed command may have taken effect (the journal keeps it for --resume). */
export function errorKind(err: ApiError): "service" | "transport" | "not-sent" {
  if (err instanceof ServiceError) return "service";
  return err instanceof TransportError && !err.requestSent ? "not-sent" : "transport";
}

/** `more`: more requests of the same fan-out follow at once (the journal makes them durable together). */
export function emitRequest(
  emit: FleetEmit,
  id: number,
  to: RequestTarget,
  path: string,
  body: unknown,
  more = false,
  fanout?: [number, number],
): void {
  emit(
    "request.sent",
    {
      id,
      ...(to.instance ? { instance: to.instance } : {}),
      target: to.target,
      method: "POST",
      path,
      body: userinfoRedactor.value(body),
      ...(fanout ? { fanout } : {}),
    },
    more ? { more } : undefined,
  );
}

export function emitResponse(emit: FleetEmit, id: number, to: RequestTarget, o: CommandOutcome, more = false): void {
  const where = { id, ...(to.instance ? { instance: to.instance } : {}), target: to.target };
  const options = more ? { more } : undefined;
  if (o.ok) {
    emit(
      "response.received",
      {
        ...where,
        status: o.status,
        ok: true,
        body: userinfoRedactor.value(o.answer),
        durationMs: o.durationMs,
      },
      options,
    );
    return;
  }
  emit(
    "response.received",
    {
      ...where,
      ...(o.status !== undefined ? { status: o.status } : {}),
      ok: false,
      error: o.error.message,
      errorKind: errorKind(o.error),
      ...(errorKind(o.error) === "transport" ? { inFlight: mayStillArrive(o.error) } : {}),
      durationMs: o.durationMs,
    },
    options,
  );
}
