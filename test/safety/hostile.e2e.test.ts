/**
 * Issue 12, "Tests": a suite of hostile-but-legal services (late effects, dropped answers,
 * identity changes after start, huge answers), each asserting the exact number of commands each
 * instance received. The services are the simulator's faults (src/sim/README.md) and, where a
 * fault must hit exactly one request, a loopback proxy (test/support/proxy.ts).
 *
 * Item 1: "A lost answer whose effect shows late is resent. … After any transport failure once
 * the request may have reached the service, the command's effect is unknown until progress
 * proves it *took* effect, or the service refuses a repeat; wait out a settle window before
 * judging 'did not take effect', and prefer stopping with what was seen over a resend whenever
 * in doubt." Service facts: "`commit` and `reverse` block until they have been called on every
 * instance".
 *
 * Item 2: "Check identity (distinct ids, one coordinator, one direction) on every progress read
 * that carries ids, and refuse `commit`, `reverse`, `pause`, `resume` on a fleet that is not one."
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import type { Simulator } from "../../src/sim/index.js";
import { proxyTo, type Proxy } from "../support/proxy.js";
import { COMMIT, decisions, posts, READY, runbookFor, runYaml, sim, START, STOP } from "../support/run.js";

let sims: Simulator[] = [];
let proxies: Proxy[] = [];
afterEach(async () => {
  await Promise.all([...sims.map((s) => s.close()), ...proxies.map((p) => p.close())]);
  sims = [];
  proxies = [];
});

async function fleet(opts: Parameters<typeof sim>[0] = {}): Promise<Simulator> {
  const s = await sim({ instances: 2, ...opts });
  sims.push(s);
  return s;
}

const CUTOVER = START + READY + STOP + COMMIT;
const reasons = (events: RunEvent[], kind: string): string[] =>
  decisions(events)
    .filter((d) => d.kind === kind)
    .map((d) => d.reason);

describe("item 1: dropped answers and late effects are never resent blindly", () => {
  it("start applied, connection destroyed without an answer: progress shows it took effect; sent once", async () => {
    const s = await fleet({ faults: ["drop-after-effect@1/start"] });
    const { result, events } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([1, 1]);
    expect(reasons(events, "reconcile").some((r) => /start took effect on sync1/.test(r))).toBe(true);
    expect(s.control.state().fleetErrors).toEqual([]);
  });

  it("start applied, answer lost, progress shows IDLE for a while (late effect): waited out, never resent (it was sent again within ms)", async () => {
    // 20 simulated seconds = 0.4 s of wall time, inside the 2 s settle window (the request's time limit)
    const s = await fleet({ faults: ["late-effect=20s@1/start"] });
    const { result } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(s.control.state().fleetErrors).toEqual([]);
  });

  it("commit joined, answer lost, progress shows RUNNING for a while: not resent (RUNNING proves nothing of a blocking commit)", async () => {
    const s = await fleet({ faults: ["late-effect=20s@1/commit"] });
    const { result, events } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "commit")).toEqual([1, 1]);
    expect(reasons(events, "retry").some((r) => /commit had not taken effect/.test(r))).toBe(false);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
  });

  it("every instance applies commit and drops the answer: progress proves it on each; sent once each", async () => {
    const s = await fleet({ faults: ["drop-after-effect@*/commit"] });
    const { result } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode, result.message).toBe(0);
    expect(result.committed).toBe(true);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });

  it("a start whose effect shows after the settle window is never sent again ('never sends start twice'): the run stops and says why", async () => {
    // 150 simulated s = 3 s of wall time: past the 2 s window; the start then takes effect by itself
    const s = await fleet({ graceMs: 10_000, faults: ["late-effect=150s@1/start"] });
    const { result } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /sync1 gave no usable answer .* and still shows state IDLE after 2s: a start can take effect later than its request's time limit, and start is never sent twice; nothing was resent/,
    );
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([0, 0]);
    await sleep(2000);
    // the late effect landed: one start each, and the fleet is one RUNNING sync
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["RUNNING", "RUNNING"]);
  });

  it("a commit that never reached the service on one instance (reset) while the other holds it: nothing resent, the run says the commit may be held", async () => {
    // the engineer's report: the runner resent commit to the blocked instance and ended with
    // 'still no answer', claiming nothing took effect while that instance held a commit
    const s = await fleet({ faults: ["reset=1@1/commit"] });
    const { result } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode).toBe(1);
    expect(posts(s, "commit")).toEqual([1, 1]);
    expect(result.message).toMatch(/blocks until every instance has received it, so it may be holding one/);
    expect(result.message).not.toMatch(/nothing took effect|still no answer|operation was aborted/);
    expect(s.control.state().instances[0]!.waitingFor).toEqual(["commit"]);
  });

  it("a commit refused at connect on one instance (certainly never sent) while the other holds it: sent again to that instance only; the round closes, everyone commits once", async () => {
    const s = await fleet();
    const p = await proxyTo(s.instances[1]!.url);
    proxies.push(p);
    const yaml = runbookFor(s, CUTOVER).replace(s.instances[1]!.url, p.url);
    const { result, events } = await runYaml(yaml, {
      onEvent: (e) => {
        if (e.type === "decision" && e.check === "can-commit" && e.ok) p.refuse();
        if (e.type === "decision" && e.kind === "reconcile" && e.reason.startsWith("commit: no answer"))
          void p.accept();
      },
    });
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "commit")).toEqual([1, 1]);
    expect(p.seen.filter((r) => r === "POST /api/v1/commit")).toHaveLength(1);
    expect(
      reasons(events, "retry").some((r) => /commit had not taken effect on sync1 \(the request never left\)/.test(r)),
    ).toBe(true);
    expect(s.control.state().instances.map((i) => i.state)).toEqual(["COMMITTED", "COMMITTED"]);
  });

  it("the step's time limit during the reconcile: the failure says what was sent and seen, never a bare 'The operation was aborted'", async () => {
    const s = await fleet({ faults: ["reset=1@1/commit"] });
    const yaml = runbookFor(s, CUTOVER).replace(
      "{ id: commit, commit: {} }",
      "{ id: commit, timeout: 1s, commit: {} }",
    );
    const { result } = await runYaml(yaml);
    expect(result.exitCode).toBe(1);
    expect(result.message).toMatch(
      /commit was sent \(accepted by 0 instance\(s\)\); the step's time limit \(1s\) passed while reading progress to learn whether it took effect on sync0 .*sync1/,
    );
    expect(result.message).not.toMatch(/operation was aborted/);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });

  it("progress answers larger than the client's limit on one instance: start is refused before it is sent (that instance's state is unknown)", async () => {
    const s = await fleet({ faults: ["huge-progress=2MiB@1"] });
    const yaml = runbookFor(s, CUTOVER).replace("retry: { giveUpAfter: 15s }", "retry: { giveUpAfter: 1s }");
    const { result } = await runYaml(yaml);
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/refused \(fleet-idle\).*sync1 is unreachable \(.*larger than/);
    expect(posts(s, "start")).toEqual([0, 0]);
  });

  it("huge progress answers under the limit: the cutover completes, one start and one commit each", async () => {
    const s = await fleet({ faults: ["huge-progress=600KiB"] });
    const { result } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode, result.message).toBe(0);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });
});

