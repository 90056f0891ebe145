/**
 * The simulator's fault book: the faults in force, their windows and their hit counts, and the
 * seeded draws that decide whether a rate fault acts on a request. It knows nothing of the
 * instances: what a fault does to one (going down, a live upgrade due) is the world's, through
 * the callbacks it gives (`FaultEffects`).
 */
import type { SimClock } from "./clock.js";
import type { Command } from "./coordinator.js";
import { faultApplies, type ActiveFault, type FaultKind, type FaultSpec } from "./faults.js";
import { streamFor, type Random } from "./prng.js";

/** A fault's target: an instance index, or the verifier. */
export type Target = number | "verifier";

export interface TransportDecision {
  reset: boolean;
  latencyMs: number;
  http500: boolean;
  nonJson: boolean;
  /** Which non-JSON answer to give (drawn from the same seeded stream). */
  variant: number;
  resetAfter: boolean;
}

/** What a fault does to the world when its window opens or closes. */
export interface FaultEffects {
  instanceCount: number;
  down(i: number): void;
  up(i: number): void;
  verifierExit(reason: string): void;
}

export class FaultBook {
  #faults: ActiveFault[] = [];
  #cancels = new Map<number, (() => void)[]>();
  #nextFaultId = 1;
  #firstStartAt: number | undefined;
  #random: Random[];
  #verifierRandom: Random;

  constructor(
    private readonly clock: SimClock,
    seed: number,
    private readonly effects: FaultEffects,
  ) {
    this.#random = Array.from({ length: effects.instanceCount }, (_, i) => streamFor(seed, i));
    this.#verifierRandom = streamFor(seed, -1);
  }

  get empty(): boolean {
    return this.#faults.length === 0;
  }

  active(kind: FaultKind, target: Target, t: number, endpoint?: string): ActiveFault[] {
    if (this.#faults.length === 0) return [];
    return this.#faults.filter((f) => f.kind === kind && faultApplies(f, target, endpoint, t));
  }

  /** The largest value of this kind in force (undefined: none). */
  value(kind: FaultKind, target: Target, t: number): number | undefined {
    const fs = this.active(kind, target, t);
    return fs.length === 0 ? undefined : Math.max(...fs.map((f) => f.value ?? 0));
  }

  /** The first fault of this kind in force, counted as having acted. */
  hit(kind: FaultKind, target: Target, t: number, endpoint?: string): ActiveFault | undefined {
    const f = this.active(kind, target, t, endpoint)[0];
    if (f) f.hits++;
    return f;
  }

  /** Draws the transport faults for one request (seeded, per target). */
  transport(target: Target, endpoint: string | undefined): TransportDecision {
    const d: TransportDecision = {
      reset: false,
      latencyMs: 0,
      http500: false,
      nonJson: false,
      variant: 0,
      resetAfter: false,
    };
    if (this.#faults.length === 0) return d;
    const t = this.clock.now();
    const rnd = target === "verifier" ? this.#verifierRandom : this.#random[target]!;
    const roll = (kind: FaultKind): boolean => {
      const f = this.active(kind, target, t, endpoint).find((x) => rnd() < (x.value ?? 1));
      if (f) f.hits++;
      return f !== undefined;
    };
    d.reset = roll("reset");
    const lat = this.active("latency", target, t, endpoint);
    d.latencyMs = lat.length ? Math.max(...lat.map((f) => f.value ?? 0)) * 1000 : 0;
    for (const f of lat) f.hits++;
    d.http500 = roll("http500");
    d.nonJson = roll("non-json");
    if (d.nonJson) d.variant = Math.floor(rnd() * 3);
    d.resetAfter = roll("reset-after");
    return d;
  }

  /** Puts a checked spec in force at t (or, with `after`, that long after the fleet's first start). */
  add(spec: FaultSpec, text: string, t: number): ActiveFault {
    const fault: ActiveFault = {
      ...spec,
      id: this.#nextFaultId++,
      text,
      from: null,
      until: Infinity,
      hits: 0,
      ...(spec.on !== undefined ? { triggered: [] } : {}),
    };
    this.#faults.push(fault);
    if (spec.after === undefined) this.#activate(fault, t);
    else if (this.#firstStartAt !== undefined) this.#activate(fault, t + spec.after);
    return fault;
  }

  /** The fleet's first accepted start: the faults waiting for it (`after=`) start counting. */
  started(t: number): void {
    if (this.#firstStartAt !== undefined) return;
    this.#firstStartAt = t;
    for (const f of this.#faults) if (f.from === null) this.#activate(f, t + (f.after ?? 0));
  }

  #activate(fault: ActiveFault, from: number): void {
    fault.from = from;
    fault.until = fault.for === undefined ? Infinity : from + fault.for;
    if (fault.kind === "verifier-exit") {
      const exit = (): void => {
        fault.hits++;
        this.effects.verifierExit(fault.message ?? "simulated exit");
      };
      if (from <= this.clock.now()) exit();
      else this.#cancels.set(fault.id, [this.clock.at(from, exit)]);
      return;
    }
    if (fault.kind !== "down") return;
    const targets = fault.instances ?? Array.from({ length: this.effects.instanceCount }, (_, i) => i);
    const cancels: (() => void)[] = [];
    cancels.push(this.clock.at(from, () => targets.forEach((i) => this.effects.down(i))));
    if (fault.until !== Infinity)
      cancels.push(this.clock.at(fault.until, () => targets.forEach((i) => this.effects.up(i))));
    this.#cancels.set(fault.id, cancels);
  }

  /** Takes a fault out of force (its timers cancelled); the removed fault, or undefined. */
  remove(id: number): ActiveFault | undefined {
    const i = this.#faults.findIndex((f) => f.id === id);
    if (i < 0) return undefined;
    const [fault] = this.#faults.splice(i, 1);
    for (const c of this.#cancels.get(id) ?? []) c();
    this.#cancels.delete(id);
    return fault;
  }

  ids(): number[] {
    return this.#faults.map((f) => f.id);
  }

  /** Copies, for listings. */
  list(): ActiveFault[] {
    return this.#faults.map((f) => ({ ...f, ...(f.triggered ? { triggered: [...f.triggered] } : {}) }));
  }

  /** identity-change faults with `on=<command>` start on the instance that accepted it. */
  trigger(i: number, command: Command): void {
    for (const f of this.#faults) {
      if (f.kind !== "identity-change" || f.on !== command) continue;
      if (f.instances !== undefined && !f.instances.includes(i)) continue;
      if (!f.triggered!.includes(i)) f.triggered!.push(i);
    }
  }

  /** drop-after-effect: does this answer get lost (seeded draw)? */
  rollDrop(i: number, t: number, command: Command): boolean {
    const f = this.active("drop-after-effect", i, t, command)[0];
    if (!f || !(this.#random[i]!() < (f.value ?? 1))) return false;
    f.hits++;
    return true;
  }
}
