/**
 * The version matrix: every example runbook, adapted to a service version, lints clean and
 * rehearses to COMMITTED against a simulator emulating that version (the rehearsal passes the
 * runbook's serviceVersion), at 1.8, 1.9, 1.17, 1.20, 1.21 and 1.22.
 *
 * Adapting is what an operator does when the deployed service is older or newer: set
 * `serviceVersion`, and drop what that version does not have, as the runner's version table
 * (src/api/versions.ts) says: a field newer than it, a field it removed (enableUserWriteBlocking
 * from 1.20), a value newer than it; and before 1.20 add what `reversible` needs there (write
 * blocking on source and destination). The examples declare the current release (1.22); the
 * versions before 1.20 are end of life, rehearsed here on purpose (their lint warning aside). The simulator's own table decides whether the service takes
 * the result; the two tables are not shared, so a wrong row in either fails here.
 *
 * Rehearsals run on a simulated clock; the runbooks of one version run at once.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import { BEHAVIOUR, atLeast, startVersionProblems } from "../../src/api/versions.js";
import { rehearsalEvents } from "../support/rehearsal.js";
import { lintYaml, notEol } from "../support/lint.js";

const dir = fileURLToPath(new URL("../../runbooks/", import.meta.url));
const RUNBOOKS = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
const VERSIONS = ["1.8.0", "1.9.0", "1.17.0", "1.20.0", "1.21.0", "1.22.0"];

/**
 * The runbook at `version`: serviceVersion set, what that version lacks dropped, and before 1.20
 * the write blocking `reversible` needs added ("before 1.20 `reversible` needed it"): with what
 * was dropped and added.
 */
export function adapt(text: string, version: string): { text: string; dropped: string[]; added: string[] } {
  const doc = parseDocument(text);
  doc.setIn(["serviceVersion"], version);
  const dropped: string[] = [];
  const added: string[] = [];
  const steps = (doc.toJS() as { steps: Record<string, unknown>[] }).steps;
  steps.forEach((step, i) => {
    const start = step.start as Record<string, unknown> | undefined;
    if (!start) return;
    for (const p of startVersionProblems(start, version)) {
      doc.deleteIn(["steps", i, "start", ...p.path]);
      dropped.push(`${p.field}${p.value !== undefined ? `: ${String(p.value)}` : ""}`);
    }
    if (
      start.reversible === true &&
      start.enableUserWriteBlocking === undefined &&
      !atLeast(version, BEHAVIOUR.writeBlockingFromConfig.since)
    ) {
      doc.setIn(["steps", i, "start", "enableUserWriteBlocking"], true);
      added.push("enableUserWriteBlocking: true");
    }
  });
  return { text: String(doc), dropped, added };
}

describe("adapting a runbook to a version", () => {
  it("drops what the version lacks, and only that", () => {
    const text = readFileSync(join(dir, "reversible.yaml"), "utf8");
    expect(adapt(text, "1.19.0")).toMatchObject({ dropped: [], added: ["enableUserWriteBlocking: true"] });
    expect(adapt(text, "1.20.0")).toMatchObject({ dropped: [], added: [] });
    expect(adapt(adapt(text, "1.19.0").text, "1.20.0").dropped).toEqual(["enableUserWriteBlocking"]);
    const sharded = readFileSync(join(dir, "sharded-to-sharded.yaml"), "utf8");
    expect(adapt(sharded, "1.8.0").dropped).toEqual(["verification"]);
    expect(adapt(sharded, "1.9.0").dropped).toEqual([]);
  });
});

describe.each(VERSIONS)("service %s", (version) => {
  it.concurrent.each(RUNBOOKS)(`%s lints clean and rehearses to COMMITTED at ${version}`, async (name) => {
    const file = join(dir, name);
    const { text } = adapt(readFileSync(file, "utf8"), version);
    const lint = await lintYaml(text);
    expect(lint.loader).toEqual([]);
    expect(
      lint.rules.filter((d) => d.severity !== "info" && notEol(d)).map((d) => `${d.line}: ${d.rule}: ${d.message}`),
    ).toEqual([]);
    // a version before 1.20 is end of life: said once (facts, "Supported versions")
    expect(lint.rules.filter((d) => !notEol(d))).toHaveLength(atLeast(version, "1.20") ? 0 : 1);

    const r = await rehearsalEvents({ file, text, seed: 7 });
    if (r.reason !== undefined) throw new Error(r.reason);
    const failed = r.events.filter((e) => e.type === "step.finished" && e.outcome !== "ok");
    expect(failed, r.description).toEqual([]);
    expect(r.result.outcome, r.description).toBe("ok");
    expect(r.verdict.committed, r.description).toBe(r.verdict.instances);
    expect(r.verdict.safe, r.description).toBe(true);
    expect(r.verdict.writesLost).toBe(0);
    // the client of that version and the simulator of that version agree on the progress fields
    // (each from its own table): no answer was missing a documented field, none had one mistyped
    const answerWarnings = r.events.filter(
      (e) => e.type === "log" && e.level === "warn" && /: progress answer: /.test(e.message),
    );
    expect(answerWarnings, r.description).toEqual([]);
    // the rehearsal ran against that version: its start body had only what the version knows
    const started = r.events.find((e) => e.type === "request.sent" && e.path === "/api/v1/start") as
      { body?: Record<string, unknown> } | undefined;
    expect(started?.body, r.description).toBeDefined();
    expect(startVersionProblems(started!.body!, version)).toEqual([]);
  });
});

// facts: "`reverse` (only in COMMITTED, only if `start` had `reversible: true`): COMMITTED → REVERSING
// → RUNNING in the opposite direction (`directionMapping` swaps Source and Destination)"
describe.each(["1.8.0", "1.22.0"])("the reversible example with rollback at %s", (version) => {
  it("reverses: COMMITTED → REVERSING → RUNNING the other way, waited out by its own steps", async () => {
    const file = join(dir, "reversible.yaml");
    const { text } = adapt(readFileSync(file, "utf8"), version);
    const r = await rehearsalEvents({ file, text, seed: 7, vars: { rollback: true } });
    if (r.reason !== undefined) throw new Error(r.reason);
    expect(r.result.outcome, r.description).toBe("ok");
    const states = r.events.flatMap((e) => (e.type === "progress.sampled" ? [e.progress.state] : []));
    expect(states).toContain("REVERSING");
    expect(states.at(-1)).toBe("RUNNING");
    expect(r.verdict.states).toEqual(["RUNNING"]);
  });
});
