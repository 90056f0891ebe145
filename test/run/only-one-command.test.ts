/**
 * `--only` completes one command the other instances already have (src/run/plan.ts
 * `instanceTargets`). An adversarial run: `--from commit --only b --var rollback=true` completed
 * the commit, went on into the rollback and sent `reverse` to `b` alone, whose fleet-state check
 * took `a`, still COMMITTED, for one waiting in the reverse's round: the fleet split on the
 * reverse. A range with a second command step the run would take is refused before anything runs.
 */
import { describe, expect, it } from "vitest";
import { instanceTargets, onlyAsOffered } from "../../src/run/plan.js";
import { parseRunbook } from "../../src/runbook/index.js";
import type { Runbook } from "../../src/runbook/types.js";

const TEXT = `runbook: 1
name: rb
instances: [{ url: "http://127.0.0.1:1", name: a }, { url: "http://127.0.0.1:2", name: b }]
vars: { rollback: false }
steps:
  - { id: start, start: { source: cluster0, destination: cluster1, reversible: true } }
  - { id: stop, stopWrites: { use: shell, with: { command: [echo] } } }
  - { id: commit, commit: {} }
  - { id: committed, waitFor: { state: COMMITTED } }
  - { id: rollback, when: "\${vars.rollback}", reverse: {} }
  - { id: reversed, when: "\${vars.rollback}", waitFor: { state: RUNNING } }
`;

async function runbook(rollback: boolean): Promise<Runbook> {
  const loaded = await parseRunbook(TEXT, "rb.yaml", { vars: { rollback } });
  if (!loaded.runbook) throw new Error(JSON.stringify(loaded.diagnostics));
  return loaded.runbook;
}

const rbTrue = await runbook(true);

describe("--only and the command steps of its range", () => {
  it("one command step: the named instances; a second one its `when` skips does not count", async () => {
    expect(instanceTargets(await runbook(false), ["b"], "commit")).toEqual([1]);
    expect(instanceTargets(await runbook(true), ["b"], "commit", "committed")).toEqual([1]);
    expect(instanceTargets(await runbook(true), ["a"], "rollback")).toEqual([0]);
    // a step without a command before the first: none counts
    expect(instanceTargets(await runbook(true), ["b"], "stop", "committed")).toEqual([1]);
    // the --to step itself counts: to the reverse, two
    expect(() => instanceTargets(rbTrue, ["b"], "commit", "rollback")).toThrow(
      /commit \(step 3 commit\), reverse \(step 5 rollback\)/,
    );
    // an unknown --from or --to takes nothing here (the range's own check refuses it, naming it)
    expect(instanceTargets(rbTrue, ["b"], "nope")).toEqual([1]);
    expect(instanceTargets(rbTrue, ["b"], "start", "nope")).toEqual([1]);
  });

  it("a second command step the run would take is refused, naming both, with the --to that stops before it", async () => {
    const rb = await runbook(true);
    expect(() => instanceTargets(rb, ["b"], "commit")).toThrow(
      "--only sends one command to part of the fleet: from commit to the runbook's end this run would send commit (step 3 commit), reverse (step 5 rollback), and the reverse would reach the named instances only, while the others never had it",
    );
    try {
      instanceTargets(rb, ["b"], "start", "rollback");
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toContain(
        "from start to rollback this run would send start (step 1 start), commit (step 3 commit), reverse (step 5 rollback)",
      );
      expect((err as { hint?: string }).hint).toBe(
        "Complete the start alone, stopping before step 3: add --to stop; then run the rest to the whole fleet: --from commit (without --only).",
      );
      expect((err as { exitCode?: number }).exitCode).toBe(2);
    }
  });
});

// an instance's URL typed with its password: every output redacts it, and the way on offered
// `--only http://***@host`, no password and, to zsh, a glob that matches nothing
describe("onlyAsOffered", () => {
  it("the --only as typed, or, where it holds a secret, the instances it named by name or place", async () => {
    const loaded = await parseRunbook(
      TEXT.replace('{ url: "http://127.0.0.1:1", name: a }', '"http://127.0.0.1:1", "http://127.0.0.1:3"'),
      "rb.yaml",
      {},
    );
    const rb = loaded.runbook!;
    expect(onlyAsOffered(rb, "b", [2], loaded.redact)).toBe("b");
    expect(onlyAsOffered(rb, "http://127.0.0.1:2", [2], loaded.redact)).toBe("http://127.0.0.1:2");
    const typed = "http://ops:pa55word@127.0.0.1:2,http://ops:pa55word@127.0.0.1:1";
    const both = instanceTargets(rb, [typed], "commit");
    expect(both).toEqual([2, 0]);
    const offered = onlyAsOffered(rb, typed, both, loaded.redact);
    expect(offered).toBe("b,#1");
    expect(offered).not.toContain("pa55word");
    expect(instanceTargets(rb, [offered], "commit")).toEqual(both);
    expect(onlyAsOffered(rb, "http://ops:pa55word@127.0.0.1:2", [2], loaded.redact)).toBe("b");
  });
});

