/**
 * The event stream's guarantees: every listener (the journal first) sees an event already
 * redacted, whatever put the secret in the payload; a failing ordinary listener never stops the
 * run, a failing critical one (the journal) does.
 */
import { describe, expect, it } from "vitest";
import { createEmitter } from "../../src/run/emitter.js";
import type { RunEvent } from "../../src/events.js";
import { createRedactor } from "../../src/redact.js";

const redact = createRedactor(["hunter2-secret"]);

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

  // issue 12, items 8-9: structured values are redacted leaf by leaf, not as serialized text
  it("a secret with a quote or a backslash is removed from a body, not left JSON-escaped", () => {
    const secret = 'pa"ss\\wo';
    const seen: RunEvent[] = [];
    const { emit } = createEmitter([(e) => void seen.push(e)], [], createRedactor([secret]));
    emit("request.sent", { id: 1, target: "service", method: "POST", path: "/p", body: { note: `x ${secret} y` } });
    emit("log", { level: "warn", message: `echoed: ${JSON.stringify({ v: secret })}` });
    const text = JSON.stringify(seen);
    expect(text).not.toContain('pa\\"ss');
    expect(JSON.stringify(seen.map((e) => (e.type === "log" ? e.message : "")))).not.toContain("ss\\\\wo");
    expect(seen[0]).toMatchObject({ body: { note: "x *** y" } });
  });

  it("a secret that is a key name leaves the event whole; a boolean word is not a secret (src/redact.ts)", () => {
    const seen: RunEvent[] = [];
    const { emit } = createEmitter([(e) => void seen.push(e)], [], createRedactor(["true", "type", "step"]));
    const e = emit("step.started", { index: 0, id: "step-1", kind: "waitFor", title: "true type" });
    expect(e.type).toBe("step.started");
    expect(seen[0]).toMatchObject({ type: "step.started", index: 0, id: "***-1", title: "true ***" });
    emit("response.received", { id: 1, target: "service", ok: true, body: { success: true }, durationMs: 1 });
    expect(seen[1]).toMatchObject({ ok: true, body: { success: true } });
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