describe("item 2: fleet identity on every progress read, not once before start", () => {
  it("an instance reports another fleet's coordinator after start: the wait says so, commit is refused (exit 3), nothing sent", async () => {
    const s = await fleet({ faults: ["identity-change=coordinator,on=start@1"] });
    const { result, events } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(
      /refused \(fleet-identity\): the instances are not one fleet: sync1 reports coordinatorID/,
    );
    const said = decisions(events).filter((d) => d.kind === "identity" && !d.ok);
    // said during the wait (no step id: any read), before the commit step
    // (which check says it first depends on whether sync0 already reports its coordinator: "may be null at start-up")
    expect(said[0]?.reason).toMatch(/the instances are not one fleet: .*"other-fleet-instance-0"/);
    expect(posts(s, "start")).toEqual([1, 1]);
    expect(posts(s, "commit")).toEqual([0, 0]);
  });

  it("one instance's direction swaps after start (a fleet of one cannot show it within a read): commit refused", async () => {
    const s = await sim({ faults: ["identity-change=direction,on=start@0"] });
    sims.push(s);
    const { result } = await runYaml(runbookFor(s, CUTOVER));
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(/expected source cluster "cluster0".*\(the direction of the start step start\)/);
    expect(posts(s, "commit")).toEqual([0]);
  });

  it("an identity change that comes and goes: commit stays refused for the run, with when it was seen", async () => {
    const s = await fleet();
    let fault: number | undefined;
    const { result } = await runYaml(runbookFor(s, CUTOVER), {
      onEvent: (e) => {
        if (e.type === "step.started" && e.id === "ready")
          fault = s.control.addFault("identity-change=coordinator@1").id;
        if (e.type === "decision" && e.kind === "identity" && !e.ok && fault !== undefined) {
          s.control.removeFault(fault);
          fault = undefined;
        }
      },
    });
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(
      /refused \(fleet-identity\): the instances are not one fleet: they report one fleet now, but did not at \d{4}-\d\d-\d\dT.*other-fleet/,
    );
    expect(posts(s, "commit")).toEqual([0, 0]);
  });

  it("pause, resume and reverse are refused on a fleet that is not one", async () => {
    const s = await fleet({ faults: ["identity-change=coordinator,on=start@1"] });
    const { result } = await runYaml(runbookFor(s, `${START}${READY}  - { id: pause, pause: {} }\n`));
    expect(result.exitCode).toBe(3);
    expect(result.failedStep).toBe("pause");
    expect(result.message).toMatch(/refused \(fleet-identity\)/);
    expect(posts(s, "pause")).toEqual([0, 0]);
  });

  it("another process answers at an instance's address (its mongosyncID changes, nothing else): commit refused", async () => {
    const s = await sim({ ids: ["shard-a"] });
    const impostor = await sim({ ids: ["shard-z"] });
    sims.push(s, impostor);
    await fetch(`${impostor.instances[0]!.url}/api/v1/start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ source: "cluster0", destination: "cluster1" }),
    });
    const p = await proxyTo(s.instances[0]!.url);
    proxies.push(p);
    const yaml = runbookFor(s, CUTOVER).replace(s.instances[0]!.url, p.url);
    const { result } = await runYaml(yaml, {
      onEvent: (e) => {
        if (e.type === "step.started" && e.id === "stop-writes") p.retarget(impostor.instances[0]!.url);
      },
    });
    expect(result.exitCode).toBe(3);
    expect(result.message).toMatch(
      /sync0 now reports mongosyncID "shard-z", and "shard-a" earlier in this run: another process answers at its address/,
    );
    expect(posts(s, "commit")).toEqual([0]);
    expect(posts(impostor, "commit")).toEqual([0]);
  });

  it("--force=fleet-identity names the check: the refusal is recorded as overridden and commit goes out once each", async () => {
    const s = await fleet({ faults: ["identity-change=coordinator,on=start@1"] });
    const { result, events } = await runYaml(runbookFor(s, CUTOVER), { force: ["fleet-identity"] });
    expect(result.exitCode, result.message).toBe(0);
    expect(
      decisions(events).some(
        (d) => d.kind === "identity" && d.ok && /overridden by --force=fleet-identity/.test(d.reason),
      ),
    ).toBe(true);
    expect(posts(s, "commit")).toEqual([1, 1]);
  });
});

describe("item 14: a negative lag is a service fault, never 'below 5'", () => {
  it("lagTimeSeconds of -3 never meets lagBelow 5: the wait times out saying why, and commit is never sent", async () => {
    const s = await fleet({ faults: ["negative-lag=3"] });
    const steps = `${START}  - { id: ready, timeout: 2s, waitFor: { canCommit: true, lagBelow: 5 } }\n${STOP}${COMMIT}`;
    const { result } = await runYaml(runbookFor(s, steps));
    expect(result.exitCode).toBe(1);
    expect(result.failedStep).toBe("ready");
    expect(result.message).toMatch(
      /lagBelow 5 \(now -3 \(a negative lag is a fault of the service, not a small lag\)\)/,
    );
    expect(posts(s, "commit")).toEqual([0, 0]);
  });
});
