/**
 * The watch page's journals (`JournalFeed`, src/watch/journal-feed.ts), followed as they grow: a
 * cutover whose older journal a `--resume` appended to after a newer journal's run is folded in
 * the order its runs started, and lines appended after that (a redelivery of the first run's event)
 * are moved as the report moves them: the live page and a fresh read (the report's) say the same.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunEvent } from "../../src/events.js";
import { traitsOf } from "../../src/steps/index.js";
import { JournalFeed } from "../../src/watch/journal-feed.js";
import { tempDir } from "../support/journal.js";

const CUTOVER = "20261129T000000Z-aaaaaaaa";
const inst = { url: "http://127.0.0.1:27182", name: "sync0", index: 0 };
const started = (mode: "run" | "resume", at: number, seq: number) => ({
  type: "run.started",
  seq,
  at,
  runbook: "r",
  file: "r.yaml",
  hash: "h",
  cutover: CUTOVER,
  by: { user: "ana", host: "bastion", pid: 7 },
  instances: [inst],
  canWriteFrom: 0,
  mode,
  steps: [{ index: 0, id: "hold", kind: "hook", title: "hold" }],
});
const lines = (events: object[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join("");

describe("the watch page's journals of a cutover in several runs", () => {
  const { dir, cleanup } = tempDir();
  afterAll(cleanup);
  const a = join(dir, "20261129T000000Z-1.jsonl");
  const b = join(dir, "20261129T000500Z-2.jsonl");

  it("folds a resume appended to the older journal after the newer one's run, and what it appends later, as a fresh read does", async () => {
    writeFileSync(
      a,
      lines([
        started("run", 0, 1),
        {
          type: "request.sent",
          seq: 2,
          at: 1,
          id: 1,
          instance: inst,
          target: "service",
          method: "POST",
          path: "/api/v1/start",
        },
        { type: "run.finished", seq: 3, at: 2, outcome: "failed", exitCode: 1, committed: false, durationMs: 2 },
        { type: "notification.sent", seq: 4, at: 3, entry: 0, use: "x", event: 3, about: "run.finished" },
      ]),
    );
    writeFileSync(
      b,
      lines([
        started("run", 5000, 1),
        { type: "run.finished", seq: 2, at: 5001, outcome: "failed", exitCode: 1, committed: false, durationMs: 1 },
      ]),
    );
    const live = new JournalFeed(dir, traitsOf);
    await live.refresh();
    appendFileSync(a, lines([{ type: "journal.resumed", seq: 5, at: 9000 }, started("resume", 9100, 6)]));
    await live.refresh();
    // the resume redelivers run 1's end (in doubt in its journal), then says it was delivered
    const about = { entry: 0, use: "x", event: 3, about: "run.finished", earlier: true };
    appendFileSync(
      a,
      lines([
        { type: "notification.sent", seq: 7, at: 9200, ...about },
        { type: "notification.settled", seq: 8, at: 9300, ...about, delivered: true, attempts: 1, durationMs: 5 },
      ] satisfies Partial<RunEvent>[]),
    );
    await live.refresh();
    const fresh = new JournalFeed(dir, traitsOf);
    await fresh.refresh();
    const view = live.fold.view();
    expect(view.runs.map((r) => [r.mode, r.journal?.endsWith("-1.jsonl") ? "a" : "b"])).toEqual([
      ["run", "a"],
      ["run", "b"],
      ["resume", "a"],
    ]);
    expect(view.notifications).toEqual({ delivered: 1, notDelivered: [] });
    expect(view).toEqual(fresh.fold.view());
  });
});
