/**
 * The live view's frame writer (src/ui/frame-writer.ts): log-update's updater, each line's wrap kept
 * (issue 41: log-update wrapped every line of every frame again, 3 to 8 ms a frame at 64 instances).
 * It writes what log-update writes for the same frames (each frame, the erase of the one before),
 * wraps only the lines it has not seen, cuts a frame to the terminal's height after the wrap, reads
 * the size at each frame, and leaves the cursor to listr2.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { createLogUpdate } from "log-update";
import { frameWriter, type FrameStream } from "../../src/ui/frame-writer.js";
import { memoizedWrap } from "../../src/ui/wrap.js";

// the wrap-ansi log-update and listr2 use (the one at the top of node_modules is another major)
type Wrap = (text: string, columns: number, o?: { hard?: boolean; trim?: boolean; wordWrap?: boolean }) => string;
const logUpdateDir = createRequire(import.meta.url).resolve("log-update");
const wrapAnsi = (
  (await import(pathToFileURL(createRequire(logUpdateDir).resolve("wrap-ansi")).href)) as { default: Wrap }
).default;

function stream(size: { columns?: number; rows?: number } = {}): FrameStream & { out: string[]; columns?: number } {
  const out: string[] = [];
  return { ...size, out, write: (s: string) => out.push(s) };
}

/** Frames as the live view draws them: an icon, a title, a panel whose clock and counts move. */
const frames = [0, 1, 1, 2, 3].map((i) =>
  [
    `✔ stop-writes (stopWrites) [${120 + i}ms]`,
    `⠋ drained (waitFor) · 64 instances · lag ${5 - i}s · canCommit 64/64`,
    `  › sync${i}: RUNNING · lag ${i}s · a line long enough to be wrapped at eighty columns by the terminal width`,
    "◼ commit (commit)",
  ].join("\n"),
);

describe("frameWriter", () => {
  it("writes, frame for frame, what log-update writes (a pipe: 80 columns, 24 rows)", () => {
    const ours = stream();
    const theirs = stream();
    const w = frameWriter(ours, memoizedWrap(wrapAnsi));
    const l = createLogUpdate(theirs as never);
    for (const f of frames) {
      w(f);
      l(f);
    }
    w.clear();
    l.clear();
    expect(ours.out).toEqual(theirs.out);
    // a frame equal to the one before was not written (frames 1 and 2): four frames and the clear
    expect(ours.out).toHaveLength(5);
    expect(ours.out.join("")).not.toContain("\u001B[?25");
  });

  it("gives wrap-ansi only the lines it has not wrapped before and that do not fit the width", () => {
    const lines: string[] = [];
    const counting = (text: string, columns: number, o?: Parameters<Wrap>[2]): string => {
      lines.push(text);
      return wrapAnsi(text, columns, o);
    };
    const w = frameWriter(stream(), memoizedWrap(counting));
    w(frames[0]!);
    // the long line; the others fit in 80 columns (src/ui/wrap.ts)
    expect(lines).toEqual([frames[0]!.split("\n")[2]]);
    w(frames[1]!);
    // of the lines that moved (a duration, the panel's), the one that does not fit; not the step that did not move
    const moved = frames[1]!.split("\n").filter((l) => !frames[0]!.split("\n").includes(l));
    expect(moved).toHaveLength(3);
    expect(lines.slice(1)).toEqual(moved.filter((l) => l.length > 80));
    expect(lines.slice(1)).toHaveLength(1);
  });

  it("a width that changed wraps the same frame again, to the new width", () => {
    const s = stream({ columns: 80 });
    const w = frameWriter(s, memoizedWrap(wrapAnsi));
    w(frames[0]!);
    s.columns = 40;
    w(frames[0]!);
    expect(s.out).toHaveLength(2);
    // eslint-disable-next-line no-control-regex -- the erase's escapes are not columns
    expect(s.out[1]!.split("\n").every((l) => l.replace(/\u001B\[[0-9;]*[A-Za-z]/g, "").length <= 40)).toBe(true);
  });

  it("cuts a frame to the terminal's height after the wrap: its last rows, each erased by the next frame", () => {
    const s = stream({ columns: 40, rows: 4 });
    const w = frameWriter(s, memoizedWrap(wrapAnsi));
    w(frames[0]!);
    const rows = s.out[0]!.split("\n");
    expect(rows).toHaveLength(4);
    // the frame's last line is there, its first cut
    expect(rows.at(-2)).toBe("◼ commit (commit)");
    expect(s.out[0]).not.toContain("stop-writes");
    w(frames[3]!);
    // the next frame erases the four rows written (three lines and the cursor's)
    expect(s.out[1]!.startsWith("\u001B[2K\u001B[1A\u001B[2K\u001B[1A\u001B[2K\u001B[1A\u001B[2K\u001B[G")).toBe(true);
  });

  it("writes no cursor escape of its own: the cursor is listr2's to hide and show", () => {
    const s = stream({ columns: 80, rows: 24 });
    const w = frameWriter(s, memoizedWrap(wrapAnsi));
    w(frames[0]!);
    w.clear();
    w.done();
    expect(s.out.join("")).not.toContain("\u001B[?25");
  });
});
