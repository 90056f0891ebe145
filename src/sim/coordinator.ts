/**
 * Multi-instance consistency. The spec: "When several service instances sync between sharded
 * clusters, identical API commands must be sent to every instance." The simulator holds a
 * fleet to it:
 * - `commit` and `reverse` block (facts: "`commit` and `reverse` block until they have been
 *   called on every instance"): an instance that receives one joins the command's round and
 *   waits; when the last instance has received it, every instance applies it at the same
 *   simulated time and every waiting answer is sent. One instance never commits alone, so such
 *   a round is never a fleet error, however long it stays open (it is listed in `openRounds`);
 * - any other state-changing command (start, pause, resume) accepted by some instances opens
 *   a round; if the round has not been accepted by every instance within the grace window
 *   (wall time, default 2 s: it is about how fast a runner broadcasts, not about the simulated
 *   sync), the fleet is in error;
 * - every accepted start body must be identical (same JSON, key order aside).
 * Only accepted commands count: a refused one changes nothing, so it cannot split the fleet
 * (and a runner may resend a command to the one instance that did not take it, within the
 * window). Rounds are checked lazily, on every request and on every /sim/state read.
 *
 * A fleet error is reported in /sim/state `fleetErrors` and makes the verifier fail (one failed
 * task per error): the destination is not a consistent copy. Progress answers are left as the
 * spec describes them; the divergence is visible there only as instances in different states.
 */
export type Command = "start" | "commit" | "pause" | "resume" | "reverse";

export interface FleetError {
  command: Command;
  message: string;
  /** Instances that accepted the command (for a start body mismatch: the two that differ). */
  accepted: number[];
  missing: number[];
  /** Wall clock time the error was found (ISO). */
  at: string;
}

/** Canonical JSON (sorted keys), to compare start bodies. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/** Commands that block until every instance has received them. */
export const BLOCKING: readonly Command[] = ["commit", "reverse"];

export class FleetCoordinator {
  readonly errors: FleetError[] = [];
  #rounds = new Map<Command, { opened: number; accepted: Set<number> }>();
  #blocking = new Map<Command, { opened: number; joined: Set<number> }>();
  #startBody: { json: string; from: number } | undefined;

  constructor(
    private readonly size: number,
    private readonly graceMs: number,
    private readonly wallMs: () => number = () => performance.now(),
  ) {}

  /** An instance accepted a command. */
  accepted(index: number, command: Command, body?: unknown): void {
    this.sweep();
    if (command === "start") {
      const json = canonicalJson(body);
      if (!this.#startBody) this.#startBody = { json, from: index };
      else if (this.#startBody.json !== json) {
        this.#error(
          command,
          `start bodies differ: instance ${index} got a different body than instance ${this.#startBody.from} (identical commands must be sent to every instance)`,
          [this.#startBody.from, index],
          [],
        );
      }
    }
    if (this.size <= 1) return;
    let round = this.#rounds.get(command);
    if (!round) {
      round = { opened: this.wallMs(), accepted: new Set() };
      this.#rounds.set(command, round);
    }
    round.accepted.add(index);
    if (round.accepted.size === this.size) this.#rounds.delete(command);
  }

  /**
   * An instance received a blocking command. Returns the instances to apply it to when this was
   * the last one (the round then closes), undefined while others are still missing.
   */
  join(index: number, command: Command): number[] | undefined {
    let round = this.#blocking.get(command);
    if (!round) {
      round = { opened: this.wallMs(), joined: new Set() };
      this.#blocking.set(command, round);
    }
    round.joined.add(index);
    if (round.joined.size < this.size) return undefined;
    this.#blocking.delete(command);
    return [...round.joined].sort((a, b) => a - b);
  }

  /** An instance that went down drops out of the blocking rounds it had joined (its connection is gone). */
  leave(index: number): Command[] {
    const left: Command[] = [];
    for (const [command, round] of this.#blocking) {
      if (round.joined.delete(index)) left.push(command);
      if (round.joined.size === 0) this.#blocking.delete(command);
    }
    return left;
  }

  /** Has this instance joined the open round of this blocking command? */
  joined(index: number, command: Command): boolean {
    return this.#blocking.get(command)?.joined.has(index) ?? false;
  }

  /** Closes the rounds whose grace window has passed. */
  sweep(): void {
    if (this.#rounds.size === 0) return;
    const now = this.wallMs();
    for (const [command, round] of this.#rounds) {
      if (now - round.opened <= this.graceMs) continue;
      this.#rounds.delete(command);
      const accepted = [...round.accepted].sort((a, b) => a - b);
      const missing = Array.from({ length: this.size }, (_, i) => i).filter((i) => !round.accepted.has(i));
      this.#error(
        command,
        `${command} was accepted by instance(s) ${accepted.join(", ")} but not by ${missing.join(", ")} within ${this.graceMs} ms (identical commands must be sent to every instance)`,
        accepted,
        missing,
      );
    }
  }

  /** Rounds still open (for /sim/state). */
  openRounds(): { command: Command; accepted: number[]; ageMs: number; blocking?: true }[] {
    const now = this.wallMs();
    return [
      ...[...this.#rounds].map(([command, r]) => ({
        command,
        accepted: [...r.accepted].sort((a, b) => a - b),
        ageMs: Math.round(now - r.opened),
      })),
      ...[...this.#blocking].map(([command, r]) => ({
        command,
        accepted: [...r.joined].sort((a, b) => a - b),
        ageMs: Math.round(now - r.opened),
        blocking: true as const,
      })),
    ];
  }

  #error(command: Command, message: string, accepted: number[], missing: number[]): void {
    this.errors.push({ command, message, accepted, missing, at: new Date().toISOString() });
  }
}
