/**
 * The question a run's end asks before it offers `--resume` (`resumeRefused`,
 * src/run/earlier.ts): the resume's own check of the folder's other journals, from the step where
 * it goes on. Where the range from that step to the runbook's end sends no start, commit or
 * reverse, that check refuses nothing, so no journal is read at all (a failed run's end is not
 * delayed by a read of every journal of the folder): undefined, whatever the folder holds. From a
 * step before the commit, the same folder refuses. Every read is counted through `node:fs`.
 */
import type * as Fs from "node:fs";
import type * as FsPromises from "node:fs/promises";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openJournal } from "../../src/journal/index.js";
import { resumeRefused } from "../../src/run/earlier.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { eventFactory, inst, salesStarted, tempDir } from "../support/journal.js";

// every file a journal reader opens (journalLines), and every folder listed (folderJournals)
const reads = vi.hoisted(() => [] as string[]);
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  return {
    ...fs,
    createReadStream: (...args: Parameters<typeof fs.createReadStream>) => {
      reads.push(String(args[0]));
      return fs.createReadStream(...args);
    },
  };
});
vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  const readdir = ((...args: Parameters<typeof fs.readdir>) => {
    reads.push(`${String(args[0])}/`);
    return fs.readdir(...args);
  }) as typeof fs.readdir;
  return { ...fs, readdir, default: { ...fs, readdir } };
});

const TEXT = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
steps:
  - { id: start, start: { source: cluster0, destination: cluster1 } }
  - { id: wait, waitFor: { state: RUNNING } }
  - { id: commit, commit: {} }
  - { id: done, waitFor: { state: COMMITTED } }
  - { id: hold, pause: {} }
`;

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

/** A journal of `cutover`, begun `k` seconds after the others' clock, at the wait step; with a commit sent (no answer) when `commit`. */
function journal(cutover: string, k: number, commit: boolean): string {
  const ev1 = eventFactory();
  const ev: typeof ev1 = (type, payload) => {
    const e = ev1(type, payload);
    return { ...e, at: e.at + k * 1000 };
  };
  const w = openJournal({ dir, runbookName: "sales", runbookHash: "abc" });
  w.write(ev("run.started", { ...salesStarted(), cutover }));
  w.write(ev("step.started", { index: 1, id: "wait", kind: "waitFor", title: "wait" }));
  if (commit) {
    w.write(ev("step.started", { index: 3, id: "commit", kind: "commit", title: "commit" }));
    w.write(
      ev("request.sent", {
        id: 1,
        instance: inst(0),
        target: "service",
        method: "POST",
        path: "/api/v1/commit",
        body: {},
      }),
    );
  }
  w.close();
  return w.file;
}

/** Asked at each step after the runbook's last commit (and at a step it lacks): undefined, and nothing read. */
async function noReadAfterTheCommit(own: string): Promise<void> {
  const loaded = await parseRunbook(TEXT, "rb.yaml");
  for (const at of ["done", "hold", "nowhere"]) {
    reads.length = 0;
    expect(await resumeRefused(loaded, own, at), at).toBeUndefined();
    expect(reads, at).toEqual([]);
  }
}

describe("resumeRefused: the run's end's question before it offers --resume", () => {
  it("an earlier cutover's commit that may still hold refuses from a step before the commit; after the last commit no journal is read", async () => {
    const earlier = journal("A", 1, true);
    const own = journal("B", 2, false);
    const loaded = await parseRunbook(TEXT, "rb.yaml");
    reads.length = 0;
    const refused = await resumeRefused(loaded, own, "wait");
    expect(refused?.message).toMatch(
      new RegExp(
        `^cannot resume the last cutover at step "wait": the journal ${esc(earlier)} of an earlier cutover, A, shows commit \\(step 4 "commit"\\) may have reached i0`,
      ),
    );
    expect(refused?.hint).toMatch(/^See the fleet: syncbook status rb\.yaml\. If it shows the commit never reached/);
    // that answer read the folder and its journals
    expect(reads).toContain(`${dir}/`);
    expect(reads).toContain(earlier);
    // the commit itself is still in the range: refused too
    expect((await resumeRefused(loaded, own, "commit"))?.message).toMatch(
      /^cannot resume the last cutover at step "commit": the journal .* of an earlier cutover, A/,
    );
    await noReadAfterTheCommit(own);
  });

  it("a journal of the folder that cannot be read refuses from a step before the commit; after the last commit it is not even opened", async () => {
    const own = journal("B", 2, false);
    const unreadable = join(dir, "zz.jsonl");
    mkdirSync(unreadable);
    const loaded = await parseRunbook(TEXT, "rb.yaml");
    const refused = await resumeRefused(loaded, own, "wait");
    expect(refused?.message).toMatch(
      new RegExp(
        `^cannot resume the last cutover at step "wait": the journal ${esc(unreadable)}: it cannot be read \\(EISDIR.*, which this resume would send \\(commit\\), cannot be told$`,
      ),
    );
    expect(refused?.hint).toContain(`mv ${unreadable} ${unreadable}.set-aside`);
    await noReadAfterTheCommit(own);
  });
});
