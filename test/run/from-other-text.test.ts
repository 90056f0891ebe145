/**
 * `fromJournal` (src/run/earlier.ts) with a journal of its cutover written for another text of the
 * runbook: it counts nothing from it but its commit, which is the fleet's whatever the runbook says
 * now. Counted nothing, an edited runbook's `--from` after a run that committed ended "not
 * committed" on a COMMITTED fleet (`test/report/verification-across-runs.e2e.test.ts` drives it end
 * to end); this pins the rule in process, for mutation testing.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openJournal, witnessFile } from "../../src/journal/index.js";
import { fromJournal } from "../../src/run/earlier.js";
import type { ServiceRefusal } from "../../src/events.js";
import { parseRunbook, type LoadedRunbook } from "../../src/runbook/index.js";
import { eventFactory, salesStarted, STEPS, tempDir } from "../support/journal.js";

const RUNBOOK = `runbook: 1
name: sales
instances:
  - { url: "http://127.0.0.1:9", name: a }
steps:
  - { id: start, start: { source: c0, destination: c1 } }
  - { id: wait, waitFor: { canCommit: true } }
  - { id: stop, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }
  - { id: commit, commit: {} }
  - { id: done, waitFor: { state: COMMITTED } }
`;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A journal of the cutover, its text `abc` (not the runbook's), whose run began counting `carried`. */
function journalWith(
  carried: { commitSent: boolean; commitAccepted: boolean; refusals?: ServiceRefusal[] } | undefined,
  hash = "abc",
): string {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const ev = eventFactory();
  const j = openJournal({ dir, runbookName: "sales", runbookHash: hash });
  const started = {
    ...salesStarted(),
    hash,
    ...(carried ? { carried: { from: "/j/first.jsonl", writesStopped: true, ...carried } } : {}),
  };
  for (const e of [ev("run.started", started), ev("step.started", STEPS[4]!)]) j.write(e);
  j.close();
  return dir;
}

async function loaded(): Promise<LoadedRunbook> {
  const l = await parseRunbook(RUNBOOK, "rb.yaml", { env: {} });
  expect(l.runbook).toBeDefined();
  expect(l.hash).not.toBe("abc");
  return l;
}

