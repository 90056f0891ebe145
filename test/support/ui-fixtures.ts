/** Synthetic event sequences and fake streams for the UI tests. */
import { Writable } from "node:stream";
import type { Progress } from "../../src/api/types.js";
import type { InstanceRef, RunEvent, RunEventMap, RunEventType } from "../../src/events.js";

export const T0 = new Date(2025, 0, 15, 3, 0, 0).getTime();

export const INSTANCES: InstanceRef[] = [
  { url: "http://127.0.0.1:27182", name: "shard-a", index: 0 },
  { url: "http://127.0.0.1:27183", name: "shard-b", index: 1 },
  { url: "http://127.0.0.1:27184", index: 2 },
];

export const STEPS: RunEventMap["run.started"]["steps"] = [
  { index: 0, id: "start", kind: "start", title: "Start the sync" },
  { index: 1, id: "wait-commit", kind: "waitFor", title: "Wait for canCommit and lag below 5s" },
  { index: 2, id: "verify", kind: "verify", title: "Verify" },
  { index: 3, id: "stop-writes", kind: "stopWrites", title: "Stop application writes" },
  { index: 4, id: "confirm", kind: "confirm", title: "Point of no return" },
  { index: 5, id: "commit", kind: "commit", title: "Commit" },
  { index: 6, id: "notify", kind: "notify", title: "Notify chat" },
];

/** Builds events with increasing seq and a clock the test moves. */
export class EventBuilder {
  seq = 0;
  at = T0;
  reqId = 0;
  readonly events: RunEvent[] = [];

  advance(ms: number): this {
    this.at += ms;
    return this;
  }

  emit<K extends RunEventType>(type: K, payload: RunEventMap[K]): RunEvent {
    const e = { type, seq: ++this.seq, at: this.at, ...payload } as unknown as RunEvent;
    this.events.push(e);
    return e;
  }

  progress(instance: InstanceRef, p: Record<string, unknown>): RunEvent {
    return this.emit("progress.sampled", { instance, progress: p as Progress });
  }

  /** A broadcast command: one request and one answer per instance. */
  command(path: string, ok: (i: InstanceRef) => boolean = () => true): void {
    const ids = INSTANCES.map((instance) => {
      const id = ++this.reqId;
      this.emit("request.sent", { id, instance, target: "service", method: "POST", path, body: {} });
      return { id, instance };
    });
    this.advance(40);
    for (const { id, instance } of ids) {
      const good = ok(instance);
      this.emit("response.received", {
        id,
        instance,
        target: "service",
        status: good ? 200 : 500,
        ok: good,
        durationMs: 40,
        ...(good ? {} : { error: "InternalError: boom" }),
      });
    }
  }
}

const running = (
  copied: number,
  total: number,
  lag: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  state: "RUNNING",
  canCommit: false,
  canWrite: false,
  info: "collection copy",
  lagTimeSeconds: lag,
  collectionCopy: { estimatedTotalBytes: total, estimatedCopiedBytes: copied },
  ...extra,
});

const GiB = 1024 ** 3;

