/**
 * The live view's wrap: wrap-ansi's (listr2 wraps every line of a frame with it, and the frame
 * writer the whole frame again), each line's result kept, and a line that fits not wrapped at all.
 *
 * Why (issue 41): wrap-ansi measures the row so far once per word, a pass of the grapheme
 * segmenter each. Lines kept from the frame before are not wrapped again (`memoizedWrap`), but a
 * frame's changing lines (the clocks, the spinner, the counts, the watch's per-instance lines)
 * were: in a CPU profile of one bench round at 64 instances, wrap-ansi was 100 of the runner's
 * 635 ms busy inside the window and a fifth of what it allocated (26 of 122 MB; each minor GC then
 * paused the runner 3 to 14 ms, on the loop that sends the commit).
 *
 * A line that wrap-ansi would leave as it is, it is not given: with `trim: false`, a line whose
 * width is within the columns comes back unchanged (no row is broken, no space trimmed, and its
 * colour codes are re-emitted only around a break). Its width is known here only when the line is
 * made of printable ASCII, SGR colour codes and the characters of `KNOWN_WIDTHS`, each its own grapheme,
 * unchanged by the NFC normalisation wrap-ansi applies first, and as wide as wrap-ansi's
 * string-width counts it (2 for those its emoji pattern matches, as ✔ and ◼, whatever a terminal
 * draws): test/ui/wrap.test.ts checks each against wrap-ansi itself, and whole lines too.
 * Any other line goes to wrap-ansi.
 */
import type { WrapAnsi } from "./frame-writer.js";

/** Lines kept wrapped: a frame has a few dozen; the clocks' and counters' old lines are dropped with the rest. */
const WRAPPED_KEPT = 2000;

/** The live view's and listr2's symbols, with the width wrap-ansi gives each. */
export const KNOWN_WIDTHS: ReadonlyMap<number, number> = new Map([
  ...[..."…→·–—█░×−≥≤←≈⁻¹✓↓↑✗■Σ○●↻␛␍␡␊❯☒›√⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏÷±°µ•▲▼◆◇□▸▹↳⇒≠"].map((c): [number, number] => [
    c.codePointAt(0)!,
    1,
  ]),
  ...[..."❌⏱⚠❔✅⏹✖✔⛔▶⏭▫◼‼▪"].map((c): [number, number] => [c.codePointAt(0)!, 2]),
]);

const ESC = 0x1b;

/**
 * The width of `line` as wrap-ansi measures it, when it is made only of what `KNOWN_WIDTHS` and printable
 * ASCII hold and of SGR codes (ESC [ digits and semicolons m); otherwise undefined.
 */
export function knownWidth(line: string): number | undefined {
  let width = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e) {
      width++;
      continue;
    }
    if (c === ESC) {
      if (line.charCodeAt(i + 1) !== 0x5b) return undefined;
      // parameters of at most four digits each: the installed ansi-regex (6.6) strips any run, but
      // earlier 6.x releases took at most four, and `ESC[12345m` left an "m" string-width counted
      let j = i + 2;
      for (let digits = 0, d = line.charCodeAt(j); (d >= 0x30 && d <= 0x39) || d === 0x3b; d = line.charCodeAt(++j)) {
        digits = d === 0x3b ? 0 : digits + 1;
        if (digits > 4) return undefined;
      }
      if (line.charCodeAt(j) !== 0x6d) return undefined;
      i = j;
      continue;
    }
    const w = KNOWN_WIDTHS.get(c);
    if (w === undefined) return undefined;
    width += w;
  }
  return width;
}

/**
 * `wrap`, each line's result kept, and a line it would return unchanged returned as it is:
 * wrap-ansi wraps the lines of a text one by one (it splits on "\n" after turning "\r\n" into it),
 * so a text's wrap is its lines' wraps joined.
 */
export function memoizedWrap(wrap: WrapAnsi): WrapAnsi {
  let kept = new Map<string, string>();
  return (text, columns, options) => {
    const how = `${columns}\u0000${options?.hard}\u0000${options?.trim}\u0000${options?.wordWrap}\u0000`;
    const untrimmed = options?.trim === false;
    return text
      .replaceAll("\r\n", "\n")
      .split("\n")
      .map((line) => {
        if (untrimmed) {
          const w = knownWidth(line);
          if (w !== undefined && w <= columns) return line;
        }
        const key = how + line;
        let out = kept.get(key);
        if (out === undefined) {
          if (kept.size >= WRAPPED_KEPT) kept = new Map();
          out = wrap(line, columns, options);
          kept.set(key, out);
        }
        return out;
      })
      .join("\n");
  };
}
