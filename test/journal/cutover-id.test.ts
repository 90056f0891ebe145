/**
 * A cutover's id is its pager incident (PagerDuty's `dedup_key`) and its trace id (issue 37,
 * point 1): two cutovers must never share one. It was the start time to the second and the
 * runbook's hash, so a `--new-cutover` in the same second as the run before it (seen in
 * test/run/one-cutover.e2e.test.ts) was the same cutover to every pager and trace backend.
 */
import { describe, expect, it } from "vitest";
import { cutoverId, cutoverOfRun, newCutoverId } from "../../src/journal/cutover.js";
import { traceIdOf } from "../../src/trace/ids.js";

const at = Date.UTC(2026, 10, 29, 3, 0, 0, 120);
const hash = "sha256:0123456789abcdef";

describe("cutover ids", () => {
  it("two new cutovers of one runbook in the same millisecond have two ids and two trace ids", () => {
    const ids = new Set(Array.from({ length: 200 }, () => newCutoverId(at, hash)));
    expect(ids.size).toBe(200);
    expect(new Set([...ids].map(traceIdOf)).size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^20261129T030000Z-01234567-[0-9a-f]{8}$/);
  });

  it("a run.started that carries its id keeps it; one written before ids were journaled is derived as its runner did", () => {
    const id = newCutoverId(at, hash);
    expect(cutoverOfRun({ cutover: id, at: at + 5000, hash })).toBe(id);
    expect(cutoverOfRun({ at, hash })).toBe(cutoverId(at, hash));
    expect(cutoverId(at, hash)).toBe("20261129T030000Z-01234567");
  });
});