/** A whole successful cutover, with a long wait and a copy, as the runner would emit it. */
export function wholeRun(): EventBuilder {
  const b = new EventBuilder();
  b.emit("run.started", {
    runbook: "sales-rs-to-sharded",
    file: "runbooks/x.yaml",
    hash: "abc",
    instances: INSTANCES,
    verifier: "http://127.0.0.1:27020",
    mode: "run",
    steps: STEPS,
  });
  b.emit("decision", {
    kind: "interlock",
    ok: true,
    check: "start-idle",
    reason: "every instance is IDLE",
    index: 0,
    id: "start",
  });
  b.emit("step.started", STEPS[0]!);
  b.command("/api/v1/start");
  b.emit("step.finished", { index: 0, id: "start", outcome: "ok", durationMs: 120 });
  b.emit("step.started", STEPS[1]!);
  // 60 polls every 2 s: the copy goes 0 → 100% of 5 GiB, lag drops, canCommit comes last
  const total = 5 * GiB;
  for (let i = 0; i <= 60; i++) {
    b.advance(2000);
    const frac = Math.min(1, i / 50);
    for (const inst of INSTANCES) {
      const copied = Math.floor((frac * total) / 3);
      const p =
        i === 0
          ? running(0, 1, 30)
          : i > 52
            ? { ...running(total / 3, total, 3), info: "change event application", canCommit: i > 58 }
            : running(copied, total, 30 - Math.floor(i / 3));
      b.progress(inst, p);
    }
    const failing: RunEventMap["wait.status"]["failing"] =
      i > 58
        ? []
        : INSTANCES.map((inst): RunEventMap["wait.status"]["failing"][number] => ({
            instance: inst.name ?? "127.0.0.1:27184",
            condition: "canCommit",
            value: false,
            sinceMs: i * 2000,
          })).concat(
            i < 40
              ? [{ instance: "shard-a", condition: "lagBelow 5", value: 30 - Math.floor(i / 3), sinceMs: i * 2000 }]
              : [],
          );
    b.emit("wait.status", { index: 1, id: "wait-commit", met: failing.length === 0, failing });
  }
  b.emit("step.finished", { index: 1, id: "wait-commit", outcome: "ok", durationMs: 122_000 });
  b.emit("step.started", STEPS[2]!);
  const counters = (done: number, failed: number) => ({
    totalTasks: 10,
    addedTasks: 0,
    processingTasks: 10 - done - failed,
    failedTasks: failed,
    completedTasks: done,
    metadataMismatchTasks: 0,
    recheckTasks: 0,
  });
  b.emit("verifier.sampled", {
    progress: { phase: "check", error: null, verificationStatus: counters(2, 0) },
  });
  b.advance(2000);
  b.emit("verifier.sampled", {
    progress: { phase: "check", error: null, verificationStatus: counters(6, 0) },
  });
  b.advance(2000);
  b.emit("verifier.sampled", {
    progress: { phase: "idle", error: null, verificationStatus: counters(10, 0) },
  });
  b.emit("step.finished", { index: 2, id: "verify", outcome: "ok", durationMs: 4000 });
  b.emit("step.started", STEPS[3]!);
  b.emit("hook.started", { index: 3, id: "stop-writes", use: "shell", undo: false });
  b.advance(800);
  b.emit("hook.finished", { index: 3, id: "stop-writes", use: "shell", undo: false, ok: true, durationMs: 800 });
  b.emit("step.finished", { index: 3, id: "stop-writes", outcome: "ok", durationMs: 800 });
  b.emit("step.started", STEPS[4]!);
  b.emit("log", { level: "info", message: "confirmed by --yes", index: 4 });
  b.emit("step.finished", { index: 4, id: "confirm", outcome: "ok", durationMs: 1 });
  b.emit("step.started", STEPS[5]!);
  b.emit("decision", {
    kind: "interlock",
    ok: true,
    check: "commit",
    reason: "RUNNING, canCommit on 3/3, stopWrites ran",
    index: 5,
    id: "commit",
  });
  b.command("/api/v1/commit");
  b.emit("commit.sent", { index: 5, id: "commit", instances: INSTANCES.map((i) => i.url), skewMs: 12 });
  b.emit("step.finished", { index: 5, id: "commit", outcome: "ok", durationMs: 300 });
  b.emit("step.skipped", { index: 6, id: "notify", reason: "when: env.CHAT_WEBHOOK is empty" });
  b.advance(100);
  b.emit("run.finished", { outcome: "ok", exitCode: 0, committed: true, durationMs: b.at - T0 });
  return b;
}

/** Collects what is written; `isTTY` and a size so log-update and listr2 draw as on a terminal. */
export class FakeStream extends Writable {
  chunks: string[] = [];
  isTTY: boolean;
  columns = 120;
  rows = 40;
  constructor(tty = false) {
    super();
    this.isTTY = tty;
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (error?: Error | null) => void): void {
    this.chunks.push(String(chunk));
    cb();
  }
  get text(): string {
    return this.chunks.join("");
  }
  /** Text without ANSI escapes (colors, cursor moves). */
  get plain(): string {
    // eslint-disable-next-line no-control-regex -- stripping terminal escapes is the point
    return this.text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "");
  }
}
