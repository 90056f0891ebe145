/**
 * A `when` is read once per run, from its vars (src/run/earlier.ts): `whenDecidedOtherwise`, the
 * steps a `--resume` or `--from` would decide otherwise than its cutover's runs did (refused: an
 * adversarial run's resume with `--var rollback=true` stopped writes for a rollback of a sync that
 * never reversed); `cutoverVars`, the values the journal tells, and `runTarget` (src/next-run.ts),
 * the runbook with the `--var` values a `when` reads, as the next command names it.
 */
import { describe, expect, it } from "vitest";
import { cutoverVars, whenDecidedOtherwise } from "../../src/run/earlier.js";
import { runTarget } from "../../src/next-run.js";
import { parseRunbook, type LoadedRunbook } from "../../src/runbook/index.js";
import type { JournalState, JournalStep } from "../../src/journal/index.js";

const TEXT = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
vars: { rollback: false, go: true, url: "http://x" }
steps:
  - { id: a, sleep: 1s }
  - { id: b, when: "\${vars.rollback}", sleep: 1s }
  - { id: c, when: "\${ vars.rollback }", sleep: 1s }
  - { id: d, when: "\${vars.go}", sleep: 1s }
  - { id: e, when: "\${env.GO_E}", sleep: 1s }
  - { id: f, sleep: 1s }
