/**
 * Every bench of `npm run bench` runs and measures, at its smallest (bench/run.mjs's protocol: the
 * last JSON line of stdout holds the figures, exit 0 means measured). Not a timing test: no figure
 * is compared with its budget here. Why it exists: three benches stopped working without anyone
 * noticing until a bench run (the downtime and wave benches after issue 36's lint rule, reaction and
 * runner-256 after issue 40's `loadRunbookPlugins` options, the shell baseline after issue 36's
 * first-process canWrite), and a bench that cannot run is a figure nobody has.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

interface Figure {
  name: string;
  value: number | null;
  unit: string;
  note?: string;
}

function runBench(file: string, args: string[]): Promise<{ code: number | null; figures: Figure[]; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [`bench/${file}`, "--json", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    p.on("close", (code) => {
      const line = stdout
        .trim()
        .split("\n")
        .reverse()
        .find((l) => l.startsWith("{"));
      let figures: Figure[] = [];
      try {
        figures = (JSON.parse(line ?? "{}") as { figures?: Figure[] }).figures ?? [];
      } catch {
        /* no figures: the assertion below says so, with the output */
      }
      resolve({ code, figures, out: `${stdout}\n${stderr}`.slice(-2000) });
    });
  });
}

// the smallest run of each bench that still goes through all of its code
const BENCHES: [string, string[]][] = [
  ["downtime.mjs", ["--sizes", "3", "--rounds", "1", "--drain", "300", "--commit", "300", "--no-shell"]],
  ["fanout.mjs", ["--instances", "4", "--rounds", "1"]],
  ["reaction.mjs", ["--instances", "2", "--rounds", "1", "--poll", "200"]],
  ["runner-256.mjs", ["--instances", "8", "--seconds", "2"]],
  ["sim-256.mjs", ["--instances", "8", "--seconds", "2"]],
  ["watch.mjs", ["--instances", "4", "--pages", "2", "--seconds", "2"]],
  ["wave.mjs", ["--runbooks", "2", "--max-parallel", "2"]],
];

describe("every bench runs and measures (npm run bench), at its smallest", () => {
  it.each(BENCHES)(
    "%s",
    async (file, args) => {
      const r = await runBench(file, args);
      expect(r.code, r.out).toBe(0);
      expect(r.figures.length, r.out).toBeGreaterThan(0);
      for (const f of r.figures) expect(typeof f.value, `${f.name}: ${f.note ?? ""}\n${r.out}`).toBe("number");
    },
    120_000,
  );
});
