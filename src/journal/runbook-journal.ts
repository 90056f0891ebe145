/**
 * Which journal is the runbook's, and may a continuing run act on it: the one answer `--resume`,
 * `--abort`, `--from` (src/run/earlier.ts) and `syncbook status` (src/run/status.ts) ask, so
 * that status says what `--resume` would do. The journal is the one named (`--resume <file>`),
 * else the folder's, chosen by content (read.ts `chooseJournal`: the header's `after`, the
 * unfinished run; two unfinished ones that do not order are refused); it is read (state.ts) and
 * its length checked against its witness (witness.ts), in one pass. `syncbook report` reads leniently and
 * takes `chooseJournal`'s pick as it is (read.ts `newestJournal`). `onEvent` sees each event of
 * the strict read as it goes (`status` folds its read model from that one pass).
 */
import { UserError } from "../errors.js";
import type { RunEvent } from "../events.js";
import { findResumeJournal, readJournalState, type JournalState, type KindTraits } from "./state.js";
import { readWitness, witnessCheck } from "./witness.js";

const witnessedSeq = (file: string): { witnessedSeq?: number } => {
  const w = readWitness(file);
  return w ? { witnessedSeq: w.seq } : {};
};

export interface RunbookJournal {
  /** The journal (undefined: the folder holds none, cannot be read, or its journals do not order). */
  file?: string;
  /** Newer journals passed over: their run sent nothing and ran no hook. */
  skipped: string[];
  /** No journal to continue: no folder, or none in it. */
  none: boolean;
  /** What the journal says, when it could be read (its `warnings` included). */
  state?: JournalState;
  /** Said, not refused (a journal written before witnesses). */
  witnessWarning?: string;
  /** Its own run marked it untrusted (witness.ts `emptyWitness`): the way on is a new run `--from` the write stop. */
  untrusted?: true;
  /**
   * Why a continuing run must not act on it (undefined: it may): nothing to resume, journals that
   * do not order, a journal that cannot be read, was edited, or is cut short of its witness.
   */
  refused?: unknown;
}

/** `findResumeJournal`'s "nothing to resume" (no folder, or no journal in it): a `--from` run counts nothing, status says none. */
export function isNothingToResume(err: unknown): boolean {
  return err instanceof UserError && err.message.startsWith("nothing to resume");
}

export async function runbookJournal(
  dir: string,
  traits: KindTraits,
  opts: { file?: string; onEvent?: (e: RunEvent) => void } = {},
): Promise<RunbookJournal> {
  let file = opts.file;
  let skipped: string[] = [];
  if (file === undefined) {
    try {
      ({ file, skipped } = await findResumeJournal(dir));
    } catch (err) {
      return { skipped: [], none: isNothingToResume(err), refused: err };
    }
  }
  let state: JournalState;
  // one read: the strict reader's lines also go to the witness check and to `onEvent`
  const witness = witnessCheck(file);
  try {
    // the witness's seq too: a request line past it never left (state.ts); whether the witness
    // is this journal's own is checked below
    state = await readJournalState(file, traits, {
      ...witnessedSeq(file),
      onLine: (l) => {
        witness.line(l);
        if (!l.why) opts.onEvent?.(l.value as RunEvent);
      },
    });
  } catch (err) {
    return { file, skipped, none: false, refused: err };
  }
  // a journal cut back to before an undo reads as "writes stopped": its length must be witnessed
  // before anything it says is acted on (witness.ts)
  try {
    const witnessed = witness.verdict();
    if (witnessed.refused)
      return {
        file,
        skipped,
        none: false,
        state,
        refused: witnessed.refused,
        ...(witnessed.untrusted ? { untrusted: true as const } : {}),
      };
    return { file, skipped, none: false, state, ...(witnessed.warning ? { witnessWarning: witnessed.warning } : {}) };
  } catch (err) {
    return { file, skipped, none: false, state, refused: err };
  }
}
