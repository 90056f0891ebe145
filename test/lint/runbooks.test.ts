/**
 * The example runbooks (runbooks/*.yaml): each lints with zero errors and zero warnings, and
 * is ready to rehearse against the simulator (loopback instances, a verifier, the whole
 * documented cutover).
 */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadRunbook } from "../../src/runbook/index.js";
import { stepKind, type Runbook } from "../../src/runbook/types.js";
import { lintFile } from "../support/lint.js";

const dir = new URL("../../runbooks/", import.meta.url);
const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));

describe("example runbooks", () => {
  it("include at least the four kinds of cutover, the first one named rs-to-sharded.yaml", () => {
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(files).toContain("rs-to-sharded.yaml");
  });

  describe.each(files)("%s", (name) => {
    const file = fileURLToPath(new URL(name, dir));
    it("lints with zero errors and zero warnings", async () => {
      const { loader, rules } = await lintFile(file);
      expect(loader).toEqual([]);
      expect(rules.filter((d) => d.severity !== "info")).toEqual([]);
    });
    it("starts with the yaml-language-server $schema modeline", async () => {
      const { text } = await lintFile(file);
      expect(text.split("\n")[0]).toBe("# yaml-language-server: $schema=../schemas/runbook.schema.json");
    });
    it("can be rehearsed: loopback instances, a verifier, and the documented cutover steps", async () => {
      const rb = (await loadRunbook(file, { env: "lint" })).runbook as Runbook;
      expect(rb).toBeDefined();
      for (const i of rb.instances) expect(typeof i === "string" ? i : i.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(rb.verifier).toBe("http://127.0.0.1:27020");
      const kinds = rb.steps.map((s) => stepKind(s));
      const stop = rb.steps.find((s) => "stopWrites" in s);
      expect(stop && "stopWrites" in stop ? stop.stopWrites : undefined).toMatchObject({
        use: "shell",
        with: { command: expect.any(Array) },
        undo: { use: "shell" },
      });
      expect(
        rb.steps.some((s) => "waitFor" in s && s.waitFor?.canCommit === true && s.waitFor.lagBelow !== undefined),
      ).toBe(true);
      for (const k of ["verify", "confirm", "commit"] as const) expect(kinds).toContain(k);
      const commit = kinds.indexOf("commit");
      expect(rb.steps.slice(commit).some((s) => "waitFor" in s && s.waitFor?.state === "COMMITTED")).toBe(true);
      expect(kinds.indexOf("stopWrites")).toBeLessThan(commit);
    });
  });
});
