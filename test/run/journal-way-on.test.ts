/**
 * `wayOnFromRefused` (src/run/earlier.ts): a journal the continuing run must not act on, refused
 * with the commands that help next where the journal's reader could not name them (it does not
 * know the runbook): the runbook's file with its `--journal-dir`, the `--var` values, the journal
 * set aside. One its own run marked untrusted: a new run `--from` the write stop; one that cannot
 * be trusted (`DistrustedJournal`): the fleet, then the journal set aside and a new cutover (from
 * its start, whose interlock checks the fleet is IDLE, when the runbook has one); any other refusal
 * as it is. `test/crash/distrusted-way-on.e2e.test.ts` runs the commands.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DistrustedJournal, openJournal, type JournalState, type RunbookJournal } from "../../src/journal/index.js";
import { fromJournal, openEarlierJournal, wayOnFromRefused } from "../../src/run/earlier.js";
import { parseRunbook, type LoadedRunbook } from "../../src/runbook/index.js";
import { UserError } from "../../src/errors.js";
import { eventFactory, salesStarted, STEPS, tempDir } from "../support/journal.js";

const head = `runbook: 1
name: s
vars: { region: eu }
instances:
  - { url: "http://127.0.0.1:9", name: a }
steps:
`;
const START = "  - { id: start, start: { source: c0, destination: c1 } }\n";
const STOP =
  "  - { id: stop-writes, stopWrites: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n";

async function loadedOf(steps: string, vars: Record<string, string> = {}): Promise<LoadedRunbook> {
  const loaded = await parseRunbook(head + steps, "my rb.yaml", { env: {}, vars });
  loaded.journalDir = "j d";
  return loaded;
}

const JOURNAL = "/j d/s/2026.jsonl";
const distrusted = new DistrustedJournal(
  `${JOURNAL}:7: gap at line 7`,
  JOURNAL,
  "what it says cannot be trusted: do not resume from it",
);
const found = (refused: unknown, untrusted = false): RunbookJournal => ({
  file: JOURNAL,
  skipped: [],
  none: false,
  refused,
  ...(untrusted ? { untrusted: true as const } : {}),
});
const hintOf = (e: unknown): string => (e as UserError).hint ?? "";

describe("wayOnFromRefused: the commands that help next from a journal that must not be acted on", () => {
  it("cannot be trusted, the runbook has a start: the fleet, then the journal set aside and a new cutover from its start, with the --var given", async () => {
    const loaded = await loadedOf(START + STOP + COMMIT, { region: "us" });
    const e = wayOnFromRefused(found(distrusted), loaded);
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).message).toBe(distrusted.message);
    expect((e as UserError).exitCode).toBe(2);
    expect(hintOf(e)).toBe(
      "what it says cannot be trusted: do not resume from it. See the fleet and check the application's writes: syncbook status 'my rb.yaml' --journal-dir 'j d'; if the fleet is IDLE (the sync never started, or was set back by hand since), set the journal aside (it stays that run's record) and start a new cutover, whose start checks the fleet is IDLE: mv '/j d/s/2026.jsonl' '/j d/s/2026.jsonl.set-aside', then syncbook run 'my rb.yaml' --journal-dir 'j d' --var region=us --new-cutover; else send what is missing by hand.",
    );
  });

  it("cannot be trusted, the runbook sends no start: set aside only once the fleet shows nothing of it on the sync that runs now", async () => {
    const e = wayOnFromRefused(found(distrusted), await loadedOf(STOP + COMMIT));
    expect(hintOf(e)).toBe(
      "what it says cannot be trusted: do not resume from it. See the fleet and check the application's writes: syncbook status 'my rb.yaml' --journal-dir 'j d'; if the fleet shows nothing this journal may record is on the sync that runs now (set back by hand since), set the journal aside (it stays that run's record) and start a new cutover: mv '/j d/s/2026.jsonl' '/j d/s/2026.jsonl.set-aside', then syncbook run 'my rb.yaml' --journal-dir 'j d' --new-cutover; else send what is missing by hand.",
    );
  });

  // a review: the new cutover named the runbook with the values a --resume is checked against, and a
  // secret --var left out is read at the runbook's default by a new cutover, which checks none
  it("cannot be trusted, the runbook sends no start, a --var given with a secret: the new cutover keeps it, masked, and says so", async () => {
    const e = wayOnFromRefused(found(distrusted), await loadedOf(STOP + COMMIT, { region: "http://op:Sup3rSecret@h" }));
    expect(hintOf(e)).toContain(
      "then syncbook run 'my rb.yaml' --journal-dir 'j d' --var 'region=http://***@h' --new-cutover (a --var shown with *** holds a secret: set each as that run did); else send",
    );
    expect(hintOf(e)).not.toContain("Sup3rSecret");
  });

  it("marked untrusted by its own run: a new run --from the write stop, with the runbook named", async () => {
    const untrusted = new DistrustedJournal(`cannot trust ${JOURNAL}: its own run marked it untrusted`, JOURNAL, "x");
    const e = wayOnFromRefused(found(untrusted, true), await loadedOf(START + STOP + COMMIT));
    expect((e as UserError).message).toBe(untrusted.message);
    expect(hintOf(e)).toBe(
      "do not resume from it: free disk space, check the application's writes and the fleet (syncbook status 'my rb.yaml' --journal-dir 'j d'), then run again with: syncbook run 'my rb.yaml' --journal-dir 'j d' --from stop-writes (it stops writes again before commit)",
    );
    // with the --var values given (an outside review: without them the stop went to another
    // environment's switch, and the commit went through while the real source wrote)
    const given = wayOnFromRefused(found(untrusted, true), await loadedOf(START + STOP + COMMIT, { region: "us" }));
    expect(hintOf(given)).toContain("syncbook run 'my rb.yaml' --journal-dir 'j d' --var region=us --from stop-writes");
  });

  it("marked untrusted by its own run, the runbook without a write stop of its own: the status and the --from of the first hook its run undid, named", async () => {
    const HOOK =
      "  - { id: pause-jobs, hook: { use: sim-writes, undo: { use: sim-writes, with: { enabled: true } } } }\n";
    const NOUNDO = "  - { id: tell, hook: { use: sim-writes } }\n";
    const untrusted = new DistrustedJournal(`cannot trust ${JOURNAL}: its own run marked it untrusted`, JOURNAL, "x");
    const loaded = await loadedOf(START + HOOK + NOUNDO + HOOK.replace("pause-jobs", "drain-queue") + COMMIT);
    // the hooks its journal shows ran and not undone: the unwind undid them all, unrecorded
    const hook = (stepIndex: number, more: Record<string, unknown> = {}) => ({ stepIndex, ok: true, ...more });
    const withState = (hooksRan: unknown[]): RunbookJournal => ({
      ...found(untrusted, true),
      state: { hooksRan, steps: [] } as unknown as JournalState,
    });
    const check =
      "do not resume from it: free disk space, check the application's writes and the fleet (syncbook status 'my rb.yaml' --journal-dir 'j d')";
    expect(hintOf(wayOnFromRefused(withState([hook(1), hook(2), hook(3)]), loaded))).toBe(
      `${check}; its run undid 2 steps it could not record (pause-jobs, drain-queue): run again from the first: syncbook run 'my rb.yaml' --journal-dir 'j d' --from pause-jobs`,
    );
    // a hook undone (or whose undo began) before: not this run's to do again; one that failed, none
    // in the order of the runbook, whatever the journal's
    expect(hintOf(wayOnFromRefused(withState([hook(3), hook(1)]), loaded))).toMatch(
      /undid 2 steps it could not record \(pause-jobs, drain-queue\): run again from the first: .* --from pause-jobs$/,
    );
    expect(hintOf(wayOnFromRefused(withState([hook(1, { undone: true }), hook(3), { stepIndex: 1 }]), loaded))).toBe(
      `${check}; its run undid 1 step it could not record (drain-queue): run again from the first: syncbook run 'my rb.yaml' --journal-dir 'j d' --from drain-queue`,
    );
    expect(hintOf(wayOnFromRefused(withState([hook(1, { undoStarted: true }), hook(3)]), loaded))).toMatch(
      /undid 1 step it could not record \(drain-queue\)/,
    );
    // none it can name (no state, no hook with an undo, no runbook that loads): the --from to fill in
    const none = `${check}, then run again with --from the step to go on with: syncbook run 'my rb.yaml' --journal-dir 'j d' --from <step>`;
    expect(hintOf(wayOnFromRefused(found(untrusted, true), loaded))).toBe(none);
    expect(hintOf(wayOnFromRefused(withState([hook(0)]), await loadedOf(START + COMMIT)))).toBe(none);
    const broken = await loadedOf("  - { id: x, nosuchkind: {} }\n");
    expect(broken.runbook).toBeUndefined();
    expect(hintOf(wayOnFromRefused(withState([hook(0)]), broken))).toBe(none);
    // with the --var values the run was given (an outside review: without them the --from offered
    // ran at the runbook's defaults, another switch)
    const SWITCH = '  - { id: tell, hook: { use: sim-writes, with: { url: "${vars.switch}" } } }\n';
    const given = await loadedOf(START + SWITCH + COMMIT, { switch: "http://127.0.0.1:9" });
    expect(hintOf(wayOnFromRefused(found(untrusted, true), given))).toBe(
      `${check}, then run again with --from the step to go on with: syncbook run 'my rb.yaml' --journal-dir 'j d' --var switch=http://127.0.0.1:9 --from <step>`,
    );
  });

  it("any other refusal, and none, as they are", async () => {
    const loaded = await loadedOf(START + STOP + COMMIT);
    const other = new UserError("two unfinished runs do not order", { hint: "name one with --resume <file>" });
    expect(wayOnFromRefused(found(other), loaded)).toBe(other);
    expect(wayOnFromRefused(found(undefined), loaded)).toBeUndefined();
    const text = "not an error";
    expect(wayOnFromRefused(found(text), loaded)).toBe(text);
  });
});

// the one read a continuing run makes (`--resume`, `--abort`, `--from`): a line of its journal
// edited, it is refused with the commands when the runbook is known, with what it means when not
describe("openEarlierJournal: a journal edited since it was written", () => {
  it("is refused with the commands that help next", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const ev = eventFactory();
      const j = openJournal({ dir, runbookName: "s", runbookHash: "abc" });
      for (const e of [ev("run.started", salesStarted()), ev("step.started", STEPS[0]!), ev("step.started", STEPS[1]!)])
        j.write(e);
      j.close();
      const good = await openEarlierJournal(dir, { say: () => undefined, loaded: await loadedOf(START) });
      expect(good.file).toBe(j.file);
      writeFileSync(j.file, readFileSync(j.file, "utf8").replace('"start"', '"other"'));
      const refused = async (loaded?: LoadedRunbook): Promise<UserError> =>
        openEarlierJournal(dir, { say: () => undefined, ...(loaded ? { loaded } : {}) }).then(
          () => expect.fail("read"),
          (e: unknown) => e as UserError,
        );
      const withRunbook = await refused(await loadedOf(START));
      expect(withRunbook.message).toMatch(/: the journal's chain breaks at line \d+/);
      expect(withRunbook.hint).toMatch(
        / See the fleet and check the application's writes: syncbook status 'my rb\.yaml' --journal-dir 'j d';/,
      );
      expect((await refused()).hint).toBe(
        "the journal was changed after syncbook wrote it, so what it says about the run cannot be trusted: do not resume from it",
      );
    } finally {
      cleanup();
    }
  });
});

// a second review: after a journal failure the one journal left is marked untrusted, and a --from
// the write stop without the cutover's --var went through unrefused (the refusal read only a
// journal it could act on): the stop went to another switch, and the commit followed
describe("fromJournal: a journal its own run marked untrusted, --from with other --var values", () => {
  it("is refused, naming the command with the cutover's values", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const ev = eventFactory();
      const j = openJournal({ dir, runbookName: "s", runbookHash: "abc" });
      j.write(ev("run.started", { ...salesStarted(), vars: { region: "us" }, given: ["region"] }));
      j.write(ev("step.started", STEPS[0]!));
      expect(j.distrust()).toBeUndefined();
      j.close();
      const loaded = await loadedOf(
        START + '  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${vars.region}" } } }\n' + COMMIT,
      );
      const said: string[] = [];
      const refused = await fromJournal(loaded, dir, (s) => void said.push(s), false, true, "stop-writes").then(
        () => expect.fail(`not refused: ${said.join("; ")}`),
        (e: unknown) => e as UserError,
      );
      expect(refused.message).toContain(
        "from stop-writes: this run has region=eu (the run it continues had region=us)",
      );
      expect(refused.hint).toContain(
        "syncbook run 'my rb.yaml' --journal-dir 'j d' --var region=us --from stop-writes",
      );
      // the cutover's values: not refused for them (the journal counts nothing, as before)
      const same = await loadedOf(
        START + '  - { id: stop-writes, stopWrites: { use: sim-writes, with: { url: "${vars.region}" } } }\n' + COMMIT,
        { region: "us" },
      );
      await expect(fromJournal(same, dir, () => undefined, false, true, "stop-writes")).resolves.toBeUndefined();
    } finally {
      cleanup();
    }
  });
});
