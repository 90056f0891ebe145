/**
 * `formatDuration` (src/runbook/duration.ts), the one format of every message, view and report:
 * rounded to the unit it shows, never cut (a window of 12.99 s said "12s", and an "at most" cut
 * down promised less downtime than there was), and a value that rounds into the next unit takes
 * that unit's form.
 */
import { describe, expect, it } from "vitest";
import { formatDuration } from "../../src/runbook/duration.js";

describe("formatDuration", () => {
  it.each([
    [0, "0ms"],
    [0.4, "0ms"],
    [0.5, "1ms"],
    [749.5, "750ms"],
    [999.4, "999ms"],
    [999.6, "1s"],
    [1_000, "1s"],
    [1_049, "1s"],
    [1_050, "1.1s"],
    [2_500, "2.5s"],
    [9_949, "9.9s"],
    [9_950, "10s"],
    [12_499, "12s"],
    [12_990, "13s"],
    [45_000, "45s"],
    [59_499, "59s"],
    [59_600, "1m 00s"],
    [60_000, "1m 00s"],
    [245_000, "4m 05s"],
    [245_600, "4m 06s"],
    [3_599_400, "59m 59s"],
    [3_599_600, "1h 00m"],
    [11_220_000, "3h 07m"],
    [11_249_000, "3h 07m"],
    [11_250_000, "3h 08m"],
    [86_369_000, "23h 59m"],
    [86_399_999, "1d 0h"],
    [90_000_000, "1d 1h"],
    [183_600_000, "2d 3h"],
    [-1, "?"],
    [Number.NaN, "?"],
    [Number.POSITIVE_INFINITY, "?"],
  ])("%s ms is %s", (value, text) => {
    expect(formatDuration(value)).toBe(text);
  });

  it.each([
    [12_400, "up", "13s"],
    [12_000, "up", "12s"],
    [12_990, "down", "12s"],
    [999.2, "up", "1s"],
    [1_000.2, "up", "1.1s"],
    [9_901, "up", "10s"],
    [59_001, "up", "1m 00s"],
    [59_999, "down", "59s"],
    [3_599_001, "up", "1h 00m"],
    [3_659_999, "down", "1h 00m"],
    [86_340_001, "up", "1d 0h"],
    [86_399_999, "down", "23h 59m"],
  ] as const)("a bound rounds outwards: %s ms rounded %s is %s", (value, round, text) => {
    expect(formatDuration(value, round)).toBe(text);
  });

  it("never says less than the value rounded to the unit it shows", () => {
    // every tenth of a second up to 70 s, and every second up to two hours: the figure read back
    // (in the unit shown) is within half that unit of the value
    const UNIT: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
    const parts = (t: string): [number, string][] =>
      t.split(" ").map((p) => {
        const m = /^([\d.]+)(ms|s|m|h|d)$/.exec(p);
        if (!m) throw new Error(t);
        return [Number(m[1]), m[2]!];
      });
    const back = (t: string): number => parts(t).reduce((sum, [n, u]) => sum + n * UNIT[u]!, 0);
    // the unit of the last part, a tenth of a second below 10 s
    const unit = (t: string): number => {
      const last = parts(t).at(-1)!;
      return last[1] === "s" && t.length <= 4 && !/^\d\ds$/.test(t) ? 100 : UNIT[last[1]]!;
    };
    for (let v = 0; v <= 7_200_000; v += v < 70_000 ? 37 : 997) {
      const t = formatDuration(v);
      expect(Math.abs(back(t) - v), `${v} → ${t}`).toBeLessThanOrEqual(unit(t) / 2);
    }
  });
});
