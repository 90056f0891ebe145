/**
 * Simulated time. `now()` is simulated seconds since the simulator started; it runs
 * `timeScale` simulated seconds per wall second (`1` is real time, `0` freezes it, which tests
 * use together with `advance()` to step the model deterministically).
 *
 * The model is evaluated lazily from `now()` on each request, so the clock needs no tick.
 * The only timers are the few scheduled actions that must happen without a request (an
 * instance going down at a given simulated time): they share one wall-clock timer, re-armed
 * whenever the scale changes or time jumps.
 */
export class SimClock {
  #wallAnchor: number;
  #simAnchor = 0;
  #scale: number;
  #timers: { at: number; seq: number; fn: () => void }[] = [];
  #seq = 0;
  #handle: ReturnType<typeof setTimeout> | undefined;
  #disposed = false;

  constructor(
    timeScale: number,
    private readonly wallMs: () => number = () => performance.now(),
  ) {
    SimClock.checkScale(timeScale);
    this.#scale = timeScale;
    this.#wallAnchor = wallMs();
  }

  static checkScale(x: number): void {
    if (!Number.isFinite(x) || x < 0 || x > 1e6) throw new RangeError(`invalid time scale ${x} (0 ≤ x ≤ 1000000)`);
  }

  /** Simulated seconds since start. */
  now(): number {
    return this.#simAnchor + ((this.wallMs() - this.#wallAnchor) / 1000) * this.#scale;
  }

  get timeScale(): number {
    return this.#scale;
  }

  setTimeScale(x: number): void {
    SimClock.checkScale(x);
    this.#simAnchor = this.now();
    this.#wallAnchor = this.wallMs();
    this.#scale = x;
    this.#arm();
  }

  /**
   * Jumps simulated time forward by `seconds`. Scheduled actions on the way run at their own
   * time (the clock stops there first), so a jump is the same as waiting.
   */
  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`invalid advance ${seconds}`);
    const target = this.now() + seconds;
    while (this.#timers.length > 0 && this.#timers[0]!.at <= target && !this.#disposed) {
      this.#setNow(Math.max(this.now(), this.#timers[0]!.at));
      const t = this.#timers.shift()!;
      t.fn();
    }
    this.#setNow(Math.max(this.now(), target));
    this.#fire();
  }

  #setNow(t: number): void {
    this.#simAnchor = t;
    this.#wallAnchor = this.wallMs();
  }

  /** Wall milliseconds until simulated time `t` (Infinity when the clock is frozen). */
  wallMsUntil(t: number): number {
    const d = t - this.now();
    if (d <= 0) return 0;
    return this.#scale === 0 ? Infinity : (d / this.#scale) * 1000;
  }

  /** Runs `fn` once simulated time reaches `t`. Returns a cancel function. */
  at(t: number, fn: () => void): () => void {
    const timer = { at: t, seq: this.#seq++, fn };
    this.#timers.push(timer);
    this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.#fire();
    return () => {
      const i = this.#timers.indexOf(timer);
      if (i >= 0) this.#timers.splice(i, 1);
      this.#arm();
    };
  }

  dispose(): void {
    this.#disposed = true;
    this.#timers = [];
    if (this.#handle) clearTimeout(this.#handle);
    this.#handle = undefined;
  }

  #fire(): void {
    const now = this.now();
    while (this.#timers.length > 0 && this.#timers[0]!.at <= now && !this.#disposed) {
      const t = this.#timers.shift()!;
      t.fn();
    }
    this.#arm();
  }

  #arm(): void {
    if (this.#handle) clearTimeout(this.#handle);
    this.#handle = undefined;
    const first = this.#timers[0];
    if (!first || this.#disposed) return;
    const ms = this.wallMsUntil(first.at);
    if (ms === Infinity) return;
    // +1 ms: a timer may fire a fraction of a millisecond early; #fire re-arms if so.
    this.#handle = setTimeout(() => this.#fire(), Math.min(Math.ceil(ms) + 1, 2 ** 31 - 1));
    this.#handle.unref();
  }
}
