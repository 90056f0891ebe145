/**
 * A realistic, synthesized event sequence of a 2-instance cutover (start, copy 0→100 %, lag,
 * verification, stopWrites hook, commit, COMMITTED), shaped like the runner's events, so the
 * report can be tested before and without a real run.
 */
import type { Progress } from "../../src/api/types.js";
import type { InstanceRef, RunEvent, RunEventMap, RunEventType } from "../../src/events.js";

export interface SynthOptions {
  /** The commit interlock refuses: the run fails at the commit step; later steps are never reached. */
  refuseCommit?: boolean;
  /** Put a password into instance 1's URL and secrets into bodies (as a runner bug would). */
  leakSecrets?: boolean;
  /** Stop after this many events (a crash): no run.finished. */
  cutAfter?: number;
  /** Progress polls per instance during the copy (default 10). */
  copyPolls?: number;
}

export const T0 = Date.UTC(2025, 2, 14, 3, 0, 0);
export const TOTAL = 2 * 1024 ** 3;

export interface Synth {
  events: RunEvent[];
  instances: InstanceRef[];
  /** progress.sampled events per instance index. */
  progressSamples: Map<number, number>;
  /** progress samples per instance with a numeric lagTimeSeconds. */
  lagSamples: Map<number, number>;
  verifierSamples: number;
  requests: number;
  steps: { index: number; id: string; kind: string; title: string }[];
}

