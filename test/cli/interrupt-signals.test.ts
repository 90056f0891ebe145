/**
 * A second signal forces the exit only where someone can press Ctrl-C twice. A cancelled CI job
 * has no terminal: GitHub Actions sends SIGINT, then SIGTERM 7.5 s later, then SIGKILL; forcing at
 * the SIGTERM killed the undo still running and dropped the run's end and its page (an outside
 * review). src/cli/execute.ts `interruptOnSignals`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SAME_INTERRUPT_MS, interruptOnSignals } from "../../src/cli/execute.js";

const offs: (() => void)[] = [];
afterEach(() => {
  for (const off of offs.splice(0)) off();
  vi.restoreAllMocks();
});

function setUp(terminal: boolean) {
  let t = 0;
  const said: string[] = [];
  const controller = new AbortController();
  const force = new AbortController();
  const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
  offs.push(
    interruptOnSignals(
      controller,
      (s) => said.push(s),
      force,
      () => t,
      undefined,
      () => terminal,
    ),
  );
  return { controller, force, exit, said, later: (ms: number) => (t += ms) };
}

describe("interruptOnSignals", () => {
  it("with no terminal: the first SIGINT stops cleanly (noted as no terminal's), a SIGTERM after it does not force", () => {
    const r = setUp(false);
    process.emit("SIGINT", "SIGINT");
    expect(r.controller.signal.aborted).toBe(true);
    expect(r.controller.signal.reason).toMatchObject({ signal: "SIGINT", terminal: false });
    expect(r.said.join("")).not.toContain("press Ctrl-C again");
    r.later(7500);
    process.emit("SIGTERM", "SIGTERM");
    expect(r.force.signal.aborted).toBe(false);
    expect(r.exit).not.toHaveBeenCalled();
    expect(r.said.at(-1)).toContain(
      "SIGTERM: still stopping cleanly (no terminal: a second signal does not force the exit)",
    );
  });

  it("at a terminal: a second Ctrl-C (not the same keypress) forces the exit", () => {
    const r = setUp(true);
    process.emit("SIGINT", "SIGINT");
    expect(r.controller.signal.reason).toMatchObject({ signal: "SIGINT", terminal: true });
    expect(r.said.join("")).toContain("press Ctrl-C again to force exit");
    r.later(SAME_INTERRUPT_MS / 2);
    process.emit("SIGINT", "SIGINT");
    expect(r.force.signal.aborted).toBe(false);
    r.later(SAME_INTERRUPT_MS);
    process.emit("SIGINT", "SIGINT");
    expect(r.force.signal.aborted).toBe(true);
    expect((r.force.signal.reason as Error).message).toBe("Ctrl-C twice");
    expect(r.exit).toHaveBeenCalledWith(130);
  });

  it("at a terminal: a SIGTERM after a Ctrl-C forces the exit, and the reason names both", () => {
    const r = setUp(true);
    process.emit("SIGINT", "SIGINT");
    r.later(SAME_INTERRUPT_MS);
    process.emit("SIGTERM", "SIGTERM");
    expect((r.force.signal.reason as Error).message).toBe("Ctrl-C, then SIGTERM");
    expect(r.said.at(-1)).toContain("SIGTERM after SIGINT: forced exit");
  });
});
