/**
 * The runner's own safety rules, in process (events asserted), for what lint already refuses
 * statically: the runner must hold them even for a runbook lint never saw (`--from`, an old
 * journal, a library caller). Against the simulator over loopback.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import type { RunEvent, RunEventOf } from "../../src/events.js";
import { runRunbook, type RunResult } from "../../src/run/runner.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Simulator } from "../../src/sim/index.js";
import { startSimulator } from "../../src/sim/index.js";
import { COMMIT, posts, READY, runbookFor, sim, START, STOP } from "../support/run.js";
import { proxyTo } from "../support/proxy.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

let sims: Simulator[] = [];
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

async function run(
  yaml: string,
  opts: { force?: string[]; onEvent?: (e: RunEvent) => void } = {},
): Promise<{ result: RunResult; events: RunEvent[] }> {
  const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
  expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
  const events: RunEvent[] = [];
  const result = await runRunbook({
    loaded,
    registry,
    listeners: [(e) => void events.push(e), (e) => opts.onEvent?.(e)],
    print: () => undefined,
    ...(opts.force ? { force: opts.force } : {}),
  });
  return { result, events };
}

const decisions = (events: RunEvent[]) => events.filter((e): e is RunEventOf<"decision"> => e.type === "decision");

describe("continueOnError never carries a run past a failed start, commit, reverse or write stop", () => {
  // lint refuses the flag there (continue-on-error-unsafe); the runner holds it for a runbook lint never saw
  const unlinted = async (yaml: string): Promise<{ result: RunResult; events: RunEvent[] }> => {
    const loaded = await parseRunbook(yaml, "rb.yaml", { env: {} });
    expect(loaded.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const { registry } = await loadRunbookPlugins(loaded, { callKinds: PLUGIN_CALL_KINDS });
    const events: RunEvent[] = [];
    const result = await runRunbook({
      loaded,
      registry,
      listeners: [(e) => void events.push(e)],
      print: () => undefined,
    });
    return { result, events };
  };
  const lastSaid = (events: RunEvent[]): string[] =>
    events.filter((e): e is RunEventOf<"log"> => e.type === "log").map((e) => e.message);

  it('a commit the service refuses: the run fails (it ended "run ok, not committed, exit 0")', async () => {
    const s = await sim();
    sims.push(s);
    s.control.addFault("commit-refused");
    const { result, events } = await unlinted(
      runbookFor(s, START + READY + STOP + "  - { id: commit, commit: {}, continueOnError: true }\n"),
    );
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(/^step commit failed/);
    expect(lastSaid(events).join("\n")).toMatch(
      /step commit failed; continueOnError does not apply: a commit that failed or was refused leaves the cutover not committed/,
    );
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["RUNNING"]);
  });

  it('a commit refused by an interlock (no write stop): refused, exit 3, never "ok"', async () => {
    const s = await sim();
    sims.push(s);
    const { result } = await unlinted(
      runbookFor(s, START + READY + "  - { id: commit, commit: {}, continueOnError: true }\n"),
    );
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(writes-stopped\)/);
    expect(posts(s, "commit")).toEqual([0]);
  });

  it("a start the service refuses: the run stops there", async () => {
    const s = await sim();
    sims.push(s);
    s.control.addFault("http500=1@*/start");
    const { result, events } = await unlinted(
      runbookFor(
        s,
        "  - { id: start, start: { source: cluster0, destination: cluster1 }, continueOnError: true }\n" + READY,
      ),
    );
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(/^step start failed/);
    expect(events.some((e) => e.type === "step.started" && e.id === "ready")).toBe(false);
  });
});

