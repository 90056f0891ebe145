/**
 * Issue 41, point 4: lint of many runbooks shares them between two threads (src/lint/run.ts: from
 * `WORKER_FROM_FILES` files, pieces of `CHUNK_FILES` files, each thread taking the next when done;
 * the worker is handed the first two). The built CLI must report exactly what one thread would:
 * every file's findings, in file order, and a file it cannot read as a usage error (exit 2) naming
 * that file, the first such file when there are several, whichever thread met it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { CHUNK_FILES, WORKER_FROM_FILES, pieces } from "../../src/lint/run.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const cli = process.env.SYNCBOOK_TEST_CLI ?? join(root, "dist/cli/syncbook.cjs");
const N = WORKER_FROM_FILES + 40;
const name = (i: number): string => `runbook-${String(i).padStart(4, "0")}.yaml`;

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** N runbooks (the examples, round-robin), the ones in `broken` with a key the format does not have. */
function folder(broken: number[]): string {
  const dir = mkdtempSync(join(tmpdir(), "syncbook-many-"));
  dirs.push(dir);
  const examples = readdirSync(join(root, "runbooks"))
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => readFileSync(join(root, "runbooks", f), "utf8"));
  for (let i = 0; i < N; i++) {
    let text = examples[i % examples.length]!.replace(/^name: .*$/m, `name: many-${i}`);
    if (broken.includes(i)) text = text.replace(/^name: .*$/m, (l) => `${l}\nnotAKey: 1`);
    writeFileSync(join(dir, name(i)), text);
  }
  return dir;
}

function lint(dir: string) {
  const r = spawnSync(process.execPath, [cli, "lint", dir, "--format", "json"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the pieces of work", () => {
  it("cover every file once, in order, 25 at most, the last ones a few files each", () => {
    for (const n of [1, 4, 5, 24, 25, 26, 199, 200, 240, 1000, 1001]) {
      const p = pieces(n);
      expect(p[0]![0], `${n}`).toBe(0);
      expect(p.at(-1)![1], `${n}`).toBe(n);
      for (let i = 1; i < p.length; i++) expect(p[i]![0]).toBe(p[i - 1]![1]);
      for (const [a, b] of p) expect(b - a).toBeGreaterThan(0);
      for (const [a, b] of p) expect(b - a).toBeLessThanOrEqual(CHUNK_FILES);
      // whichever thread ends first waits for a small piece, not a whole one
      if (n >= 200) expect(p.at(-1)![1] - p.at(-1)![0]).toBeLessThanOrEqual(5);
    }
    expect(
      pieces(1000)
        .slice(0, 30)
        .every(([a, b]) => b - a === CHUNK_FILES),
    ).toBe(true);
  });
});

describe(`lint of ${N} runbooks (two threads)`, () => {
  it("reports the findings of files in both halves, in file order", () => {
    const dir = folder([3, N - 5]);
    const r = lint(dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { diagnostics: { file: string; severity: string }[] };
    const files = out.diagnostics.filter((d) => d.severity === "error").map((d) => d.file.split("/").at(-1));
    expect([...new Set(files)]).toEqual([name(3), name(N - 5)]);
    // in file order, as one thread gives them
    const all = out.diagnostics.map((d) => d.file);
    expect(all).toEqual([...all].sort());
  });

  it("two files it cannot read, the first in the worker's first piece, the other in this thread's: the first is named", () => {
    const dir = folder([]);
    for (const i of [1, 2 * CHUNK_FILES + 3]) {
      rmSync(join(dir, name(i)));
      symlinkSync(join(dir, "missing.txt"), join(dir, name(i)));
    }
    const r = lint(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(name(1));
    expect(r.stderr).not.toContain(name(2 * CHUNK_FILES + 3));
  });

  it("a file it cannot read near the end: exit 2, naming it", () => {
    const dir = folder([]);
    rmSync(join(dir, name(N - 2)));
    symlinkSync(join(dir, "missing.txt"), join(dir, name(N - 2)));
    const r = lint(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(name(N - 2));
    expect(r.stderr).toContain("ENOENT");
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("a folder of many YAML files, few of them runbooks: those are linted (the worker started for the folder is stopped)", () => {
    const dir = folder([]);
    // all but 3 are not runbooks: no top-level `runbook:` key
    for (let i = 3; i < N; i++) writeFileSync(join(dir, name(i)), `services:\n  web${i}:\n    image: nginx\n`);
    const started = Date.now();
    const r = lint(dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { errors: number; diagnostics: { file: string }[] };
    expect(out.errors).toBe(0);
    // the examples each have a finding (an info): the three runbooks, and nothing else, were linted
    expect([...new Set(out.diagnostics.map((d) => d.file.split("/").at(-1)))]).toEqual([name(0), name(1), name(2)]);
    expect(Date.now() - started).toBeLessThan(10_000); // the CLI's linger limit: nothing kept it alive
  });

  it("a folder of many YAML files, none a runbook: exit 2 with the usual message (the worker started for it is stopped)", () => {
    const dir = folder([]);
    for (let i = 0; i < N; i++) writeFileSync(join(dir, name(i)), "services: {}\n");
    const started = Date.now();
    const r = lint(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no runbooks in folder ${dir} (${N} YAML file(s) without a top-level \`runbook:\` key`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
