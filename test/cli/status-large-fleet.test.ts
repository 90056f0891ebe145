/**
 * `syncbook status` of a large fleet, read out on a bridge call: the fleet first in a few lines
 * (the live view's words, src/model/fleet-summary.ts), the instances after, only what holds one
 * back under it, and the last command's answers a line per answer. A small fleet's status is as
 * it was: a line per instance, each with its readiness, each answer on its own line.
 */
import { describe, expect, it } from "vitest";
import { formatStatus } from "../../src/cli/status.js";
import type { InstanceStatus, Status } from "../../src/run/status.js";
import type { Readiness } from "../../src/model/readiness.js";
import { readinessSummary } from "../../src/model/readiness.js";

function fleet(n: number, each: (i: number) => Partial<InstanceStatus> & { readiness?: Readiness }): Status {
  const instances: InstanceStatus[] = [];
  const readiness: Readiness[] = [];
  for (let i = 0; i < n; i++) {
    const { readiness: r, ...rest } = each(i);
    instances.push({
      place: i + 1,
      name: `shard-${i}`,
      url: `http://127.0.0.1:${27182 + i}`,
      reachable: true,
      state: "RUNNING",
      canCommit: true,
      lagSeconds: 1,
      ...rest,
    });
    readiness.push(r ?? { instance: `shard-${i}`, ready: true, reasons: [] });
  }
  return {
    format: 3,
    at: "2026-11-30T03:00:00.000Z",
    runbook: "big",
    file: "big.yaml",
    instances,
    identityProblems: [],
    readiness,
    journal: {
      folder: ".syncbook/big",
      resumeWith: ".syncbook/big/run.jsonl",
      passedOver: [],
      warnings: [],
      lastCommand: {
        op: "commit",
        step: 5,
        answers: Object.fromEntries(instances.map((x) => [x.name, x.place === 4 ? "error" : "ok"])),
        said: Object.fromEntries(
          instances.map((x) => [x.name, x.place === 4 ? "refused or never sent (HTTP 400)" : "accepted"]),
        ),
      },
    },
  };
}

const slow: Readiness = { instance: "shard-7", ready: false, reasons: ["lag 42s (lagBelow 5)"], eta: "about 2m" };