describe("fromJournal: a journal of its cutover written for another text of the runbook", () => {
  it("an instance accepted its commit: the commit alone is counted, said so; not the write stop", async () => {
    const dir = journalWith({ commitSent: true, commitAccepted: true });
    const said: string[] = [];
    const plan = await fromJournal(await loaded(), dir, (s) => said.push(s), false, true, "done");
    expect(plan?.memory).toEqual({ writesStopped: false, commitSent: true, commitAccepted: true });
    expect(plan?.carriedFrom).toMatch(/\.jsonl$/);
    expect(plan?.done.size).toBe(0);
    expect(plan?.verifierFrom).toBeUndefined();
    expect(said.join("\n")).toMatch(
      /was written for another text of the runbook: this run counts nothing from it but its commit, which an instance accepted \(a commit is the fleet's whatever the runbook says now: it is not sent again, and no write stop is undone under it\); not its write stop, nor its verification/,
    );
  });

  it("its commit sent, no instance said it accepted it: counted as sent, not accepted", async () => {
    const said: string[] = [];
    const plan = await fromJournal(
      await loaded(),
      journalWith({ commitSent: true, commitAccepted: false }),
      (s) => said.push(s),
      false,
      true,
      "done",
    );
    expect(plan?.memory).toEqual({ writesStopped: false, commitSent: true, commitAccepted: false });
    expect(said.join("\n")).toMatch(/but its commit, which may have reached an instance \(/);
  });

  it("no commit sent, or not this run's cutover: nothing counted", async () => {
    for (const [carried, same] of [
      [undefined, true],
      [{ commitSent: true, commitAccepted: true }, false],
    ] as const) {
      const said: string[] = [];
      const plan = await fromJournal(await loaded(), journalWith(carried), (s) => said.push(s), false, same, "done");
      expect(plan).toBeUndefined();
      expect(said.join("\n")).toMatch(
        /was written for another text of the runbook: this run counts nothing from it \(commit needs a stopWrites in this run\)/,
      );
    }
  });

  it("a journal of this very text is not one: it counts as --from always did (its write stop too), and says so", async () => {
    const l = await loaded();
    const said: string[] = [];
    const plan = await fromJournal(
      l,
      journalWith({ commitSent: true, commitAccepted: true }, l.hash),
      (s) => said.push(s),
      false,
      true,
      "done",
    );
    expect(plan?.memory).toMatchObject({ commitSent: true, commitAccepted: true });
    expect(said.join("\n")).not.toMatch(/another text/);
  });

  it("--allow-changed-runbook where it does nothing (the cutover's last run did not finish ok): said, and only the commit counts", async () => {
    const said: string[] = [];
    const plan = await fromJournal(
      await loaded(),
      journalWith({ commitSent: true, commitAccepted: true }),
      (s) => said.push(s),
      false,
      true,
      "done",
      true,
    );
    expect(plan?.memory).toEqual({ writesStopped: false, commitSent: true, commitAccepted: true });
    expect(said.join("\n")).toContain(
      "was written for another text of the runbook (--allow-changed-runbook counts such a journal only for a --from step after the runbook's last commit, of a cutover whose last run finished ok and committed: not so here): this run counts nothing from it but its commit",
    );
    const none: string[] = [];
    await fromJournal(await loaded(), journalWith(undefined), (s) => none.push(s), false, true, "done", true);
    expect(none.join("\n")).toContain("not so here): this run counts nothing from it (commit needs");
    const without: string[] = [];
    await fromJournal(await loaded(), journalWith(undefined), (s) => without.push(s), false, true, "done");
    expect(without.join("\n")).not.toContain("--allow-changed-runbook");
  });

  it("a journal it must not act on (its witness lost): the commit what is left of it shows counts, said so; none, nothing", async () => {
    const l = await loaded();
    const cut = (carried: { commitSent: boolean; commitAccepted: boolean } | undefined): string => {
      const dir = journalWith(carried, l.hash);
      const file = readdirSync(dir).find((f) => f.endsWith(".jsonl"))!;
      rmSync(witnessFile(join(dir, file)));
      return dir;
    };
    const said: string[] = [];
    const plan = await fromJournal(
      l,
      cut({ commitSent: true, commitAccepted: true }),
      (s) => said.push(s),
      false,
      true,
      "done",
    );
    expect(plan?.memory).toEqual({ writesStopped: false, commitSent: true, commitAccepted: true });
    expect(said.join("\n")).toMatch(
      /the latest journal cannot be acted on \(cannot trust .*its witness .* is missing.*\): this run counts nothing from it but the commit it shows, which an instance accepted \(a commit is never undone: it is not sent again, and no write stop is undone under it\); what its lost lines held is not known/,
    );
    const sent: string[] = [];
    const only = await fromJournal(
      l,
      cut({ commitSent: true, commitAccepted: false }),
      (s) => sent.push(s),
      false,
      true,
      "done",
    );
    expect(only?.memory).toEqual({ writesStopped: false, commitSent: true, commitAccepted: false });
    expect(sent.join("\n")).toMatch(/but the commit it shows, which may have reached an instance/);
    for (const [carried, same] of [
      [undefined, true],
      [{ commitSent: true, commitAccepted: true }, false],
    ] as const) {
      const none: string[] = [];
      expect(await fromJournal(l, cut(carried), (s) => none.push(s), false, same, "done")).toBeUndefined();
      expect(none.join("\n")).toMatch(/the latest journal cannot be read \(.*\): this run counts nothing from it$/m);
    }
  });

  // a review of the refusals a --from run counts: a split start completed by `--from start --only`,
  // then the runbook edited (or the journal failed, its way on `--from stop-writes`), and the
  // commit went out without --force=no-errors: the refusals are the fleet's whatever the text
  describe("the refusals the commit's no-errors interlock counts", () => {
    const refusals: ServiceRefusal[] = [{ instance: "a", op: "start", error: "http://127.0.0.1:9: start refused: x" }];

    it("another text, no commit sent: its refusals alone are counted and carried, said so; not for another cutover", async () => {
      const said: string[] = [];
      const carried = { commitSent: false, commitAccepted: false, refusals };
      const plan = await fromJournal(await loaded(), journalWith(carried), (s) => said.push(s), false, true, "done");
      expect(plan?.memory).toEqual({
        writesStopped: false,
        commitSent: false,
        commitAccepted: false,
        serviceErrors: refusals,
      });
      expect(plan?.carriedFrom).toMatch(/\.jsonl$/);
      expect(plan?.carriedCommands).toBeUndefined();
      expect(said.join("\n")).toMatch(
        /was written for another text of the runbook: this run counts nothing from it but the refusal it shows \(start by a\), which the commit's no-errors interlock counts \(a command refused and taken later too\) \(commit needs a stopWrites in this run\)/,
      );
      const other: string[] = [];
      expect(await fromJournal(await loaded(), journalWith(carried), (s) => other.push(s), false, false, "done")).toBe(
        undefined,
      );
      expect(other.join("\n")).toMatch(/this run counts nothing from it \(commit needs a stopWrites in this run\)/);
    });

    it("another text, its commit sent: the commit and the refusals", async () => {
      const said: string[] = [];
      const carried = { commitSent: true, commitAccepted: true, refusals };
      const plan = await fromJournal(await loaded(), journalWith(carried), (s) => said.push(s), false, true, "done");
      expect(plan?.memory).toEqual({
        writesStopped: false,
        commitSent: true,
        commitAccepted: true,
        serviceErrors: refusals,
      });
      expect(said.join("\n")).toContain(
        "no write stop is undone under it); and the refusal it shows (start by a), which the commit's no-errors interlock counts (a command refused and taken later too); not its write stop",
      );
    });

    it("a journal it must not act on (its witness lost): the refusals what is left of it shows count, with its commit or alone", async () => {
      const l = await loaded();
      const cut = (carried: { commitSent: boolean; commitAccepted: boolean; refusals?: ServiceRefusal[] }): string => {
        const dir = journalWith(carried, l.hash);
        const file = readdirSync(dir).find((f) => f.endsWith(".jsonl"))!;
        rmSync(witnessFile(join(dir, file)));
        return dir;
      };
      const said: string[] = [];
      const alone = await fromJournal(
        l,
        cut({ commitSent: false, commitAccepted: false, refusals }),
        (s) => said.push(s),
        false,
        true,
        "done",
      );
      expect(alone?.memory).toEqual({
        writesStopped: false,
        commitSent: false,
        commitAccepted: false,
        serviceErrors: refusals,
      });
      expect(said.join("\n")).toMatch(
        /the latest journal cannot be acted on \(cannot trust .*\): this run counts nothing from it but the refusal it shows \(start by a\), which the commit's no-errors interlock counts \(a command refused and taken later too\); what its lost lines held is not known/,
      );
      const both = await fromJournal(
        l,
        cut({ commitSent: true, commitAccepted: false, refusals: [...refusals, { ...refusals[0]!, op: "commit" }] }),
        () => undefined,
        false,
        true,
        "done",
      );
      expect(both?.memory).toMatchObject({
        commitSent: true,
        serviceErrors: [refusals[0], { ...refusals[0], op: "commit" }],
      });
      expect(
        await fromJournal(
          l,
          cut({ commitSent: false, commitAccepted: false, refusals }),
          () => undefined,
          false,
          false,
          "done",
        ),
      ).toBeUndefined();
    });
  });
});