export function synthRun(opts: SynthOptions = {}): Synth {
  const events: RunEvent[] = [];
  let seq = 0;
  let now = T0;
  let reqId = 0;
  const emit = <K extends RunEventType>(type: K, payload: RunEventMap[K]): void => {
    events.push({ type, seq: seq++, at: now, ...payload } as unknown as RunEvent);
  };
  const instances: InstanceRef[] = [
    { url: "http://127.0.0.1:27182", name: "shard-a", index: 0 },
    {
      url: opts.leakSecrets ? "http://admin:hunter2@127.0.0.1:27183" : "http://127.0.0.1:27183",
      name: "shard-b",
      index: 1,
    },
  ];
  const steps = [
    { index: 0, id: "start", kind: "start", title: "start the sync" },
    { index: 1, id: "wait-can-commit", kind: "waitFor", title: "wait for canCommit and lag below 5 s" },
    { index: 2, id: "verify", kind: "verify", title: "verify" },
    { index: 3, id: "stop-writes", kind: "stopWrites", title: "stop application writes" },
    { index: 4, id: "commit", kind: "commit", title: "commit" },
    { index: 5, id: "wait-committed", kind: "waitFor", title: "wait for COMMITTED" },
    { index: 6, id: "assert-committed", kind: "assert", title: "assert COMMITTED & canWrite" },
  ];
  const progressSamples = new Map<number, number>([
    [0, 0],
    [1, 0],
  ]);
  const lagSamples = new Map<number, number>([
    [0, 0],
    [1, 0],
  ]);
  let verifierSamples = 0;

  const request = (
    target: "service" | "verifier" | "hook",
    method: string,
    path: string,
    instance: InstanceRef | undefined,
    body: unknown,
    answer: unknown,
    ok = true,
    status = 200,
  ): void => {
    const id = ++reqId;
    const sent: RunEventMap["request.sent"] = {
      id,
      target,
      method,
      path,
      ...(instance ? { instance } : {}),
      ...(body === undefined ? {} : { body }),
    };
    emit("request.sent", sent);
    now += 7;
    emit("response.received", {
      id,
      target,
      ...(instance ? { instance } : {}),
      status,
      ok,
      body: answer,
      durationMs: 7,
    });
  };
  const progress = (i: InstanceRef, p: Record<string, unknown>): void => {
    const body = { success: true, progress: p };
    request("service", "GET", "/api/v1/progress", i, undefined, body);
    emit("progress.sampled", { instance: i, progress: p as Progress });
    progressSamples.set(i.index, (progressSamples.get(i.index) ?? 0) + 1);
    if (typeof p.lagTimeSeconds === "number") lagSamples.set(i.index, (lagSamples.get(i.index) ?? 0) + 1);
  };
  const prog = (
    state: string,
    copied: number,
    lag: number | null,
    applied: number | null,
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> => ({
    state,
    canCommit: false,
    canWrite: false,
    info: copied < TOTAL / 2 ? "collection copy" : "change event application",
    lagTimeSeconds: lag,
    totalEventsApplied: applied,
    collectionCopy: { estimatedTotalBytes: TOTAL, estimatedCopiedBytes: copied },
    directionMapping: { Source: "cluster0: rs0:27017", Destination: "cluster1: mongos:27017" },
    ...extra,
  });
  const step = (s: (typeof steps)[number], body: () => "ok" | "failed", error?: string): boolean => {
    emit("step.started", s);
    const t = now;
    const outcome = body();
    now += 3;
    emit("step.finished", {
      index: s.index,
      id: s.id,
      outcome,
      durationMs: now - t,
      ...(outcome === "failed" && error ? { error, hint: "stop writes before commit" } : {}),
    });
    return outcome === "ok";
  };

  emit("run.started", {
    runbook: "sales-rs-to-sharded",
    file: "runbooks/rs-to-sharded.yaml",
    hash: "sha256:4f2a",
    instances,
    verifier: "http://127.0.0.1:27020",
    mode: "rehearse",
    steps,
  });
  now += 20;
  const [s0, s1, s2, s3, s4, s5, s6] = steps as [
    (typeof steps)[number],
    (typeof steps)[number],
    (typeof steps)[number],
    (typeof steps)[number],
    (typeof steps)[number],
    (typeof steps)[number],
    (typeof steps)[number],
  ];
  const startBody = {
    source: "cluster0",
    destination: "cluster1",
    ...(opts.leakSecrets
      ? { headers: { Authorization: "Bearer s3cr3t-token" }, note: "mongodb://root:pa55w0rd@db:27017" }
      : {}),
  };
  step(s0, () => {
    for (const i of instances) request("service", "POST", "/api/v1/start", i, startBody, { success: true });
    return "ok";
  });
  const polls = opts.copyPolls ?? 10;
  step(s1, () => {
    for (let k = 0; k <= polls; k++) {
      now += 1000;
      for (const i of instances) {
        // shards copy at different speeds: shard-b starts slower and catches up
        const copied = Math.round((TOTAL / 2) * (i.index === 0 ? k / polls : (k / polls) ** 1.6));
        const lag = k < 2 ? null : Math.max(0, Math.round(30 - k * 3 + i.index * 2));
        const done = k === polls;
        progress(i, prog("RUNNING", copied, lag, k * 1000 + i.index * 100, done ? { canCommit: true } : {}));
      }
      emit("wait.status", {
        index: 1,
        id: "wait-can-commit",
        met: k === polls,
        failing:
          k === polls
            ? []
            : instances.map((i) => ({
                instance: i.name ?? i.url,
                condition: "canCommit",
                value: false,
                sinceMs: k * 1000,
              })),
      });
    }
    return "ok";
  });
  step(s2, () => {
    request("verifier", "POST", "/api/v1/check", undefined, {}, { success: true });
    for (let k = 0; k < 6; k++) {
      now += 1000;
      const total = 40;
      const completed = Math.min(total, k * 8);
      const p = {
        phase: k === 5 ? "idle" : k < 3 ? "check" : "recheck",
        error: null,
        verificationStatus: {
          totalTasks: total,
          addedTasks: total - completed - 2 > 0 ? total - completed - 2 : 0,
          processingTasks: k === 5 ? 0 : 2,
          failedTasks: 0,
          completedTasks: completed,
          metadataMismatchTasks: 0,
          recheckTasks: k === 5 ? 0 : 3,
        },
      };
      request("verifier", "GET", "/api/v1/progress", undefined, undefined, { progress: p });
      emit("verifier.sampled", { progress: p });
      verifierSamples++;
    }
    // what a verify step that passed on this cutover's result journals (src/steps/verify.ts)
    emit("verifier.verified", {
      index: 2,
      id: "verify",
      progress: { phase: "idle", generation: 2, error: null },
      writesOffGeneration: 1,
    });
    return "ok";
  });
  if (!opts.refuseCommit) {
    step(s3, () => {
      emit("hook.started", { index: 3, id: "stop-writes", use: "shell", undo: false });
      now += 250;
      emit("hook.finished", { index: 3, id: "stop-writes", use: "shell", undo: false, ok: true, durationMs: 250 });
      return "ok";
    });
  } else {
    emit("step.skipped", { index: 3, id: "stop-writes", reason: "when: vars.stopWrites is false" });
  }
  const committed = step(
    s4,
    () => {
      if (opts.refuseCommit) {
        emit("decision", {
          index: 4,
          id: "commit",
          kind: "interlock",
          ok: false,
          check: "stopWrites",
          reason: "no stopWrites step has succeeded in this run",
        });
        return "failed";
      }
      emit("decision", {
        index: 4,
        id: "commit",
        kind: "interlock",
        ok: true,
        check: "canCommit",
        reason: "every instance RUNNING with canCommit true",
      });
      for (const i of instances) request("service", "POST", "/api/v1/commit", i, {}, { success: true });
      emit("commit.sent", { index: 4, id: "commit", instances: instances.map((i) => i.name ?? i.url), skewMs: 3 });
      return "ok";
    },
    "commit refused: no stopWrites step has succeeded in this run",
  );
  if (committed) {
    step(s5, () => {
      for (let k = 0; k < 3; k++) {
        now += 1000;
        for (const i of instances)
          progress(
            i,
            prog(k < 2 ? "COMMITTING" : "COMMITTED", TOTAL / 2, k < 2 ? 1 : 0, 12000 + k * 10, {
              canCommit: false,
              canWrite: k >= 1,
            }),
          );
      }
      return "ok";
    });
    step(s6, () => {
      for (const i of instances) progress(i, prog("COMMITTED", TOTAL / 2, 0, 12030, { canWrite: true }));
      return "ok";
    });
    emit("log", { level: "warn", message: "instance shard-b answered slowly (1.2 s)" });
    emit("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: now - T0 });
  } else {
    emit("run.finished", {
      outcome: "failed",
      exitCode: 3,
      committed: false,
      message: "commit refused by an interlock",
      durationMs: now - T0,
    });
  }
  const cut = opts.cutAfter === undefined ? events : events.slice(0, opts.cutAfter);
  return { events: cut, instances, progressSamples, lagSamples, verifierSamples, requests: reqId, steps };
}
