/**
 * The journal's hash chain (format 2): every line ends with `"chain":"<hex>"`, the first 32 hex
 * digits of sha256(previous line's chain + "\n" + this line without its chain field). The header
 * starts the chain (previous = ""); a resume marker continues it from the last whole line (a
 * fragment left by a crash is outside the chain). Together with the events' `seq`, which counts
 * up by one per line, a deleted, inserted, reordered or edited line breaks the chain at the line
 * where it happened, and the reader names that line.
 *
 * What it is not: a signature. Anyone who can write the file can recompute the chain; it catches
 * a journal edited by hand or by a tool that does not know the format (the way undo lines were
 * deleted in the review that asked for it), and a file damaged on disk. Lines cut off at the end
 * look like a crash, which is what a crash leaves: the live fleet then decides (reconcile).
 */
import { hash } from "node:crypto";

/** The field every chained line ends with. */
export const CHAIN_FIELD = "chain";
/** Hex digits kept of each link (128 bits: a collision by accident or by a careless edit is out of reach). */
const LINK_HEX = 32;
const TAIL = new RegExp(`,"${CHAIN_FIELD}":"([0-9a-f]{${LINK_HEX}})"\\}$`);

/** The link of a line whose text (without the chain field) is `body`, after a line whose link is `prev`. */
export function link(prev: string, body: string): string {
  // one call, no Hash object: a link is computed for every line, a fleet's answers included (issue 41)
  return hash("sha256", `${prev}\n${body}`, "hex").slice(0, LINK_HEX);
}

/** `{...}` → `{...,"chain":"…"}`, and the new link. `body` is one serialized JSON object. */
export function appendChain(prev: string, body: string): { line: string; chain: string } {
  const chain = link(prev, body);
  const open = body.length > 2 ? "," : "";
  return { line: `${body.slice(0, -1)}${open}"${CHAIN_FIELD}":"${chain}"}`, chain };
}

/** A line's own link and the text it was computed over, or undefined when the line carries none. */
export function splitChain(text: string): { chain: string; body: string } | undefined {
  const m = TAIL.exec(text);
  if (!m) return undefined;
  return { chain: m[1]!, body: `${text.slice(0, m.index)}}` };
}

export interface ChainVerdict {
  /** Why this line does not continue the chain (undefined: it does, or the journal is not chained here). */
  broken?: string;
}

/**
 * Follows a journal's chain line by line. `start` opens a chain at a header or a resume marker
 * (a resume of a journal written before chaining starts one there); every later line must carry
 * the link that follows from the one before and a seq one higher. Lines before any chain (an
 * older journal) are not judged: `chained` says whether the checker is inside a chain.
 */
export function createChainChecker() {
  let prev: string | undefined;
  let prevSeq: number | undefined;
  let prevLine = 0;
  return {
    get chained(): boolean {
      return prev !== undefined;
    },
    /**
     * `text` the line as read, `seq` its event seq, `opens` whether it may start a chain (header,
     * resume marker).
     */
    check(lineNo: number, text: string, seq: number, opens: boolean): ChainVerdict {
      const own = splitChain(text);
      if (!own) {
        if (prev === undefined) return {};
        return {
          broken: `line ${lineNo} has no chain field, but the lines before it are chained: it was added or edited by hand`,
        };
      }
      // a resume marker continues the chain when there is one; it starts one after unchained lines
      const from = prev ?? (opens ? "" : undefined);
      if (from === undefined) {
        return {
          broken: `line ${lineNo} is chained, but the journal's chain does not start at a header or resume marker before it`,
        };
      }
      const gap =
        prev !== undefined && prevSeq !== undefined && seq !== prevSeq + 1
          ? `gap at line ${lineNo}: its seq is ${seq}, the line before it (${prevLine}) has ${prevSeq}: ${seq > prevSeq ? `${seq - prevSeq - 1} line(s) are missing` : "lines are out of order or repeated"}`
          : undefined;
      if (link(from, own.body) !== own.chain) {
        return {
          broken:
            gap ??
            (prev === undefined
              ? `line ${lineNo} does not start the journal's chain: it was edited`
              : `the journal's chain breaks at line ${lineNo}: a line between ${prevLine} and ${lineNo} was deleted, added or edited, or line ${lineNo} itself was edited`),
        };
      }
      if (gap) return { broken: gap };
      prev = own.chain;
      prevSeq = seq;
      prevLine = lineNo;
      return {};
    },
  };
}