describe("commit interlocks", () => {
  it("refuses commit when no stopWrites succeeded in this run, with the reason; nothing sent", async () => {
    const s = await sim();
    sims.push(s);
    const { result, events } = await run(runbookFor(s, START + READY + COMMIT));
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(writes-stopped\)/);
    expect(result.hint).toContain("Run the stopWrites step first (a --from past it skips it)");
    expect(decisions(events).find((d) => d.check === "writes-stopped")).toMatchObject({ kind: "interlock", ok: false });
    expect(posts(s, "commit")).toEqual([0]);
  });

  it("--force=writes-stopped names the check to skip: the decision is recorded as forced, commit is sent once", async () => {
    const s = await sim();
    sims.push(s);
    const { result, events } = await run(runbookFor(s, START + READY + COMMIT), { force: ["writes-stopped"] });
    expect(result.exitCode).toBe(0);
    expect(
      decisions(events).some(
        (d) =>
          d.check === "writes-stopped" &&
          d.kind === "force" &&
          d.reason.includes("overridden by --force=writes-stopped"),
      ),
    ).toBe(true);
    expect(posts(s, "commit")).toEqual([1]);
  });

  it("refuses commit after an instance answered with an error earlier in the run (no-errors)", async () => {
    const s = await sim();
    sims.push(s);
    // a pause sent while IDLE (forced past its state check) is refused by the service
    const steps = `  - { id: early-pause, pause: {}, continueOnError: true }\n${START}${READY}${STOP}${COMMIT}`;
    const { result, events } = await run(runbookFor(s, steps), { force: ["fleet-state"] });
    expect(result.exitCode).toBe(3);
    expect(decisions(events).find((d) => d.check === "no-errors")).toMatchObject({ ok: false });
    expect(result.message).toMatch(/refused \(no-errors\).*pause/);
    expect(posts(s, "commit")).toEqual([0]);
  });

  it("an instance down before commit: every retry says nothing has been sent yet, what commit waits for and for how long; then refused, commit never sent", async () => {
    const s = await sim({ instances: 2 });
    sims.push(s);
    const yaml = runbookFor(s, START + READY + STOP + COMMIT).replace(
      "retry: { giveUpAfter: 15s }",
      "retry: { giveUpAfter: 2s }",
    );
    const { result, events } = await run(yaml, {
      onEvent: (e) => {
        if (e.type === "step.finished" && e.id === "stop-writes") s.control.addFault("down=1");
      },
    });
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(can-commit\).*sync1 is unreachable/);
    const retries = decisions(events).filter((d) => d.id === "commit" && d.kind === "retry");
    expect(retries.length).toBeGreaterThan(0);
    for (const d of retries)
      expect(d.reason).toMatch(
        /progress failing on sync1 .*; nothing has been sent yet: commit waits for sync1 so that its interlocks judge the whole fleet, and is refused unsent if still so in \d+(\.\d+)?m?s/,
      );
    expect(posts(s, "commit")).toEqual([0, 0]);
  });

  it("refuses start unless every instance is IDLE", async () => {
    const s = await sim();
    sims.push(s);
    await fetch(`${s.instances[0]?.url}/api/v1/start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ source: "cluster0", destination: "cluster1" }),
    });
    const { result } = await run(runbookFor(s, START));
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(fleet-idle\): start is allowed only in IDLE; sync0 is RUNNING/);
    expect(posts(s, "start")).toEqual([1]);
  });

  it("refuses to command instances that are not one fleet (two coordinators), saying which differs", async () => {
    const a = await startSimulator({
      ids: ["a0"],
      data: "1GiB",
      timeScale: 50,
      clusters: { cluster0: { topology: "replicaSet" }, cluster1: { topology: "replicaSet" } },
    });
    const b = await startSimulator({
      ids: ["b0"],
      data: "1GiB",
      timeScale: 50,
      clusters: { cluster0: { topology: "replicaSet" }, cluster1: { topology: "replicaSet" } },
    });
    sims.push(a, b);
    for (const x of [a, b])
      await fetch(`${x.instances[0]?.url}/api/v1/start`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ source: "cluster0", destination: "cluster1" }),
      });
    const two = { ...a, instances: [...a.instances, ...b.instances.map((i) => ({ ...i, index: 1 }))] };
    const { result, events } = await run(runbookFor(two, READY + STOP + COMMIT));
    expect(result.exitCode).toBe(3);
    const identity = decisions(events).find((d) => d.kind === "identity");
    expect(identity?.ok).toBe(false);
    expect(identity?.reason).toMatch(/coordinator/i);
    expect(posts(a, "commit")).toEqual([0]);
    expect(posts(b, "commit")).toEqual([0]);
  });
});

describe("start and commit are never resent blindly", () => {
  it("commit handled but its answer lost (connection reset after): progress shows COMMITTING, so it is not sent again", async () => {
    const s = await sim({ instances: 2, faults: ["reset-after=1@1/commit"] });
    sims.push(s);
    const { result, events } = await run(runbookFor(s, START + READY + STOP + COMMIT));
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "commit")).toEqual([1, 1]);
    expect(decisions(events).some((d) => d.kind === "reconcile" && /took effect on sync1/.test(d.reason))).toBe(true);
  });

  it("start reset in flight: it may have reached the service, so it is never sent again, even when progress shows IDLE", async () => {
    const s = await sim({ instances: 2, graceMs: 10_000, faults: ["reset=1@1/start"] });
    sims.push(s);
    const { result } = await run(runbookFor(s, START + READY + STOP + COMMIT), {
      onEvent: (e) => {
        if (e.type === "decision" && e.kind === "reconcile") s.control.clearFaults();
      },
    });
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(/start is never sent twice; nothing was resent/);
    // the simulator counts the reset request: each instance received start once
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([0, 0]);
  });

  it("when progress cannot tell (the instance stays unreachable), nothing is resent and the run stops with what it saw", async () => {
    const s = await sim({ instances: 2, faults: ["reset=1@1/start"] });
    sims.push(s);
    const yaml = runbookFor(s, START + READY + STOP + COMMIT).replace(
      "retry: { giveUpAfter: 15s }",
      "retry: { giveUpAfter: 1s }",
    );
    const { result } = await run(yaml, {
      onEvent: (e) => {
        // from the moment start is sent, instance 1's progress fails too
        if (e.type === "request.sent" && e.path === "/api/v1/start") s.control.addFault("http500=1@1/progress");
      },
    });
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(/cannot tell whether start took effect on sync1/);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(s.control.state().instances[1]?.state).toBe("IDLE");
  });

  it("start that never left (connection refused) to an instance whose progress cannot be read: said so, not 'cannot tell', and nothing resent", async () => {
    const s = await sim({ instances: 2 });
    sims.push(s);
    // sync1 is reached through a proxy that closes every connection after its answer and stops
    // listening once the runner decided the fleet is idle: the start POST is refused at connect
    const proxy = await proxyTo(s.instances[1]!.url);
    const yaml = runbookFor(s, START + READY + STOP + COMMIT)
      .replace(s.instances[1]!.url, proxy.url)
      .replace("retry: { giveUpAfter: 15s }", "retry: { giveUpAfter: 1s }");
    const { result, events } = await run(yaml, {
      onEvent: (e) => {
        if (e.type === "decision" && e.check === "fleet-idle" && e.ok) proxy.refuse();
      },
    }).finally(() => proxy.close());
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /start never reached sync1 \(.*\), and progress does not show it is safe to send; nothing was resent/,
    );
    expect(result.message).not.toMatch(/cannot tell/);
    expect(events.some((e) => e.type === "response.received" && e.errorKind === "not-sent")).toBe(true);
    expect(posts(s, "start")).toEqual([1, 0]);
  });

  // facts: "`commit` and `reverse` block until they have been called on every instance": the instance that
  // took the commit waits for the one that refused it, so the fleet cannot split on commit; the refusal is an
  // answer, never resent to the refuser, and nobody commits alone
  it("a commit refused by one instance while the others wait for it: not resent to the refuser, the run stops, nobody commits alone", async () => {
    const s = await sim({ instances: 2, faults: ["commit-refused@1"] });
    sims.push(s);
    const { result } = await run(runbookFor(s, START + READY + STOP + COMMIT));
    expect(result.exitCode).toBe(1);
    expect(posts(s, "commit")[1]).toBe(1);
    expect(result.message).toMatch(/commit/);
    const st = s.control.state();
    expect(st.instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING"]);
    expect(st.instances[0]!.waitingFor).toEqual(["commit"]);
  });

  it("a commit refused by every instance: nothing took effect, the run says so and does not claim a commit", async () => {
    const s = await sim({ faults: ["commit-refused@0"] });
    sims.push(s);
    const { result, events } = await run(runbookFor(s, START + READY + STOP + COMMIT));
    expect(result.exitCode).toBe(1);
    expect(result.committed).toBe(false);
    expect(result.message).toMatch(/no instance accepted it: this request took no effect/);
    const finished = events.find((e): e is RunEventOf<"run.finished"> => e.type === "run.finished");
    expect(finished?.committed).toBe(false);
  });

  it("start answered after the request's time limit: the runner waits the limit out before reading progress, sees it took effect, and never sends it twice", async () => {
    const s = await sim({ instances: 2, graceMs: 10_000, faults: ["latency=3s@1/start"] });
    sims.push(s);
    const { result, events } = await run(runbookFor(s, START + READY + STOP + COMMIT));
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(decisions(events).some((d) => d.kind === "reconcile" && /start took effect on sync1/.test(d.reason))).toBe(
      true,
    );
  });
});