// an outside review: a name `--only` cannot read back (a comma, spaces at its ends, another
// instance's name, one spelled like a place) made the way on name another instance, or none; lint's
// `instance-name` warns of them, and `--only` itself never guesses
describe("names --only cannot read back", () => {
  const odd = async () =>
    (
      await parseRunbook(
        TEXT.replace(
          '[{ url: "http://127.0.0.1:1", name: a }, { url: "http://127.0.0.1:2", name: b }]',
          '[{ url: "http://127.0.0.1:1", name: "a,b" }, { url: "http://127.0.0.1:2", name: "#3" }, { url: "http://127.0.0.1:3", name: " c" }, { url: "http://127.0.0.1:4", name: d }, { url: "http://127.0.0.1:5", name: d }, { url: "http://127.0.0.1:6", name: e }]',
        ),
        "rb.yaml",
        { vars: { rollback: false } },
      )
    ).runbook!;

  it("a place is that instance alone; a name two instances share is refused, naming both", async () => {
    const rb = await odd();
    expect(instanceTargets(rb, ["#3"], "commit")).toEqual([2]);
    expect(instanceTargets(rb, ["#2,e"], "commit")).toEqual([1, 5]);
    // a name with spaces at its ends is trimmed away: no instance answers to what is left
    expect(() => instanceTargets(rb, [" c"], "commit")).toThrow(/--only c: the runbook lists no such instance/);
    try {
      instanceTargets(rb, ["d"], "commit");
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toBe(
        '--only d: 2 instances answer to it (#4 "d", #5 "d"): which one is meant is not known',
      );
      expect((err as { hint?: string }).hint).toBe(
        "Name each by its place: #1, #2… (the order of the runbook's `instances`).",
      );
      expect((err as { exitCode?: number }).exitCode).toBe(2);
    }
  });

  it("a place is `#` and digits, the whole part; an empty part is none; without --from, or naming none, refused with the instances", async () => {
    const many = (
      await parseRunbook(
        TEXT.replace(
          '[{ url: "http://127.0.0.1:1", name: a }, { url: "http://127.0.0.1:2", name: b }]',
          `[${[...Array(9).keys()].map((k) => `"http://127.0.0.1:${k + 1}"`).join(", ")}, { url: "http://127.0.0.1:10", name: "v#1" }, { url: "http://127.0.0.1:11", name: "#2a" }, { url: "http://127.0.0.1:12", name: "http://127.0.0.1:1" }]`,
        ),
        "rb.yaml",
        { vars: { rollback: false } },
      )
    ).runbook!;
    expect(instanceTargets(many, ["#10"], "commit")).toEqual([9]);
    expect(instanceTargets(many, ["v#1"], "commit")).toEqual([9]);
    expect(instanceTargets(many, ["#2a"], "commit")).toEqual([10]);
    expect(instanceTargets(many, ["#2,"], "commit")).toEqual([1]);
    // a name that is another instance's URL: both answer to it
    expect(() => instanceTargets(many, ["http://127.0.0.1:1"], "commit")).toThrow(
      '--only http://127.0.0.1:1: 2 instances answer to it (#1, #12 "http://127.0.0.1:1"): which one is meant is not known',
    );
    const refusal = (names: string[], from?: string): { message: string; hint?: string } => {
      try {
        instanceTargets(many, names, from);
      } catch (err) {
        return err as { message: string; hint?: string };
      }
      throw new Error("not refused");
    };
    expect(refusal(["#3"])).toMatchObject({
      message: "--only sends a command to part of the fleet, so it goes with --from (the command's step)",
      hint: "For example: syncbook run x.yaml --from commit --only shard-c (the other instances must already have the command).",
    });
    expect(refusal(["v#2"], "commit")).toMatchObject({
      message: "--only v#2: the runbook lists no such instance (did you mean `#2`?)",
      hint: "Instances: #1, #2, #3, #4, #5, #6, #7, #8, #9, v#1, #2a, http://127.0.0.1:1 (by name, URL or place #1, #2…)",
    });
    expect(refusal(["zzzzzzzz"], "commit").message).toBe("--only zzzzzzzz: the runbook lists no such instance");
  });

  it("the way on names each by name where it reads back as that instance alone, else by place", async () => {
    const rb = await odd();
    const secret = "http://ops:pw@127.0.0.1:9";
    const redact = (t: string): string => t.replace("ops:pw@", "***@");
    const offered = onlyAsOffered(rb, secret, [0, 1, 2, 3, 4, 5], redact);
    expect(offered).toBe("#1,#2,#3,#4,#5,e");
    expect(instanceTargets(rb, [offered.replace(",e", "")], "commit")).toEqual([0, 1, 2, 3, 4]);
  });
});
