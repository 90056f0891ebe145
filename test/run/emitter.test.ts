/**
 * The event stream's guarantees: every listener (the journal first) sees an event already
 * redacted, whatever put the secret in the payload; a failing ordinary listener never stops the
 * run, a failing critical one (the journal) does.
 */
import { describe, expect, it } from "vitest";
import { createEmitter } from "../../src/run/emitter.js";
import type { RunEvent } from "../../src/events.js";

const redact = (t: string): string => t.split("hunter2-secret").join("***");

describe("createEmitter", () => {
  it("redacts every event once, before the journal and the other listeners see it", () => {
    const seen: RunEvent[] = [];
    const journal: RunEvent[] = [];
    const { emit } = createEmitter([(e) => void seen.push(e)], [(e) => void journal.push(e)], redact);
    // e.g. a service's errorDescription echoing a start body field that came from ${env.*}
    emit("decision", {
      kind: "reconcile",
      ok: true,
      reason: "start: refused: namespace hunter2-secret.orders unknown",
    });
    emit("request.sent", {
      id: 1,
      target: "service",
      method: "POST",
      path: "/api/v1/start",
      body: { includeNamespaces: [{ database: "hunter2-secret" }] },
    });
    for (const list of [seen, journal]) {
      expect(JSON.stringify(list)).not.toContain("hunter2");
      expect(list).toHaveLength(2);
    }
  });

  it("a failing listener is reported and skipped; a failing critical listener throws", () => {
    const logs: string[] = [];
    const { emit } = createEmitter([
      () => {
        throw new Error("renderer broke");
      },
      (e) => void (e.type === "log" && logs.push(e.message)),
    ]);
    expect(() => emit("log", { level: "info", message: "hello" })).not.toThrow();
    expect(logs.some((l) => l.includes("renderer broke"))).toBe(true);
    const strict = createEmitter(
      [],
      [
        () => {
          throw new Error("ENOSPC");
        },
      ],
    );
    expect(() => strict.emit("log", { level: "info", message: "x" })).toThrow("ENOSPC");
  });
});