`;

async function load(vars: Record<string, boolean> = {}): Promise<LoadedRunbook> {
  return parseRunbook(TEXT, "rb.yaml", { vars, env: { GO_E: "true" } });
}

/** The variable each step's `when` names whole, as its run journals it (`run.started.steps`: none for an env's). */
const WHENS = [undefined, "rollback", "rollback", "go", undefined, undefined];

/**
 * A journal whose steps ended as given: "ok", "failed", "skipped", "when" (skipped by its `when`),
 * "cut" (started, never ended), "-" (not reached). `earlier`: of an earlier runner, which journaled
 * no `when`, of the text `hash`.
 */
function journal(outcomes: string[], earlier?: { hash: string }): JournalState {
  const steps: JournalStep[] = outcomes.map((o, index) => ({
    index,
    id: "abcdef"[index]!,
    kind: "sleep",
    started: o === "ok" || o === "failed" || o === "cut",
    ...(o === "-" || o === "cut" ? {} : { finished: (o === "when" ? "skipped" : o) as JournalStep["finished"] }),
    ...(o === "when" ? { skippedByWhen: true as const } : {}),
    ...(WHENS[index] !== undefined && !earlier ? { when: WHENS[index] } : {}),
  }));
  return { steps, ...(earlier ? { hash: earlier.hash } : {}) } as unknown as JournalState;
}

describe("whenDecidedOtherwise", () => {
  it("a step skipped by its `when` that would run now, and one that ran whose `when` is false now; only before where the run goes on", async () => {
    const rb = (await load({ rollback: true })).runbook!.steps;
    // b, c skipped by `when: false` then; now rollback=true runs them
    const s = journal(["ok", "when", "when", "ok", "ok", "failed"]);
    expect(whenDecidedOtherwise(s, rb, 6)).toEqual([
      'step 2 "b" was skipped by its `when`, and would run now',
      'step 3 "c" was skipped by its `when`, and would run now',
    ]);
    // before step 3: only b
    expect(whenDecidedOtherwise(s, rb, 2)).toEqual(['step 2 "b" was skipped by its `when`, and would run now']);
    expect(whenDecidedOtherwise(s, rb, 1)).toEqual([]);
    // the other way: they ran, and rollback=false skips them now
    const ran = journal(["ok", "ok", "failed", "ok", "ok", "-"]);
    expect(whenDecidedOtherwise(ran, (await load()).runbook!.steps, 6)).toEqual([
      'step 2 "b" ran, and its `when` is false now',
      'step 3 "c" ran, and its `when` is false now',
    ]);
  });

  it("the same decisions, a step not reached, and skips for other reasons (done, before --from): nothing", async () => {
    const rb = (await load()).runbook!.steps;
    expect(whenDecidedOtherwise(journal(["ok", "when", "when", "ok", "ok", "-"]), rb, 6)).toEqual([]);
    expect(
      whenDecidedOtherwise(journal(["skipped", "skipped", "skipped", "skipped", "skipped", "skipped"]), rb, 6),
    ).toEqual([]);
    expect(
      whenDecidedOtherwise(journal(["-", "-", "-", "-", "-", "-"]), (await load({ rollback: true })).runbook!.steps, 6),
    ).toEqual([]);
    // not reached, with its `when` false now: it never ran
    expect(whenDecidedOtherwise(journal(["ok", "-", "-", "-", "-", "-"]), rb, 6)).toEqual([]);
    // a journal step past the runbook's (another text, refused before this is asked): not judged here
    expect(whenDecidedOtherwise(journal(["ok", "when", "when", "ok", "ok", "ok", "ok"]), rb, 7)).toEqual([]);
  });
});

// an adversarial run: a runner killed with its reverse on its way (`--var rollback=true`); the
// offered `--resume` (no --var) adopted the reverse, skipped the rest of the rollback by its
// `when`, and ended "run ok": the rollback abandoned, the cutover closed
describe("whenDecidedOtherwise: a step that started and never ended", () => {
  it("ran on its `when`: false now, refused, where the run goes on too; past it, not judged", async () => {
    const rb = (await load()).runbook!.steps;
    const s = journal(["ok", "ok", "cut", "-", "-", "-"]);
    const said = 'step 3 "c" started (its run ended before it did), and its `when` is false now';
    // adopted (the run goes on after it), or run again (the run goes on at it)
    expect(whenDecidedOtherwise(s, rb, 3)).toEqual(['step 2 "b" ran, and its `when` is false now', said]);
    expect(whenDecidedOtherwise(journal(["ok", "-", "cut", "-", "-", "-"]), rb, 2)).toEqual([said]);
    expect(whenDecidedOtherwise(journal(["ok", "-", "cut", "-", "-", "-"]), rb, 1)).toEqual([]);
    // true now: the same decision
    const same = (await load({ rollback: true })).runbook!.steps;
    expect(whenDecidedOtherwise(s, same, 3)).toEqual([]);
    // a step without a `when`, cut: nothing to decide
    expect(whenDecidedOtherwise(journal(["cut", "-", "-", "-", "-", "-"]), rb, 0)).toEqual([]);
  });

  it("tells its variable's value: true", async () => {
    expect(cutoverVars(journal(["ok", "-", "cut", "-", "-", "-"]), await load())).toEqual(["rollback=true"]);
  });
});

describe("cutoverVars", () => {
  it("what the journal tells of each variable a `when` names: skipped by it, false; ran, true; never an env's", async () => {
    const loaded = await load();
    expect(cutoverVars(journal(["ok", "when", "when", "ok", "ok", "ok"]), loaded)).toEqual([
      "rollback=false",
      "go=true",
    ]);
    expect(cutoverVars(journal(["ok", "ok", "failed", "when", "-", "-"]), loaded)).toEqual([
      "rollback=true",
      "go=false",
    ]);
    // not reached, or skipped for another reason: not told
    expect(cutoverVars(journal(["ok", "-", "skipped", "-", "when", "-"]), loaded)).toEqual([]);
    // skipped for another reason next to one skipped by its `when`: what the one tells stands
    expect(cutoverVars(journal(["ok", "when", "skipped", "-", "-", "-"]), loaded)).toEqual(["rollback=false"]);
    // told both ways (a journal of another text): left out
    expect(cutoverVars(journal(["ok", "when", "ok", "ok", "-", "-"]), loaded)).toEqual(["go=true"]);
  });

  it("a journal of an earlier runner, without its `when`s: read from the runbook's steps only where the runbook is its text", async () => {
    const loaded = await load();
    const outcomes = ["ok", "when", "when", "ok", "ok", "ok"];
    expect(cutoverVars(journal(outcomes, { hash: loaded.hash }), loaded)).toEqual(["rollback=false", "go=true"]);
    // another text: its step at that index may be another; nothing told
    expect(cutoverVars(journal(outcomes, { hash: "sha256:other" }), loaded)).toEqual([]);
  });
});

describe("runTarget", () => {
  it("the runbook with the --var values of its variables, quoted for a shell; the others left out", async () => {
    const loaded = await load();
    expect(runTarget(loaded, [])).toBe("rb.yaml");
    expect(runTarget(loaded, ["rollback=true", "url=http://y", "go=it's"])).toBe(
      "rb.yaml --var rollback=true --var url=http://y --var 'go=it'\\''s'",
    );
    // a variable only --var sets (no default) that a step uses is one too
    const used = { ...loaded, raw: { steps: [{ hook: { with: { u: "${vars.only}" } } }] } };
    expect(runTarget(used, ["only=1", "no=2"])).toBe("rb.yaml --var only=1");
    // a value that is no k=v: no variable; an environment variable a `when` reads is no --var
    expect(runTarget(loaded, ["rollback"])).toBe("rb.yaml");
    expect(runTarget(loaded, ["GO_E=true"])).toBe("rb.yaml");
    // a runbook that does not parse, or a step that is no object: no variable
    const broken = { ...loaded, raw: undefined, vars: {} } as LoadedRunbook;
    expect(runTarget(broken, ["rollback=true"])).toBe("rb.yaml");
    expect(cutoverVars(journal(["when"]), { ...loaded, raw: { steps: [null] } })).toEqual([]);
    expect(cutoverVars(journal(["when"]), { ...loaded, raw: { steps: ["x"] } })).toEqual([]);
  });
});
