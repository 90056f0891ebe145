/**
 * A cutover-only runbook (no start: the sync started by hand) run with `--new-cutover` when its
 * last cutover's journal cannot be acted on (a line deleted from it). Its run is judged as a
 * `--from` its first step (`startlessFrom`), and that journal cannot tell whether a commit of it
 * is on its way: a range that sends a commit is refused, as a journal of the folder that cannot be
 * judged refuses one (`refuseSentByEarlierCutover`), with the way on: the fleet (`syncbook status
 * <runbook> --journal-dir <dir>`), the journal set aside (`mv <journal> <journal>.set-aside`), then
 * the same command, which is accepted. A range that sends no start, commit or reverse goes on,
 * the journal named. A previous review: the refusal named `syncbook status` alone, no way on, and
 * refused a range that sends nothing twice.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cli } from "../support/run.js";
import { cleanedUpAfterAll, cutoverOnlyAfterAnUndo, posts } from "../support/crash-harness.js";

const made = cleanedUpAfterAll();

describe("a cutover-only runbook, --new-cutover, its last journal edited", () => {
  it("a range with a commit is refused with the set-aside and the same command, which then runs; one without goes on", async () => {
    // the sync started by hand: the runbook finds it running; its first run stops writes, fails at
    // the confirm (no terminal), undoes the write stop: it acted
    const { sim, dir, run, journal } = await cutoverOnlyAfterAnUndo(made, "jd");
    const lines = readFileSync(journal, "utf8").trimEnd().split("\n");
    const gone = lines.findIndex((l) => /"type":"hook\.finished"/.test(l));
    expect(gone).toBeGreaterThan(0);
    writeFileSync(journal, `${lines.filter((_, i) => i !== gone).join("\n")}\n`);

    // no start, commit or reverse in its range: nothing can be sent twice, it goes on
    const wait = await run("--new-cutover", "--to", "ready");
    expect(wait.code, wait.all).toBe(0);
    expect(wait.stderr).toContain(`journal: ${journal}: its cutover `);
    expect(wait.stderr).toContain("did not finish, and its journal cannot be acted on");
    expect(wait.stderr).toContain("this run sends no start, commit or reverse, so none it may record is sent again");

    const refused = await run("--new-cutover", "--yes");
    expect(refused.code, refused.all).toBe(3);
    expect(refused.stderr).toContain(
      `cannot start a new cutover at its first step, "ready" (the runbook sends no start, whose interlock would check the fleet is IDLE): the journal ${journal}: its cutover `,
    );
    expect(refused.stderr).toContain(`gap at line ${gone + 1}`);
    expect(refused.stderr).toContain("which this run would send (commit), cannot be told; nothing was sent");
    const status = "syncbook status rb.yaml --journal-dir jd";
    const aside = `mv ${journal} ${journal}.set-aside`;
    expect(refused.stderr).toContain(`hint: See the fleet: ${status}. If that file is no journal of this runbook`);
    expect(refused.stderr).toContain(
      `set it aside (it stays that run's record), then run this command again: ${aside}.`,
    );
    expect(refused.stderr).not.toContain("from its start");
    expect(posts(sim, "commit")).toEqual([0]);

    // the way on, as printed: the fleet, the journal set aside, the same command: accepted
    const st = await cli(status.split(" ").slice(1), { cwd: dir });
    expect(st.code, st.all).toBe(0);
    execFileSync("sh", ["-c", aside], { cwd: dir });
    expect(existsSync(journal)).toBe(false);
    const again = await run("--new-cutover", "--yes");
    expect(again.code, again.all).toBe(0);
    expect(posts(sim, "commit")).toEqual([1]);
  }, 120_000);
});
