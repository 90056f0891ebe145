/**
 * The trace's run and cutover spans say whether the cutover is committed at the run's end: a
 * reverse after the commit undoes it (the run span kept the `true` its commit set, and a rollback
 * read as committed in the trace). The spans of journal events, as `syncbook report --otlp` builds them.
 */
import { describe, expect, it } from "vitest";
import { journalToOtlp } from "../../src/trace/index.js";
import { eventFactory, salesStarted } from "../support/journal.js";
import type { RunEvent, RunEventMap } from "../../src/events.js";

type Attr = { key: string; value: Record<string, unknown> };
type Span = { name: string; attributes: Attr[] };

async function spansOf(events: readonly RunEvent[]): Promise<Map<string, Record<string, unknown>>> {
  const { json } = await journalToOtlp(events, {});
  const body = JSON.parse(json) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
  const spans = body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  return new Map(
    spans.map((s) => [s.name, Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]]))]),
  );
}

const STEPS = [
  { index: 0, id: "commit", kind: "commit", title: "commit" },
  { index: 1, id: "rollback", kind: "reverse", title: "reverse" },
];

function cutover(reversed: boolean): RunEvent[] {
  const ev = eventFactory();
  const at = (index: number, id: string, kind: string) => [
    ev("step.started", { index, id, kind, title: id }),
    ev("step.finished", { index, id, outcome: "ok", durationMs: 1 }),
  ];
  return [
    ev("run.started", { ...salesStarted(), steps: reversed ? STEPS : STEPS.slice(0, 1) }),
    ev("step.started", { index: 0, id: "commit", kind: "commit", title: "commit" }),
    ev("commit.sent", { index: 0, id: "commit", instances: ["i0"], skewMs: 0 }),
    ev("step.finished", { index: 0, id: "commit", outcome: "ok", durationMs: 1 }),
    ...(reversed ? at(1, "rollback", "reverse") : []),
    ev("run.finished", {
      outcome: "ok",
      exitCode: 0,
      durationMs: 10,
      committed: !reversed,
      ...(reversed ? { reversed: "rollback" } : {}),
    }),
  ];
}

describe("the trace says committed as the run's end does", () => {
  it("a commit then a reverse: the run and the cutover span say not committed, and name the reverse", async () => {
    const spans = await spansOf(cutover(true));
    expect(spans.get("run sales")).toMatchObject({ "syncbook.committed": false, "syncbook.reversed": "rollback" });
    expect(spans.get("cutover sales")).toMatchObject({ "syncbook.committed": false, "syncbook.reversed": "rollback" });
  });

  /** One run whose one step failed, ending with `finished` (the commit's or the reverse's doubt). */
  const failedStep = (
    id: string,
    kind: "commit" | "reverse",
    finished: Pick<RunEventMap["run.finished"], "committed" | "commitInDoubt" | "reverseInDoubt">,
  ) => {
    const ev = eventFactory();
    return spansOf([
      ev("run.started", { ...salesStarted(), steps: STEPS.slice(0, 1) }),
      ev("step.started", { index: 0, id, kind, title: id }),
      ev("step.finished", { index: 0, id, outcome: "failed", durationMs: 1 }),
      ev("run.finished", { outcome: "failed", exitCode: 1, durationMs: 10, ...finished }),
    ]);
  };

  it("a commit whose answers were lost: not committed, and in doubt", async () => {
    const spans = await failedStep("commit", "commit", { committed: false, commitInDoubt: true });
    expect(spans.get("run sales")).toMatchObject({ "syncbook.committed": false, "syncbook.commit_in_doubt": true });
    const clear = await spansOf(cutover(false));
    expect(clear.get("run sales")).not.toHaveProperty("syncbook.commit_in_doubt");
  });

  it("a reverse that may have reached the fleet after the commit: committed, and the reverse in doubt", async () => {
    const spans = await failedStep("rollback", "reverse", { committed: true, reverseInDoubt: "rollback" });
    expect(spans.get("run sales")).toMatchObject({
      "syncbook.committed": true,
      "syncbook.reverse_in_doubt": "rollback",
    });
    expect(spans.get("run sales")).not.toHaveProperty("syncbook.reversed");
    const clear = await spansOf(cutover(false));
    expect(clear.get("run sales")).not.toHaveProperty("syncbook.reverse_in_doubt");
  });

  it("a commit that holds: committed, no reverse named", async () => {
    const spans = await spansOf(cutover(false));
    expect(spans.get("run sales")).toMatchObject({ "syncbook.committed": true });
    expect(spans.get("run sales")).not.toHaveProperty("syncbook.reversed");
    expect(spans.get("cutover sales")).toMatchObject({ "syncbook.committed": true });
  });
});
