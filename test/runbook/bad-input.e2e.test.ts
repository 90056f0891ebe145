/**
 * Bad input to the loader and to `syncbook lint`: a clear positioned error, exit 1 or 2, never a
 * stack trace, never a hang. And a seeded fuzz of mutated example runbooks.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lintRunbook } from "../../src/lint/index.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { mulberry32 } from "../../src/sim/prng.js";

const dir = mkdtempSync(join(tmpdir(), "syncbook-bad-"));
const CLI = join(process.cwd(), "dist/cli/syncbook.cjs");

function lintCli(content: string | Buffer): { status: number | null; stdout: string; stderr: string; ms: number } {
  const file = join(dir, `f-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, content);
  const t = Date.now();
  const r = spawnSync(process.execPath, [CLI, "lint", file, "--format", "json"], { encoding: "utf8", timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - t };
}

const bomb = [
  "a: &a [x, x, x, x, x, x, x, x, x]",
  ...Array.from(
    { length: 9 },
    (_, i) =>
      `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
  ),
].join("\n");

const CASES: [string, string | Buffer, RegExp][] = [
  ["not YAML", "runbook: 1\nname: [unclosed\n  : : :\n", /./],
  ["empty", "", /expected a mapping/],
  ["a list instead of a map", "- runbook: 1\n- name: x\n", /expected a mapping, got a list/],
  ["binary garbage", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff, 0xfe, 0x00]), /binary content/],
  [
    "a 10 MB file",
    `runbook: 1\nname: big\n# ${"x".repeat(10 * 1024 * 1024)}\n`,
    /the file is 10 MiB; a runbook is at most 1 MiB/,
  ],
  ["an alias bomb", bomb, /too many alias expansions/],
  // issue 30: a cyclic value overflowed the stack ("internal error")
  ["a self-referencing alias", "runbook: 1\nname: x\na: &a [*a]\n", /the alias \*a refers to a node that contains it/],
  ["an alias inside its own anchor's mapping", "runbook: 1\nname: x\na: &a\n  b: { c: *a }\n", /the alias \*a/],
  ["deep nesting", `runbook: 1\nname: ${"[".repeat(5000)}${"]".repeat(5000)}\n`, /nested more than 64 levels/],
];

describe("bad input to syncbook lint", () => {
  it.each(CASES)("%s: a positioned error, exit 1, no stack, no hang", (_name, content, message) => {
    const r = lintCli(content);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const out = JSON.parse(r.stdout) as {
      diagnostics: { line: number; column: number; message: string; severity: string }[];
      errors: number;
    };
    expect(out.errors).toBeGreaterThan(0);
    const d = out.diagnostics.find((x) => message.test(x.message));
    expect(d, JSON.stringify(out.diagnostics)).toBeDefined();
    expect(d?.line).toBeGreaterThanOrEqual(1);
    expect(d?.column).toBeGreaterThanOrEqual(1);
    expect(r.ms).toBeLessThan(10_000);
  });
});

describe("a self-referencing YAML alias (issue 30)", () => {
  it.each([["run"], ["run", "--dry-run"], ["status"]])(
    "%s: exit 2 with file:line:col and a hint, not an internal error",
    (...args: string[]) => {
      const file = join(dir, "cyclic.yaml");
      writeFileSync(file, "runbook: 1\nname: x\nsteps:\n  - &s { id: a, sleep: 1s, x: [*s] }\n");
      const r = spawnSync(process.execPath, [CLI, ...args, file], { encoding: "utf8", timeout: 20_000 });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr + r.stdout).toContain(`${file}:4:32`);
      expect(r.stderr + r.stdout).toMatch(/the alias \*s refers to a node that contains it/);
      expect(r.stderr + r.stdout).toMatch(/hint: An alias may only repeat a node it is not part of/);
      expect(r.stderr).not.toMatch(/internal error|Maximum call stack/);
    },
  );
});

const prng = mulberry32;

const TOKENS = [
  ":",
  "-",
  "[",
  "]",
  "{",
  "}",
  "&a",
  "*a",
  "!!binary",
  "'",
  '"',
  "\t",
  "\n",
  "  ",
  "${vars.x}",
  "${env.HOME}",
  "0x1f",
  "~",
  "null",
  "<<: *a",
  "%YAML 1.2\n---\n",
  "\u0000",
  "lagBellow",
  "1e999",
];

function mutate(text: string, rnd: () => number): string {
  let t = text;
  const n = 1 + Math.floor(rnd() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(rnd() * (t.length + 1));
    const op = Math.floor(rnd() * 4);
    if (op === 0) t = t.slice(0, at) + t.slice(at + 1 + Math.floor(rnd() * 20));
    else if (op === 1) t = t.slice(0, at) + (TOKENS[Math.floor(rnd() * TOKENS.length)] ?? "") + t.slice(at);
    else if (op === 2) {
      const lines = t.split("\n");
      const a = Math.floor(rnd() * lines.length);
      const b = Math.floor(rnd() * lines.length);
      [lines[a], lines[b]] = [lines[b] ?? "", lines[a] ?? ""];
      t = lines.join("\n");
    } else t = t.slice(0, at) + t.slice(at, at + 40) + t.slice(at);
  }
  return t;
}

describe("fuzz: mutated example runbooks", () => {
  const examples = readdirSync(join(process.cwd(), "runbooks"))
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => readFileSync(join(process.cwd(), "runbooks", f), "utf8"));
  it("400 seeded mutations: the loader and lint never throw, every finding has a position and a message", async () => {
    for (let seed = 1; seed <= 400; seed++) {
      const rnd = prng(seed);
      const text = mutate(examples[seed % examples.length] ?? "", rnd);
      let where = "load";
      try {
        const loaded = await parseRunbook(text, "fuzz.yaml", { env: "lint" });
        where = "lint";
        const all = [...loaded.diagnostics, ...lintRunbook(loaded)];
        for (const d of all) {
          expect(d.line, `seed ${seed}`).toBeGreaterThanOrEqual(1);
          expect(d.column, `seed ${seed}`).toBeGreaterThanOrEqual(1);
          expect(d.message.length, `seed ${seed}`).toBeGreaterThan(0);
        }
      } catch (err) {
        throw new Error(
          `seed ${seed} (${where}): ${err instanceof Error ? err.stack : String(err)}\n--- input ---\n${text}`,
        );
      }
    }
  });

  it("the CLI on a few mutated files: exit 0 or 1, never a crash", () => {
    for (let seed = 1000; seed < 1010; seed++) {
      const text = mutate(examples[seed % examples.length] ?? "", prng(seed));
      const file = join(dir, `fuzz-${seed}.yaml`);
      writeFileSync(file, text);
      let status = 0;
      let stderr = "";
      try {
        execFileSync(process.execPath, [CLI, "lint", file], { stdio: "pipe", timeout: 20_000 });
      } catch (err) {
        status = (err as { status: number }).status;
        stderr = String((err as { stderr: Buffer }).stderr);
      }
      expect([0, 1], `seed ${seed}: ${stderr}`).toContain(status);
      expect(stderr, `seed ${seed}`).not.toContain("internal error");
    }
  });
});
