/**
 * The live view's frame writer: log-update's `createLogUpdate` (listr2's updater), with each line's
 * wrap kept from the frames before. log-update 6 wraps the whole frame with wrap-ansi on every
 * draw, and wrap-ansi measures the row so far once per word, a pass of the grapheme segmenter
 * over each line with an icon in it: 3 to 8 ms a frame of 23 lines at 64 instances (issue 41,
 * measured in `bench/downtime.mjs`), on the event loop the runner reads the fleet and sends the
 * commit on. A frame differs from the one before by a few lines (the clocks, the spinner, a
 * count): the rest is not wrapped again. Otherwise as log-update does: the frame before erased, a
 * frame equal to the one before not written. The cursor is listr2's to hide and show (its
 * hijack and release of the streams); log-update's own hide went to a copy of the stream that is no
 * terminal, and did nothing. Two differences, on purpose: the frame is cut to the terminal's height
 * after it is wrapped (log-update cuts it before, so a frame of wrapped lines could overflow the
 * screen and no longer be erased), and the size is read at each frame (listr2 gave log-update a
 * copy of the stream made once, whose size a resize did not change).
 */
import ansiEscapes from "ansi-escapes";

/** wrap-ansi's call, as listr2's renderer and log-update make it. */
export type WrapAnsi = (
  text: string,
  columns: number,
  options?: { hard?: boolean; trim?: boolean; wordWrap?: boolean },
) => string;

/** What listr2's default renderer calls its updater with. */
export interface FrameWriter {
  (text: string): void;
  clear(): void;
  done(): void;
}

/** log-update's: a stream with no size is taken as 80 columns and 24 rows. */
const DEFAULT_COLUMNS = 80;
const DEFAULT_ROWS = 24;

/** The stream a frame is drawn on: its size when a terminal, read at each frame (a resize). */
export interface FrameStream {
  write(chunk: string): unknown;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

/** A frame writer on `stream`; `wrap` is wrap-ansi, best with each line's result kept (`memoizedWrap`). */
export function frameWriter(stream: FrameStream, wrap: WrapAnsi): FrameWriter {
  let lineCount = 0;
  let before: string | undefined;
  let beforeWidth = 0;
  const render = (text: string): void => {
    const width = stream.columns ?? DEFAULT_COLUMNS;
    if (text === before && width === beforeWidth) return;
    before = text;
    beforeWidth = width;
    let lines = wrap(`${text}\n`, width, { trim: false, hard: true, wordWrap: false }).split("\n");
    const rows = stream.rows ?? DEFAULT_ROWS;
    if (lines.length > rows) lines = lines.slice(lines.length - rows);
    stream.write(ansiEscapes.eraseLines(lineCount) + lines.join("\n"));
    lineCount = lines.length;
  };
  const reset = (): void => {
    before = undefined;
    lineCount = 0;
  };
  return Object.assign(render, {
    clear(): void {
      stream.write(ansiEscapes.eraseLines(lineCount));
      reset();
    },
    done(): void {
      reset();
    },
  });
}