describe("status of a large fleet", () => {
  const st = fleet(64, (i) =>
    i === 7
      ? { lagSeconds: 42, canCommit: false, readiness: slow }
      : i === 9
        ? {
            reachable: false,
            state: undefined,
            lagSeconds: undefined,
            error: "connect ECONNREFUSED",
            readiness: {
              instance: "shard-9",
              ready: false,
              reasons: ["not answering: connect ECONNREFUSED"],
              eta: "unknown",
            },
          }
        : i === 3
          ? { lagSeconds: 12 }
          : i === 20
            ? {
                state: "PAUSED",
                canCommit: false,
                readiness: {
                  instance: "shard-20",
                  ready: false,
                  reasons: ["state PAUSED (a commit needs RUNNING)"],
                  eta: "unknown",
                },
              }
            : i === 21
              ? { lagSeconds: 42, canCommit: false, readiness: { ...slow, instance: "shard-21" } }
              : {},
  );
  const lines = formatStatus(st);

  it("says the fleet first: its states, the highest lags, how many are ready and the first that is not", () => {
    expect(lines.slice(1, 4)).toEqual([
      "fleet: 64 instances: RUNNING×62, not answering×1, PAUSED×1",
      "  highest lag: shard-7 42s · shard-21 42s · shard-3 12s",
      "  ready to commit: 60 of 64 instances; shard-7: not ready (ETA about 2m): lag 42s (lagBelow 5)",
    ]);
  });

  it("keeps a line per instance, and under it only what holds it back", () => {
    expect(lines.filter((l) => /^ {2}#\d+ /.test(l))).toHaveLength(64);
    // shard-7's and shard-21's words are the summary's: said once, with who else; shard-20's are its own
    expect(lines[4]).toBe("    the same for 1 more: shard-21");
    const under = lines.filter((l) => l.startsWith("      "));
    expect(under).toEqual(["      not ready (ETA unknown): state PAUSED (a commit needs RUNNING)"]);
    expect(lines[lines.indexOf(under[0]!) - 1]).toMatch(/^ {2}#21 shard-20 /);
    expect(lines.some((l) => l.trim() === "ready")).toBe(false);
  });

  it("says the last command's answers a line per answer, with who gave it", () => {
    const at = lines.indexOf("  last command: commit (step 5):");
    expect(lines.slice(at + 1, at + 3)).toEqual([
      "    accepted: 63 of 64: shard-0, shard-1, shard-2, shard-4, shard-5, shard-6, shard-7, shard-8 and 55 more",
      "    refused or never sent (HTTP 400): 1 of 64: shard-3",
    ]);
  });

  it("a fleet every instance of which accepted says so in one line", () => {
    const st2 = fleet(64, () => ({}));
    st2.journal.lastCommand = {
      op: "commit",
      step: 5,
      answers: Object.fromEntries(st2.instances.map((x) => [x.name, "ok"])),
      said: Object.fromEntries(st2.instances.map((x) => [x.name, "accepted"])),
    };
    const out = formatStatus(st2);
    const at = out.indexOf("  last command: commit (step 5):");
    expect(out.slice(at + 1).filter((l) => l.startsWith("    "))).toEqual(["    accepted: every instance (64)"]);
  });

  it("after the commit, readiness is past the question, never 'ready'", () => {
    const done = fleet(64, (i) => ({
      state: i < 60 ? "COMMITTED" : "COMMITTING",
      readiness: { instance: `shard-${i}`, ready: true, reasons: [], past: i < 60 ? "COMMITTED" : "COMMITTING" },
    }));
    expect(formatStatus(done)[3]).toBe("  ready to commit: past it (COMMITTED×60, COMMITTING×4)");
    expect(
      readinessSummary([
        { instance: "a", ready: true, reasons: [], past: "COMMITTING" },
        { instance: "b", ready: true, reasons: [] },
        { instance: "c", ready: false, reasons: ["state PAUSED (a commit needs RUNNING)"], eta: "unknown" },
      ]),
    ).toBe(
      "ready to commit: 1 of 3 instances (past it: COMMITTING×1); c: not ready (ETA unknown): state PAUSED (a commit needs RUNNING)",
    );
  });
});

describe("status of a small fleet", () => {
  it("is a line per instance with its readiness under each, and an answer per instance", () => {
    const lines = formatStatus(fleet(3, () => ({})));
    expect(lines[1]).toMatch(/^ {2}#1 shard-0 {2}RUNNING/);
    expect(lines.filter((l) => l === "      ready")).toHaveLength(3);
    const at = lines.indexOf("  last command: commit (step 5):");
    expect(lines.slice(at + 1, at + 4)).toEqual([
      "    shard-0: accepted",
      "    shard-1: accepted",
      "    shard-2: accepted",
    ]);
  });
});

describe("status: the last command's answers", () => {
  const sentTo = (n: number, fleetSize: number, refusing: number[]): Status => {
    const st = fleet(fleetSize, () => ({}));
    const names = st.instances.slice(0, n).map((x) => x.name);
    st.journal.lastCommand = {
      op: "pause",
      step: 5,
      answers: Object.fromEntries(names.map((k, i) => [k, refusing.includes(i) ? "error" : "ok"])),
      said: Object.fromEntries(
        names.map((k, i) => [k, refusing.includes(i) ? "refused or never sent (no)" : "accepted"]),
      ),
    };
    return st;
  };
  const answers = (st: Status): string[] => {
    const out = formatStatus(st);
    return out.slice(out.indexOf("  last command: pause (step 5):") + 1).filter((l) => l.startsWith("    "));
  };

  it("sent to part of the fleet (--only): 'all 10 it was sent to', never 'every instance'", () => {
    expect(answers(sentTo(10, 64, []))).toEqual(["    accepted: all 10 it was sent to (10)"]);
  });

  it("the instances that refused are named every one (the --only list of its completion); only the accepted are shortened", () => {
    const refusing = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    expect(answers(sentTo(64, 64, refusing))).toEqual([
      "    accepted: 54 of 64: shard-0, shard-2, shard-4, shard-6, shard-8, shard-10, shard-12, shard-14 and 46 more",
      `    refused or never sent (no): 10 of 64: ${refusing.map((i) => `shard-${i}`).join(", ")}`,
    ]);
  });

  it("six instances: a line each; seven: the fleet summarised", () => {
    expect(formatStatus(fleet(6, () => ({})))[1]).toMatch(/^ {2}#1 shard-0 /);
    expect(formatStatus(fleet(7, () => ({})))[1]).toBe("fleet: 7 instances: RUNNING×7");
  });
});

// a newcomer's trial: with the simulator stopped, every instance unreachable, status still said
// "identity: one fleet … as far as the instances tell"
describe("the identity line says how many instances it rests on", () => {
  const line = (st: Status) => formatStatus(st).find((l) => l.startsWith("identity:"));
  it("every instance answered; some did; none did", () => {
    expect(line(fleet(2, () => ({})))).toBe(
      "identity: one fleet (distinct ids, one coordinator, one direction, as far as the instances tell)",
    );
    expect(line(fleet(2, (i) => (i === 1 ? { reachable: false, error: "ECONNREFUSED" } : {})))).toBe(
      "identity: one fleet (distinct ids, one coordinator, one direction, as far as the 1 of 2 instances that answered tell)",
    );
    expect(line(fleet(2, () => ({ reachable: false, error: "ECONNREFUSED" })))).toBe(
      "identity: not known (no instance answered)",
    );
  });

  it("unreachable instances: what to check, once per different hint, after the instances", () => {
    const hint = "Is the sync service running on that address? By default its API binds to the local host only.";
    const text = formatStatus(fleet(3, (i) => (i > 0 ? { reachable: false, error: "ECONNREFUSED", hint } : {})));
    expect(text.filter((l) => l === `  hint: ${hint}`)).toHaveLength(1);
    expect(text.indexOf(`  hint: ${hint}`)).toBeGreaterThan(
      text.findIndex((l) => l.includes("unreachable: ECONNREFUSED")),
    );
  });
});

// an outside review: the reverse's words took the writes line alone, and a write stop of the same
// journal (stopped since …, or a stop hook cut off) was no longer said
describe("status's writes line with a reverse in doubt", () => {
  const writes = (journal: Partial<NonNullable<Status["journal"]>>): string | undefined => {
    const st = fleet(2, () => ({}));
    st.journal = { ...st.journal, ...journal };
    return formatStatus(st).find((l) => l.startsWith("  writes:"));
  };
  it("says the reverse, then the write stop it still has", () => {
    const reverse = "a reverse (step rollback) may have reached the fleet after it was committed";
    expect(writes({ reverseInDoubt: "rollback" })).toMatch(
      new RegExp(`^ {2}writes: ${escape(reverse)}.*adopts the reverse it shows\\)$`),
    );
    expect(
      writes({ reverseInDoubt: "rollback", writesStopped: true, writesStoppedSince: "2026-11-30T02:59:00.000Z" }),
    ).toMatch(
      /adopts the reverse it shows\); and stopped by the run \(a stopWrites held, not undone\) since 2026-11-30T02:59:00\.000Z \(1m 00s ago\)$/,
    );
    expect(writes({ reverseInDoubt: "rollback", writesStopInDoubt: { step: 3, id: "stop" } })).toMatch(
      /; and may be stopped: the stopWrites hook of step 3 stop started/,
    );
    expect(writes({ reverseInDoubt: "rollback", writesStopped: false })).not.toMatch(/; and /);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// a review: the advice of a failed undo ("retry the undo with --abort (below), or do by hand what
// it does") stood above an offer with no --abort, an earlier cutover's commit holding
describe("status of a failed undo while an earlier cutover's commit may hold", () => {
  it("says to keep writes stopped, not to retry the undo or do it by hand", async () => {
    const { nextOffer } = await import("../../src/run/status.js");
    const st = fleet(3, () => ({}));
    const why = "an earlier cutover's commit may still take effect: the journal /j/old.jsonl …";
    const j = {
      ...st.journal,
      lastStep: { number: 4, id: "drained", kind: "waitFor", startedAt: st.at },
      writesUndoFailed: { step: 3, id: "stop-writes", use: "sim-writes" },
      earlierCommit: {
        why,
        finish: { from: "stop-writes", commit: "commit", only: ["shard-2"] },
        resumeSendsCommit: true,
        reached: ["shard-0", "shard-1"],
      },
    };
    const next = nextOffer(j);
    const text = formatStatus({ ...st, journal: { ...j, ...(next ? { next } : {}) } }).join("\n");
    expect(text).toContain("keep them stopped: an earlier cutover's commit may still take effect (below)");
    expect(text).not.toMatch(/retry the undo with --abort|do by hand what it does/);
    expect(text).toContain("syncbook run big.yaml --from stop-writes --only shard-2");
    // without it, the advice as before
    const plain = { ...j, earlierCommit: undefined };
    const before = nextOffer(plain);
    expect(formatStatus({ ...st, journal: { ...plain, ...(before ? { next: before } : {}) } }).join("\n")).toMatch(
      /retry the undo with --abort/,
    );
  });
});
