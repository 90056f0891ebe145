/**
 * The one retry policy (src/retry.ts) and its three users' policies, enumerated: the pauses and
 * the "again?" each had before it moved there (sendHttp, the notifiers' deliveries, the runner's
 * fleet read), so that moving them changed nothing.
 */
import { describe, expect, it } from "vitest";
import { ServiceError, TransportError } from "../src/api/index.js";
import { deliveryRetry } from "../src/plugin/deliveries.js";
import { httpRetry } from "../src/plugin/http.js";
import { retriesAfter, retryPauseMs, retryWait, type RetryPolicy } from "../src/retry.js";
import { fleetReadRetry } from "../src/steps/kit/fleet-ops.js";
import type { InstanceSample } from "../src/fleet/index.js";
import type { Progress } from "../src/api/index.js";

const pauses = <F>(p: RetryPolicy<F>, n: number, random?: () => number): number[] =>
  Array.from({ length: n }, (_, i) => retryPauseMs(p, i, random));

const policy = (o: Partial<RetryPolicy<string>> = {}): RetryPolicy<string> => ({
  attempts: 4,
  baseMs: 100,
  capMs: 1_000,
  jitter: "none",
  retryable: (f) => f !== "fatal",
  ...o,
});

describe("the retry policy", () => {
  it("pauses the base first, then doubles up to the cap", () => {
    expect(pauses(policy(), 7)).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
    // far past 2^1024 the doubling is Infinity, and the cap still holds
    expect(retryPauseMs(policy(), 2_000)).toBe(1_000);
  });

  it("a base above the cap is the first pause as written, the cap the rest", () => {
    expect(pauses(policy({ baseMs: 5_000 }), 3)).toEqual([5_000, 1_000, 1_000]);
    expect(pauses(policy({ baseMs: 0 }), 3)).toEqual([0, 0, 0]);
  });

  it("full jitter: random below each ceiling", () => {
    const p = policy({ jitter: "full" });
    expect(pauses(p, 6, () => 0.5)).toEqual([50, 100, 200, 400, 500, 500]);
    expect(pauses(p, 3, () => 0)).toEqual([0, 0, 0]);
    const top = pauses(p, 5, () => 0.999999).map(Math.round);
    expect(top).toEqual([100, 200, 400, 800, 1_000]);
    // the default random draws below the ceiling
    for (let i = 0; i < 50; i++) {
      const ms = retryPauseMs(p, 3);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(800);
    }
  });

  it("no jitter ignores random", () => {
    expect(pauses(policy(), 3, () => 0)).toEqual([100, 200, 400]);
  });

  it("retries a retryable failure while attempts are left; never one that is not", () => {
    const p = policy();
    expect([1, 2, 3, 4, 5].map((n) => retriesAfter(p, "flaky", n))).toEqual([true, true, true, false, false]);
    expect([1, 2, 3].map((n) => retriesAfter(p, "fatal", n))).toEqual([false, false, false]);
    expect(retriesAfter(policy({ attempts: 1 }), "flaky", 1)).toBe(false);
    expect(retriesAfter(policy({ attempts: Infinity }), "flaky", 1e9)).toBe(true);
  });

  it("a wait ends at its pause, at once on an aborted signal, and at the abort mid-way; it never rejects", async () => {
    let t0 = performance.now();
    await retryWait(60, undefined);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55);

    const gone = new AbortController();
    gone.abort(new Error("Ctrl-C"));
    t0 = performance.now();
    await expect(retryWait(60_000, gone.signal)).resolves.toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(1_000);

    const later = new AbortController();
    setTimeout(() => later.abort(new Error("drain bound")), 30);
    t0 = performance.now();
    await expect(retryWait(60_000, later.signal)).resolves.toBeUndefined();
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe("its users' policies, as they were before they moved here", () => {
  it("sendHttp: `retries` more attempts, `retryDelay` (default 1 s) doubled up to 30 s, no jitter", () => {
    expect(httpRetry({}).attempts).toBe(1);
    expect(httpRetry({ retries: 3 }).attempts).toBe(4);
    expect(httpRetry({ retries: 2.7 }).attempts).toBe(3);
    expect(httpRetry({ retries: -2 }).attempts).toBe(1);
    expect(pauses(httpRetry({ retries: 9 }), 7)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(pauses(httpRetry({ retryDelayMs: 500 }), 3)).toEqual([500, 1_000, 2_000]);
    // a runbook's retryDelay above 30 s is its first pause; the doubled ones stop at 30 s
    expect(pauses(httpRetry({ retryDelayMs: 60_000 }), 3)).toEqual([60_000, 30_000, 30_000]);
    expect(httpRetry({}).jitter).toBe("none");
  });

  it("sendHttp retries no answer, 408, 429 and 5xx; no other status (a 4xx will not get better)", () => {
    const p = httpRetry({ retries: 1 });
    expect(p.retryable({ status: undefined })).toBe(true);
    const retried: number[] = [];
    for (let status = 100; status <= 599; status++) if (p.retryable({ status })) retried.push(status);
    expect(retried).toEqual([408, 429, ...Array.from({ length: 100 }, (_, i) => 500 + i)]);
  });

  it("deliveries: 1, 2, 4, then 8 s apart with no count (the entry's budget ends them), no jitter", () => {
    const p = deliveryRetry("resend");
    expect(p.attempts).toBe(Infinity);
    expect(pauses(p, 7)).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000]);
    expect(p.jitter).toBe("none");
  });

  it("deliveries retry every failure but one that may have arrived at a notifier that never sends twice", () => {
    const table = (["resend", "skip"] as const).flatMap((policy) =>
      [undefined, false, true].map((inDoubt) => [policy, inDoubt, deliveryRetry(policy).retryable({ inDoubt })]),
    );
    expect(table).toEqual([
      ["resend", undefined, true],
      ["resend", false, true],
      ["resend", true, true],
      ["skip", undefined, true],
      ["skip", false, true],
      ["skip", true, false],
    ]);
  });

  it("the fleet read: no count (its give-up time ends it), full jitter below 0.5 s doubling to 10 s", () => {
    const p = fleetReadRetry(true);
    expect(p.attempts).toBe(Infinity);
    expect(p.jitter).toBe("full");
    expect(pauses(p, 7, () => 0.999999).map(Math.round)).toEqual([500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
    expect(pauses(p, 3, () => 0)).toEqual([0, 0, 0]);
  });

  it("the fleet read retries an instance whose progress failed, and one INITIALIZING unless told not to settle", () => {
    const u = "http://127.0.0.1:27182";
    const ref = { index: 0, url: u } as InstanceSample["ref"];
    const at = (state: string): InstanceSample => ({ ref, progress: { state } as Progress });
    const samples: [string, InstanceSample][] = [
      ["transport", { ref, error: new TransportError(u, "progress", "connect", "refused", { requestSent: false }) }],
      ["service", { ref, error: new ServiceError(u, "progress", "NotReady", "starting", 400) }],
      ...["INITIALIZING", "IDLE", "RUNNING", "PAUSED", "COMMITTING", "COMMITTED", "REVERSING"].map(
        (s): [string, InstanceSample] => [s, at(s)],
      ),
    ];
    const row = (settle: boolean) =>
      samples.filter(([, s]) => fleetReadRetry(settle).retryable(s)).map(([name]) => name);
    expect(row(true)).toEqual(["transport", "service", "INITIALIZING"]);
    expect(row(false)).toEqual(["transport", "service"]);
  });
});
