/** `start`: every instance must be IDLE; the identical body goes to every instance once. */
import { commandTookEffect } from "../api/index.js";
import { instanceLabel } from "../events.js";
import type { StartRequest } from "../runbook/types.js";
import { keyed, toEach, type StepKindDef } from "./kit/define.js";
import { checkIdentity, checkInterlock, readFleet, sendCommand } from "./kit/fleet-ops.js";
import { commandPossible, resultOf } from "./kit/sequence.js";

export const start: StepKindDef<StartRequest> = {
  body: keyed("start"),
  title: (b) => `Start the sync ${b.source} → ${b.destination}`,
  plan: (b, to) => [
    ...toEach(to, "GET", "/api/v1/progress", { note: "interlock: every instance IDLE" }),
    ...toEach(to, "POST", "/api/v1/start", { body: JSON.parse(to.redact(JSON.stringify(b))) as unknown }),
  ],
  sequence(b, at) {
    const f = at.flow;
    const started = resultOf("start", at.initializing);
    if (f.starts.length > 0) {
      at.report(
        "start-twice",
        `The sync is already started by ${at.line(f.starts[0]!)}; start is allowed only in IDLE.`,
      );
      return { ok: f };
    }
    if (f.firstCommand !== undefined) {
      at.report("start-not-first", `start is allowed only in IDLE, and ${at.line(f.firstCommand)} runs before it.`);
      f.starts = [at.index];
      f.states = started;
      return { ok: f };
    }
    f.starts = [at.index];
    if (!commandPossible(at, "start")) return { ok: f };
    // the embedded verifier (1.9+, on unless the start turns it off) checks until commit
    const embedded = b.verification?.enabled === true || (b.verification?.enabled !== false && at.atLeast("1.9"));
    f.states = started;
    f.canCommitSeen = false;
    f.ceaReached = false;
    f.committed = undefined;
    if (embedded) f.verifying = { at: at.index, embedded: true };
    return { ok: f };
  },
  async run(ctx, body) {
    const snap = await readFleet(ctx);
    checkIdentity(ctx, snap);
    const notIdle = snap.instances.filter((i) => i.progress?.state !== "IDLE");
    checkInterlock(
      ctx,
      "fleet-idle",
      notIdle.length === 0,
      notIdle.length === 0
        ? "every instance is IDLE"
        : `start is allowed only in IDLE; ${notIdle.map((i) => `${instanceLabel(i.ref)} is ${i.progress?.state ?? `unreachable (${i.error?.message ?? "?"})`}`).join(", ")}`,
      "A sync already runs (use --resume to adopt a run this tool started), or an instance is down.",
    );
    await sendCommand(ctx, { op: "start", body, tookEffect: (p) => commandTookEffect("start", p.state) });
  },
};
