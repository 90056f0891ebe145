/**
 * What a run says of the fleet's locks it took over (src/journal/fleet-lock.ts `tookOverLines`):
 * a line per runner that left them, not per instance (a kill -9 leaves one on each of 64).
 */
import { describe, expect, it } from "vitest";
import { tookOverLines, type FleetLock } from "../../src/journal/index.js";
import type { LockInfo } from "../../src/journal/lock.js";

const holder: LockInfo = {
  pid: 3901,
  host: "vm",
  startedAt: "2026-11-30T00:29:19Z",
  pidns: "pid:[1]",
  boot: "b",
  start: 7,
};
const took = (n: number, from: FleetLock["tookOver"][number]["from"], at = 0): FleetLock["tookOver"] =>
  Array.from({ length: n }, (_, i) => ({
    label: `sync${i + at} (http://127.0.0.1:${27182 + i + at})`,
    // each lock taken a moment apart: one runner all the same
    from: "unreadable" in from ? from : { ...from, startedAt: `2026-11-30T00:29:19.0${String(i).padStart(2, "0")}Z` },
  }));

describe("tookOverLines", () => {
  it("one instance: its line as before", () => {
    const [t] = took(1, holder);
    expect(tookOverLines([t!])).toEqual([
      "fleet: took over the stale lock of instance sync0 (http://127.0.0.1:27182) (left by pid 3901 on vm, since 2026-11-30T00:29:19.000Z: that process is gone)",
    ]);
  });

  it("64 locks one runner left: one line, how many, the first three and how many more", () => {
    const all = took(64, holder);
    expect(tookOverLines(all)).toEqual([
      "fleet: took over the stale locks of 64 instances (sync0 (http://127.0.0.1:27182), sync1 (http://127.0.0.1:27183), sync2 (http://127.0.0.1:27184) and 61 more), all left by one runner: pid 3901 on vm, since 2026-11-30T00:29:19.000Z: that process is gone",
    ]);
  });

  it("two runners' locks: a line each; an unreadable lock is its own", () => {
    const lines = tookOverLines([
      ...took(2, holder),
      ...took(2, { ...holder, pid: 4000 }, 2),
      ...took(1, { unreadable: "{garbage" }, 4),
    ]);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^fleet: took over the stale locks of 2 instances \(sync0 .*, sync1 .*\), all left by one runner: pid 3901 on vm, since /,
    );
    expect(lines[1]).toMatch(
      /^fleet: took over the stale locks of 2 instances \(sync2 .*, sync3 .*\), all left by one runner: pid 4000 on vm/,
    );
    expect(lines[2]).toBe(
      'fleet: took over the stale lock of instance sync4 (http://127.0.0.1:27186) (left by a lock file that could not be read: "{garbage")',
    );
  });

  it("the holder's runbook, when its lock names one", () => {
    const [t] = took(1, { ...holder, runbook: "/srv/cutover/rb.yaml" });
    expect(tookOverLines([t!])[0]).toMatch(
      /left by pid 3901 on vm, since .*, running \/srv\/cutover\/rb\.yaml: that process is gone\)$/,
    );
  });

  it("unreadable locks tell no holder: each its own line, even with the same contents", () => {
    expect(tookOverLines(took(2, { unreadable: "" }))).toEqual([
      "fleet: took over the stale lock of instance sync0 (http://127.0.0.1:27182) (left by an empty lock file)",
      "fleet: took over the stale lock of instance sync1 (http://127.0.0.1:27183) (left by an empty lock file)",
    ]);
  });
});
