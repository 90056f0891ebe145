/**
 * The watch page's durations are `formatDuration`'s (src/runbook/duration.ts), the one format of a
 * duration in every output: the page's script runs the function's own source (issue 40; it had a
 * copy of its own that wrote a day as "25h 00m" where every other output says "1d 1h").
 */
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { formatDuration } from "../../src/runbook/duration.js";
import { watchPage } from "../../src/watch/page.js";

/** The page script's `dur`, evaluated on its own (it uses nothing of the page's). */
function pageDur(): (ms: unknown) => string {
  const html = watchPage("n0nce");
  const m = /\nconst dur = ([\s\S]*?);\nlet state = null;/.exec(html);
  if (!m) throw new Error("the page's script has no `const dur = …;` before `let state`");
  // in a context of its own, as the page's script has nothing of Node's
  return runInNewContext(`"use strict"; (${m[1]})`) as (ms: unknown) => string;
}

describe("the watch page's durations", () => {
  it("are formatDuration's, at every boundary and for what is no duration", () => {
    const dur = pageDur();
    const values = [
      0,
      0.4,
      999,
      999.6,
      1_000,
      1_050,
      9_999,
      10_000,
      59_999,
      60_000,
      61_000,
      3_599_999,
      3_600_000,
      86_399_999,
      86_400_000,
      90_061_000,
      864_000_000,
      -1,
      NaN,
      Infinity,
    ];
    for (const v of values) expect(dur(v), String(v)).toBe(formatDuration(v));
    expect(dur(90_000_000)).toBe("1d 1h");
    expect(dur(undefined)).toBe("?");
    expect(dur("5000")).toBe("?");
  });
});
