/**
 * The runbook as every command syncbook offers names it (src/next-run.ts `runbookArgs`, the one
 * home): its file, and the `--journal-dir` its command was given, as typed. Without it, an offered
 * `--resume` or `--from` pasted after a run with `--journal-dir` read the default folder, found no
 * journal, and the checks that never send a command twice found nothing
 * (test/run/journal-dir-offers.e2e.test.ts runs the offered commands).
 */
import { describe, expect, it } from "vitest";
import {
  JOURNAL_DIR_UNSHOWN,
  nextLines,
  offerAfterFile,
  runbookArg,
  runbookArgs,
  runTarget,
  type NextOffer,
} from "../../src/next-run.js";
import { parseRunbook } from "../../src/runbook/index.js";

const TEXT = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
vars: { rollback: false }
steps:
  - { id: a, sleep: 1s }
  - { id: b, when: "\${vars.rollback}", sleep: 1s }
`;

const offer: NextOffer = {
  runs: [
    { args: "--resume", does: "goes on" },
    { args: "--abort", does: "calls it off" },
  ],
  notes: ["a note"],
};

describe("runbookArgs", () => {
  it("the file alone where the default folder is used: every offered command as before", () => {
    expect(runbookArgs({ file: "runbooks/cutover.yaml" })).toEqual(["runbooks/cutover.yaml"]);
    expect(runbookArgs({ file: "rb.yaml", journalDir: undefined })).toEqual(["rb.yaml"]);
  });

  it("the file, then --journal-dir as typed: relative kept relative, nothing resolved", () => {
    for (const dir of ["j", "./j", "../journals", "/srv/journals", "~/j", ""])
      expect(runbookArgs({ file: "rb.yaml", journalDir: dir })).toEqual(["rb.yaml", "--journal-dir", dir]);
  });
});

describe("runbookArg", () => {
  it("quoted for a shell, then the arguments after it", () => {
    expect(runbookArg({ file: "rb.yaml" })).toBe("rb.yaml");
    expect(runbookArg({ file: "rb.yaml", journalDir: "j" }, ["--from", "commit"])).toBe(
      "rb.yaml --journal-dir j --from commit",
    );
    expect(runbookArg({ file: "my runbooks/rb.yaml", journalDir: "/srv/$journals; rm" })).toBe(
      "'my runbooks/rb.yaml' --journal-dir '/srv/$journals; rm'",
    );
    expect(runbookArg({ file: "rb.yaml", journalDir: "" })).toBe("rb.yaml --journal-dir ''");
  });

  it("redacted by the runbook's redactor: a secret never reaches the command offered", () => {
    const redact = (s: string) => s.replaceAll("hunter2-secret", "***");
    expect(runbookArg({ file: "rb.yaml", journalDir: "/srv/j", redact }, ["--var", "pw=hunter2-secret"])).toBe(
      "rb.yaml --journal-dir /srv/j --var pw=***",
    );
  });

  it("a --journal-dir whose path holds a secret is named, never shown masked: a masked path pasted is another folder", () => {
    // an outside review: `/srv/prod-journals` with `${env.STAGE}` = prod was offered as
    // `/srv/***-journals`, which pastes cleanly and reads no journal
    const redact = (s: string) => s.replaceAll("prod", "***");
    expect(runbookArg({ file: "rb.yaml", journalDir: "/srv/prod-journals", redact }, ["--resume"])).toBe(
      `rb.yaml --journal-dir ${JOURNAL_DIR_UNSHOWN} --resume`,
    );
    // as the journal recorded it (redacted already): the watch page and the report
    expect(runbookArg({ file: "rb.yaml", journalDir: "/srv/***-journals" })).toBe(
      `rb.yaml --journal-dir ${JOURNAL_DIR_UNSHOWN}`,
    );
    expect(offerAfterFile({ file: "rb.yaml", journalDir: "/srv/prod-journals", redact }, offer).runs[0]!.args).toBe(
      `--journal-dir ${JOURNAL_DIR_UNSHOWN} --resume`,
    );
  });
});

describe("runTarget", () => {
  it("the runbook's argument, then the --var values of its variables", async () => {
    const loaded = await parseRunbook(TEXT, "rb.yaml", { env: {} });
    expect(runTarget(loaded, ["rollback=true", "other=1"])).toBe("rb.yaml --var rollback=true");
    loaded.journalDir = "../journals";
    expect(runTarget(loaded, [])).toBe("rb.yaml --journal-dir ../journals");
    expect(runTarget(loaded, ["rollback=true"])).toBe("rb.yaml --journal-dir ../journals --var rollback=true");
    // the run's end: each way on begins with it
    expect(nextLines(runTarget(loaded, ["rollback=true"]), { runs: [offer.runs[0]!] })).toEqual([
      "next:",
      "  syncbook run rb.yaml --journal-dir ../journals --var rollback=true --resume",
      "      goes on",
    ]);
  });
});

describe("offerAfterFile (status --json: `file`, then each run's `args`)", () => {
  it("the same offer where there is no --journal-dir and no --var", () => {
    expect(offerAfterFile({ file: "rb.yaml" }, offer)).toBe(offer);
  });

  it("each run's args begin with --journal-dir and end with the --var values: `syncbook run <file> <args>` is the whole command", () => {
    const o = offerAfterFile({ file: "rb.yaml", journalDir: "my j" }, offer, " --var rollback=true");
    expect(o.runs.map((r) => r.args)).toEqual([
      "--journal-dir 'my j' --resume --var rollback=true",
      "--journal-dir 'my j' --abort --var rollback=true",
    ]);
    expect(o.runs.map((r) => r.does)).toEqual(["goes on", "calls it off"]);
    expect(o.notes).toEqual(["a note"]);
    expect(nextLines("rb.yaml", o)).toEqual([
      "next, one of:",
      "  syncbook run rb.yaml --journal-dir 'my j' --resume --var rollback=true",
      "      goes on",
      "  syncbook run rb.yaml --journal-dir 'my j' --abort --var rollback=true",
      "      calls it off",
      "  (a note)",
    ]);
    // the --var values alone, as before
    expect(offerAfterFile({ file: "rb.yaml" }, offer, " --var x=1").runs[0]!.args).toBe("--resume --var x=1");
    // each run's own (status: a way on with --allow-changed-runbook names more values)
    const own = (r: { args: string }) => (r.args === "--abort" ? " --var x=1" : "");
    expect(offerAfterFile({ file: "rb.yaml" }, offer, own).runs.map((r) => r.args)).toEqual([
      "--resume",
      "--abort --var x=1",
    ]);
    expect(offerAfterFile({ file: "rb.yaml" }, offer, () => "")).toBe(offer);
    // the offer handed in is not changed
    expect(offer.runs[0]!.args).toBe("--resume");
  });
});
