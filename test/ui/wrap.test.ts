/**
 * The live view's wrap (src/ui/wrap.ts): wrap-ansi's, each line's result kept, and a line that
 * fits not given to it (issue 41). What it returns must be what wrap-ansi returns, byte for byte:
 * checked here against listr2's own wrap-ansi, for every symbol whose width it claims to know and
 * for lines made of them at every width around their own.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { KNOWN_WIDTHS, knownWidth, memoizedWrap } from "../../src/ui/wrap.js";

type Options = { hard?: boolean; trim?: boolean; wordWrap?: boolean };
// the wrap listr2's renderer uses (its own copy of wrap-ansi; the one at the top of node_modules is another major)
const from = createRequire(createRequire(import.meta.url).resolve("listr2")).resolve("wrap-ansi");
const wrapAnsi = (
  (await import(pathToFileURL(from).href)) as { default: (t: string, c: number, o?: Options) => string }
).default;

const counted = (): { wrap: (t: string, c: number, o?: Options) => string; given: string[] } => {
  const given: string[] = [];
  return {
    given,
    wrap: (t, c, o) => {
      given.push(t);
      return wrapAnsi(t, c, o);
    },
  };
};

const OPTIONS: (Options | undefined)[] = [
  { hard: true, trim: false }, // listr2's
  { trim: false, hard: true, wordWrap: false }, // log-update's, the frame writer's
  { hard: false, trim: false },
  { hard: true },
  undefined,
];

const RED = "\u001b[31m";
const END = "\u001b[39m";

describe("memoizedWrap", () => {
  it("uses listr2's wrap-ansi", () => {
    expect(from).toContain("listr2");
  });

  it("knows each symbol's width as wrap-ansi measures it: one grapheme, unchanged by NFC, fits at its width and not one less", () => {
    const segmenter = new Intl.Segmenter();
    expect(KNOWN_WIDTHS.size).toBeGreaterThan(40);
    for (const [cp, width] of KNOWN_WIDTHS) {
      const c = String.fromCodePoint(cp);
      const line = `a${c}b`;
      expect(c.normalize(), c).toBe(c);
      expect([...segmenter.segment(line)], c).toHaveLength(3);
      expect(knownWidth(line), c).toBe(width + 2);
      expect(wrapAnsi(line, width + 2, { hard: true, trim: false }), c).toBe(line);
      expect(wrapAnsi(line, width + 1, { hard: true, trim: false }), c).not.toBe(line);
    }
  });

  it("returns what wrap-ansi returns for lines of every symbol, colour codes and spaces, at every width around theirs", () => {
    const symbols = [...KNOWN_WIDTHS.keys()].map((cp) => String.fromCodePoint(cp));
    const lines = [
      "",
      " ",
      "  indented  line  ",
      "a-very-long-word-without-any-space-that-must-be-broken-hard",
      `${RED}⏱ writes stopped${END} 3s · shard-a  RUNNING  lag 2s`,
      `${RED}${END}`,
      `\u001b[1m\u001b[32m✔\u001b[39m\u001b[22m done \u001b[2m[12ms]\u001b[22m`,
      // a reset without a number, 256 colours, an empty parameter, a four-digit one
      `\u001b[m a \u001b[38;5;12m b \u001b[;m c \u001b[1234m d`,
      // every symbol beside every other
      [...KNOWN_WIDTHS.keys()].map((cp) => String.fromCodePoint(cp)).join(""),
      [...KNOWN_WIDTHS.keys()].map((cp) => String.fromCodePoint(cp)).join(" "),
      ...symbols.map((c) => `${c} step ${RED}${c}${c}${END} x `),
      ...symbols.map((c) => `${c.repeat(7)} ${c}`),
    ];
    let compared = 0;
    for (const line of lines) {
      const width = knownWidth(line) ?? line.length;
      for (const o of OPTIONS) {
        const wrap = memoizedWrap(wrapAnsi);
        for (const cols of [0, -1, Number.NaN, ...Array.from({ length: width + 2 }, (_, k) => k + 1)]) {
          expect(wrap(line, cols, o), `${JSON.stringify(line)} at ${cols} ${JSON.stringify(o)}`).toBe(
            wrapAnsi(line, cols, o),
          );
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(5000);
  });

  it("a line that fits is not given to wrap-ansi when nothing is trimmed; one that does not fit, or is trimmed, is, once per width", () => {
    const { wrap, given } = counted();
    const w = memoizedWrap(wrap);
    const fits = `✔ stop-writes ${RED}[120ms]${END} · lag —`;
    expect(knownWidth(fits)).toBe(30);
    expect(w(fits, 30, { hard: true, trim: false })).toBe(fits);
    expect(given).toEqual([]);
    expect(w(fits, 29, { hard: true, trim: false })).toBe(wrapAnsi(fits, 29, { hard: true, trim: false }));
    expect(given).toEqual([fits]);
    w(fits, 29, { hard: true, trim: false });
    expect(given, "wrapped again").toHaveLength(1);
    // wrap-ansi trims by default: the line is its to return
    expect(w(` ${fits} `, 80)).toBe(wrapAnsi(` ${fits} `, 80));
    expect(given).toHaveLength(2);
  });

  it("a line with anything else goes to wrap-ansi: other symbols, emoji, a variation selector, wide or combining characters, other escapes", () => {
    for (const line of [
      "⚠️ warning", // VS16
      "📝 note", // outside the BMP
      "東京 shard", // wide
      "cafe\u0301", // combining
      "a\u001b[2Kb", // erase line, not a colour
      "\u001b]8;;https://example.com\u0007link\u001b]8;;\u0007", // a hyperlink
      "a\u001b[31", // cut short
      "a\u001b[12345m", // a parameter longer than older ansi-regex releases strip whole
      "a\u009b31m", // the C1 introducer
      "tab\there",
    ]) {
      expect(knownWidth(line), JSON.stringify(line)).toBeUndefined();
      const { wrap, given } = counted();
      expect(memoizedWrap(wrap)(line, 80, { hard: true, trim: false })).toBe(
        wrapAnsi(line, 80, { hard: true, trim: false }),
      );
      expect(given).toEqual([line]);
    }
  });

  it("wraps a text's lines one by one, \\r\\n as \\n, as wrap-ansi does", () => {
    const text = `${RED}⏱ writes stopped${END} 3s · shard-a  RUNNING  lag 2s\r\nshard-b  COMMITTING  lag —\n\n  indented  line  `;
    for (const cols of [20, 40, 80])
      for (const o of OPTIONS) expect(memoizedWrap(wrapAnsi)(text, cols, o)).toBe(wrapAnsi(text, cols, o));
  });
});
