/**
 * The simulated source application's change stream, seen by one instance: the cumulative
 * number of change events E(t) as a piecewise-linear function of simulated time. The rate
 * changes only when the writes switch flips or the write rate is set, so the history is a
 * short list of breakpoints. Keeping the history (rather than only a running total) lets an
 * instance that has not been asked for a while be advanced exactly, and lets lag be computed
 * from its definition: "Seconds between the latest event timestamp seen on the source and the
 * last applied event" = now − timestamp(last applied event) = now − E⁻¹(applied).
 */
interface Point {
  t: number;
  e: number;
  rate: number;
}

/** Breakpoints kept; older ones are dropped (E⁻¹ of an event older than that clamps). */
const MAX_POINTS = 4096;

export class SourceTimeline {
  #points: Point[];

  constructor(rate: number, t0 = 0) {
    this.#points = [{ t: t0, e: 0, rate }];
  }

  /** Current per-instance event rate (events per simulated second). */
  get rate(): number {
    return this.#points[this.#points.length - 1]!.rate;
  }

  /** From time `t` on, events arrive at `rate` per second. `t` must not go backwards. */
  setRate(t: number, rate: number): void {
    const last = this.#points[this.#points.length - 1]!;
    if (rate === last.rate) return;
    const at = Math.max(t, last.t);
    const e = this.events(at);
    if (at === last.t) {
      last.rate = rate;
      return;
    }
    this.#points.push({ t: at, e, rate });
    if (this.#points.length > MAX_POINTS) this.#points.splice(0, this.#points.length - MAX_POINTS);
  }

  /** E(t): events produced up to time t. */
  events(t: number): number {
    const p = this.#segmentAt(t);
    return p.e + p.rate * Math.max(0, t - p.t);
  }

  /** E⁻¹(n): the (earliest) time at which the n-th event was produced. */
  timeOf(n: number): number {
    const pts = this.#points;
    // first point with e >= n
    let lo = 0;
    let hi = pts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pts[mid]!.e >= n) hi = mid;
      else lo = mid + 1;
    }
    if (lo === 0) return pts[0]!.t;
    const p = pts[lo - 1]!; // p.e < n, so p.rate > 0 unless n lies beyond E(now)
    return p.rate > 0 ? p.t + (n - p.e) / p.rate : p.t;
  }

  /**
   * min over breakpoints b in (t0, t1) of E(b) + A·(t1 − b): with `a0 + A·(t1−t0)` and E(t1),
   * the exact number of events applied by t1 by an applier of capacity A that starts at t0
   * (the queue's reflection formula; the minimum of a piecewise-linear function is at a
   * breakpoint or an end).
   */
  minThroughBreakpoints(t0: number, t1: number, applyRate: number): number {
    let best = Infinity;
    const pts = this.#points;
    for (let i = pts.length - 1; i >= 0; i--) {
      const p = pts[i]!;
      if (p.t >= t1) continue;
      if (p.t <= t0) break;
      best = Math.min(best, p.e + applyRate * (t1 - p.t));
    }
    return best;
  }

  #segmentAt(t: number): Point {
    const pts = this.#points;
    for (let i = pts.length - 1; i > 0; i--) if (pts[i]!.t <= t) return pts[i]!;
    return pts[0]!;
  }
}
