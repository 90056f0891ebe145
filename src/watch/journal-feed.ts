/**
 * The cutover's journals, followed as they grow, folded into the one read model
 * (src/model/fold.ts): `syncbook watch` reads the journal folder and nothing the runner holds, so
 * it works before a run (no journal yet), during it, after it, and after the runner died.
 *
 * Which journals: the one `--resume` would continue (`chooseJournal`, the one rule) and the
 * other journals of its cutover (`cutoverJournals`), joined as `joinJournals` joins them (in the
 * order their runs started). A journal only grows: while the folder's journals stay the same files
 * and only the one holding the last run grows, only its new bytes are read and folded; anything else (a new journal, one that
 * shrank or was replaced) folds everything again. A line cut short by a write in progress waits
 * for its end.
 */
import { open, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { RunEvent } from "../events.js";
import {
  chooseJournal,
  cutoverJournals,
  isRunEvent,
  journalCutover,
  JOURNAL_EXTENSION,
  LOCK_FILE_NAME,
  resumeStep,
  runbookJournal,
  sentAhead,
} from "../journal/index.js";
import { traitsOf } from "../steps/index.js";
import { CutoverFold, joinJournals, shiftLine, type JournalShift } from "../model/fold.js";
import type { WindowKindTraits } from "../fleet/window.js";
import {
  earlierCommitOnFleet,
  earlierCommitSaid,
  passedOverRefusal,
  readFolderJournals,
  type EarlierCommitSaid,
  type PassedOverRefusal,
} from "../run/earlier.js";

/** The folder's lock, as its holder wrote it (src/journal/lock.ts). */
export interface LockHolder {
  pid: number;
  host: string;
  startedAt: string;
}

interface Tracked {
  file: string;
  offset: number;
  /** A last line not yet ended by a newline. */
  partial: string;
  /** How its lines still to come move (`joinJournals`' `shifts`). */
  shift: JournalShift;
}

export class JournalFeed {
  readonly #dir: string;
  readonly #traits: WindowKindTraits;
  #fold: CutoverFold;
  #journals: { file: string; fromSeq: number }[] = [];
  #tracked: Tracked[] = [];
  #names = "";
  #lock: LockHolder | undefined;
  /** Bad lines skipped (not JSON, not an event): a journal edited by hand, or a line cut by a crash. */
  skipped = 0;
  /** `earlierCommit`'s last answer, and the folder's journals (names and sizes) it was read from. */
  #earlier: { key: string; held: EarlierCommitSaid | undefined } | undefined;
  /** `resumeRefusedOwn`'s last answer, and the folder's journals it was read from. */
  #ownRefused: { key: string; refused: boolean } | undefined;
  /** `passedOver`'s last answer, and the folder's journals it was read from. */
  #passedOver: { key: string; refusal: PassedOverRefusal | undefined } | undefined;

  constructor(dir: string, traits: WindowKindTraits) {
    this.#dir = dir;
    this.#traits = traits;
    this.#fold = this.#newFold();
  }

  get fold(): CutoverFold {
    return this.#fold;
  }

  get lock(): LockHolder | undefined {
    return this.#lock;
  }

  /** The journals folded, by their first run, the one holding the last run last (the one followed as it grows). */
  get files(): string[] {
    return this.#tracked.map((t) => t.file);
  }

  #newFold(): CutoverFold {
    this.#journals = [];
    return new CutoverFold({ traits: this.#traits, journals: this.#journals });
  }

  /**
   * Why a commit of another journal of the folder may still take effect, or a journal that cannot
   * be judged may hold one, in the words of `status` (src/run/earlier.ts `earlierCommitOnFleet`,
   * `earlierCommitSaid`, as `--abort` asks it): read again only when the folder's journals changed
   * (names or sizes), and never while a single journal is there. Asked by the page while no runner
   * is seen working.
   */
  async earlierCommit(): Promise<EarlierCommitSaid | undefined> {
    const chosen = this.#tracked.at(-1)?.file;
    if (!chosen || !this.#names.includes("\n")) return undefined;
    const key = `${chosen}\n${await this.#folderKey()}`;
    if (this.#earlier?.key === key) return this.#earlier.held;
    let held: EarlierCommitSaid | undefined;
    try {
      held = earlierCommitSaid(earlierCommitOnFleet(await readFolderJournals(this.#dir), chosen));
    } catch {
      held = undefined; // unreadable now: read again once the folder changes
    }
    this.#earlier = { key, held };
    return held;
  }

  /** The folder's journals, names and sizes: what the answers above were read from. */
  async #folderKey(): Promise<string> {
    const names = this.#names.split("\n");
    const sizes = await Promise.all(
      names.map((n) =>
        stat(join(this.#dir, n)).then(
          (st) => st.size,
          () => -1,
        ),
      ),
    );
    return names.map((n, k) => `${n}:${sizes[k]}`).join("\n");
  }

  /**
   * Whether the `--resume` of the journal it would continue (`runbookJournal`, the one rule) is
   * refused on that journal alone: a start, commit or reverse sent by an earlier run, in doubt,
   * ahead of where it goes on (src/journal/reconcile.ts `sentAhead` at `resumeStep`, as the run's
   * end and `status` ask it). Read again only when the folder's journals changed; asked by the page
   * while no runner is seen working (a review: the page offered that --resume).
   */
  async resumeRefusedOwn(): Promise<boolean> {
    if (!this.#names) return false;
    const key = await this.#folderKey();
    if (this.#ownRefused?.key === key) return this.#ownRefused.refused;
    let refused = false;
    try {
      const found = await runbookJournal(this.#dir, traitsOf);
      // only whether it is refused: status says its words, with the runbook's commands
      refused =
        found.refused === undefined &&
        found.state !== undefined &&
        sentAhead(found.state, { steps: [], args: { status: "", run: "" } }, resumeStep(found.state).at) !== undefined;
    } catch {
      refused = false; // unreadable now: read again once the folder changes
    }
    this.#ownRefused = { key, refused };
    return refused;
  }

  /**
   * The refusal the newest journal `--resume` passes over ended with, where its way on is that
   * run's own command again (src/run/earlier.ts `passedOverRefusal`, the one rule `status` asks):
   * a refused `--new-cutover` is another cutover, whose journal this feed does not fold. Read again
   * only when the folder's journals changed; asked by the page while no runner is seen working (an
   * outside review: the page offered the earlier cutover's `--resume`, where status offered the
   * refused run's command, and the `--resume` pasted committed the earlier cutover).
   */
  async passedOver(): Promise<PassedOverRefusal | undefined> {
    if (!this.#names) return undefined;
    const key = await this.#folderKey();
    if (this.#passedOver?.key === key) return this.#passedOver.refusal;
    let refusal: PassedOverRefusal | undefined;
    try {
      refusal = await passedOverRefusal((await chooseJournal(this.#dir)).skipped);
    } catch {
      refusal = undefined; // unreadable now: read again once the folder changes
    }
    this.#passedOver = { key, refusal };
    return refusal;
  }

  /** Reads what changed since the last call; true when the model may have changed. */
  async refresh(): Promise<boolean> {
    const lockChanged = await this.#readLock();
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => n.endsWith(JOURNAL_EXTENSION)).sort();
    } catch {
      names = []; // no folder yet: no run yet
    }
    const key = names.join("\n");
    if (key !== this.#names) {
      this.#names = key;
      await this.#rebuild(names.length > 0);
      return true;
    }
    let grew = false;
    for (const [k, t] of this.#tracked.entries()) {
      let size: number;
      try {
        size = (await stat(t.file)).size;
      } catch {
        await this.#rebuild(true);
        return true;
      }
      if (size === t.offset) continue;
      // an earlier journal that changes, or one that shrank: not an append, start over
      if (size < t.offset || k !== this.#tracked.length - 1) {
        await this.#rebuild(true);
        return true;
      }
      for (const e of await this.#readFrom(t, size)) this.#append(t, e);
      grew = true;
    }
    return grew || lockChanged;
  }

  async #readLock(): Promise<boolean> {
    const was = JSON.stringify(this.#lock ?? null);
    let next: LockHolder | undefined;
    try {
      const l = JSON.parse(await readFile(join(this.#dir, LOCK_FILE_NAME), "utf8")) as Record<string, unknown>;
      if (typeof l.pid === "number" && typeof l.host === "string" && typeof l.startedAt === "string")
        next = { pid: l.pid, host: l.host, startedAt: l.startedAt };
      else next = this.#lock; // being written: keep what was read
    } catch (err) {
      // no lock: no runner holds the folder; a lock being written keeps the last reading
      next = (err as NodeJS.ErrnoException).code === "ENOENT" ? undefined : this.#lock;
    }
    this.#lock = next;
    return JSON.stringify(next ?? null) !== was;
  }

  async #rebuild(any: boolean): Promise<void> {
    this.#fold = this.#newFold();
    this.#tracked = [];
    this.skipped = 0;
    if (!any) return;
    let files: string[];
    try {
      const chosen = (await chooseJournal(this.#dir)).file;
      if (!chosen) return;
      const id = (await journalCutover(chosen)).cutover;
      files = id ? await cutoverJournals(this.#dir, id) : [chosen];
      if (!files.includes(chosen)) files = [chosen];
    } catch {
      return; // unreadable now: the next refresh tries again
    }
    // every journal read whole, then joined as the report joins them: in the order their runs
    // started, a resume appended to an older journal after a later one's run folded after it
    const read: { t: Tracked; events: RunEvent[] }[] = [];
    for (const file of files) {
      const t: Tracked = { file, offset: 0, partial: "", shift: { file, seqBase: 0, idBase: 0, runs: [] } };
      let events: RunEvent[] = [];
      try {
        events = await this.#readFrom(t, (await stat(file)).size);
      } catch {
        // vanished or unreadable: what was read of it stands
      }
      read.push({ t, events });
    }
    const joined = joinJournals(read.map((r) => ({ file: r.t.file, events: r.events })));
    this.#journals.push(...joined.journals);
    for (const [k, r] of read.entries()) r.t.shift = joined.shifts[k]!;
    for (const e of joined.events) this.#apply(e);
    // the journal of the last run last: only its growth is an append (`refresh`)
    const last = joined.journals.at(-1)?.file;
    this.#tracked = [...read.filter((r) => r.t.file !== last), ...read.filter((r) => r.t.file === last)].map(
      (r) => r.t,
    );
  }

  /** Reads `t` from its offset to `size`: its complete lines' events. */
  async #readFrom(t: Tracked, size: number): Promise<RunEvent[]> {
    const fh = await open(t.file, "r");
    try {
      const buf = Buffer.alloc(size - t.offset);
      const { bytesRead } = await fh.read(buf, 0, buf.length, t.offset);
      t.offset += bytesRead;
      const text = t.partial + buf.subarray(0, bytesRead).toString("utf8");
      const lines = text.split("\n");
      t.partial = lines.pop() ?? "";
      return lines.flatMap((line) => this.#line(line));
    } finally {
      await fh.close();
    }
  }

  #line(raw: string): RunEvent[] {
    const text = raw.trim();
    if (text === "") return [];
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      this.skipped++;
      return [];
    }
    if (!isRunEvent(v)) {
      this.skipped++;
      return [];
    }
    return [v];
  }

  /** Folds a line appended to the last run's journal, shifted as its run is. */
  #append(t: Tracked, e: RunEvent): void {
    if (this.#journals.length === 0 || this.#journals.at(-1)!.file !== t.file)
      this.#journals.push({ file: t.file, fromSeq: e.seq + t.shift.seqBase });
    this.#apply(shiftLine(t.shift, e));
  }

  #apply(e: RunEvent): void {
    try {
      this.#fold.apply(e);
    } catch {
      this.skipped++; // a line the fold cannot place: left out, never thrown on (it is lenient)
    }
  }
}
