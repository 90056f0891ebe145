/**
 * Issue 14, point 9: "`--dry-run | head` exits quietly on EPIPE". A reader that goes away after
 * the first lines (`head`) must not get a stack trace or an "internal error" from syncbook.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const cli = join(process.cwd(), "dist/cli/syncbook.cjs");
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "syncbook-epipe-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI, reads the first chunk of stdout and closes the pipe, like `| head -1`. */
function headOne(args: string[]): Promise<{ code: number | null; stderr: string; first: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let first = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.once("data", (d: Buffer) => {
      first = d.toString();
      child.stdout.destroy();
    });
    child.on("close", (code) => resolve({ code, stderr, first }));
  });
}

describe("a reader that goes away", () => {
  it.each([[["--dry-run"]], [["--dry-run", "--renderer", "json"]]])(
    "run %j | head: exit 0, nothing on stderr",
    async (extra) => {
      // a plan far bigger than a pipe's buffer, so the writes meet the closed pipe
      const steps = Array.from(
        { length: 600 },
        (_, i) =>
          `  - { id: wait-${i}, waitFor: { canCommit: true, lagBelow: 5 }, name: "${"a long step name ".repeat(4)}" }`,
      ).join("\n");
      writeFileSync(
        join(dir, "rb.yaml"),
        `runbook: 1\nname: big\nclusters:\n  cluster0: { topology: replicaSet }\n  cluster1: { topology: replicaSet }\ninstances: [http://127.0.0.1:27182]\nsteps:\n${steps}\n`,
      );
      const r = await headOne(["run", "rb.yaml", ...extra]);
      expect(r.first.length).toBeGreaterThan(0);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    },
  );

  it("lint --list-rules | head and schema | head: exit 0, nothing on stderr", async () => {
    for (const args of [["lint", "--list-rules"], ["schema"]]) {
      const r = await headOne(args);
      expect(r.stderr, args.join(" ")).toBe("");
      expect(r.code, args.join(" ")).toBe(0);
    }
  });
});
