/**
 * The wave file and the wave's rules (issue 28): each rule with a fixture (test/fixtures/wave/),
 * at the wave file's line and column; bad YAML and wrong types with positions and hints; the
 * order (stages, cycles) and how instance URLs are told apart.
 */
import { describe, expect, it } from "vitest";
import { findCycle, stagesOf } from "../../src/wave/graph.js";
import { serviceKey as normalizeInstanceUrl } from "../../src/instance-identity.js";
import { lintWave, WAVE_RULES } from "../../src/wave/lint.js";
import { parseWave } from "../../src/wave/load.js";

const fixture = (name: string): string => `test/fixtures/wave/${name}.wave.yaml`;

/** The wave file's own findings (the runbooks' lint is lint's to test). */
async function waveFindings(name: string) {
  const r = await lintWave(fixture(name));
  return { ...r, own: r.diagnostics.filter((d) => d.file === fixture(name) && d.severity !== "info") };
}

describe("the example wave and a clean fixture", () => {
  it("lint clean and plan: stage 0 without after, else one more than the highest stage it comes after", async () => {
    const r = await lintWave(fixture("ok"));
    expect(r.diagnostics.filter((d) => d.severity !== "info")).toEqual([]);
    expect(r.files).toEqual([fixture("ok"), ...["a", "b", "c", "d"].map((n) => `test/fixtures/wave/${n}.yaml`)]);
    expect(r.plan?.items.map((i) => [i.name, i.stage, i.after])).toEqual([
      ["alpha", 0, []],
      ["bravo", 0, []],
      ["charlie", 1, ["alpha"]],
      ["delta", 2, ["charlie", "bravo"]],
    ]);
    expect(r.plan?.maxParallel).toBe(2);
  });
  it("waves/example.yaml lints clean, its runbooks found relative to it", async () => {
    const r = await lintWave("waves/example.yaml");
    expect(r.diagnostics.filter((d) => d.severity !== "info")).toEqual([]);
    expect(r.plan?.items.map((i) => i.runbook)).toEqual(
      ["orders", "inventory", "billing", "reporting"].map((n) => `runbooks/wave/${n}.yaml`),
    );
  });
});

describe("every wave rule, at its place in the wave file", () => {
  it.each([
    ["missing", "wave-runbook-missing", 6, 13, /nope\.yaml: no such file/],
    ["duplicate-name", "wave-duplicate-name", 6, 5, /alpha-again\.yaml is named `alpha`, as a\.yaml/],
    ["duplicate-path", "wave-duplicate-name", 6, 5, /\.\/a\.yaml is listed twice/],
    ["unknown-name", "wave-unknown-name", 6, 29, /no runbook of the wave is named `alpa`; did you mean `alpha`\?/],
    ["cycle", "wave-after-cycle", 6, 29, /`after` cycle: bravo → delta → charlie → bravo/],
    ["self", "wave-after-cycle", 5, 29, /`alpha` comes after itself/],
    [
      "env-unmapped",
      "wave-env-unmapped",
      8,
      5,
      /uses-env\.yaml \(`foxtrot`\) uses \$\{env\.SWITCH_TOKEN\}, which the wave's `secrets:` does not map/,
    ],
    ["shared-instance", "wave-shared-instance", 6, 5, /same-instance\.yaml \(`echo`\) drives .*a\.yaml \(`alpha`\)/],
  ] as const)("%s: %s at %i:%i", async (name, rule, line, column, message) => {
    const { own, plan } = await waveFindings(name);
    const found = own.filter((d) => d.rule === rule);
    expect(found, JSON.stringify(own)).toHaveLength(1);
    expect(found[0]).toMatchObject({ line, column, severity: "error" });
    expect(found[0]?.message).toMatch(message);
    expect(found[0]?.hint).toBeTruthy();
    // a wave that breaks a rule is never planned
    expect(plan).toBeUndefined();
  });

  it("every rule id in the catalogue has a fixture above", () => {
    expect(WAVE_RULES.map((r) => r.id).sort()).toEqual(
      [
        "wave-after-cycle",
        "wave-duplicate-name",
        "wave-env-unmapped",
        "wave-runbook-missing",
        "wave-shared-instance",
        "wave-unknown-name",
      ].sort(),
    );
  });

  it("a shared instance's password never reaches the message", async () => {
    const { own } = await waveFindings("shared-instance");
    expect(JSON.stringify(own)).not.toContain("hunter2");
  });

  it("a runbook that does not lint: its own findings, in its own file, and no plan", async () => {
    const r = await lintWave(fixture("bad-runbook"));
    const errs = r.diagnostics.filter((d) => d.severity === "error");
    expect(errs.length).toBeGreaterThan(0);
    expect(errs.every((d) => d.file === "test/fixtures/wave/bad-runbook.yaml")).toBe(true);
    expect(errs[0]).toMatchObject({ line: 3, rule: "schema" });
    expect(r.plan).toBeUndefined();
  });
});

describe("the wave file itself", () => {
  it("bad YAML: a yaml finding at its line and column, with a hint", async () => {
    const { own, plan } = await waveFindings("bad-yaml");
    expect(own).toHaveLength(1);
    // at the `[` never closed, not the line after it where the parser noticed
    expect(own[0]).toMatchObject({ rule: "yaml", line: 4, column: 11, severity: "error" });
    expect(own[0]?.message).toMatch(
      /this `\[` is never closed \(the parser noticed at line 5, column 1: Flow sequence/,
    );
    expect(own[0]?.hint).toMatch(/End the list with `\]`/);
    expect(plan).toBeUndefined();
  });
  it("wrong types: each at its value, with the schema's description as the hint and did-you-mean", async () => {
    const { own } = await waveFindings("wrong-types");
    expect(own.map((d) => [d.line, d.column, d.message])).toEqual([
      [3, 14, "`maxParallel`: expected an integer, got string `two`"],
      [6, 13, "`path`: expected a string, got number `3`"],
      [7, 21, "`afer` is not a runbooks entry field; did you mean `after`?"],
    ]);
    expect(own[0]?.hint).toMatch(/how many runbooks may cut over at once/i);
    expect(own.every((d) => d.rule === "schema")).toBe(true);
  });
  it.each([
    ["wave: 2\nname: w\nmaxParallel: 1\nrunbooks: [a.yaml]\n", 1, 7, /`wave`: expected `1`, got `2`/],
    ["wave: 1\nname: w\nmaxParallel: 0\nrunbooks: [a.yaml]\n", 3, 14, /`maxParallel`/],
    ["wave: 1\nname: w\nmaxParallel: 1\nrunbooks: []\n", 4, 11, /`runbooks` must not be empty/],
    ["wave: 1\nname: w\nrunbooks: [a.yaml]\n", 1, 1, /missing the required field `maxParallel`/],
    [
      "wave: 1\nname: w\nmaxParallel: 1\nrunbooks:\n  - { path: a.yaml, after: [x, x] }\n",
      5,
      28,
      /lists the same value twice/,
    ],
    ["wave: 1\nname: w\nmaxParallel: 1\nmaxParalel: 2\nrunbooks: [a.yaml]\n", 4, 1, /did you mean `maxParallel`/],
    ["wave: 1\nwave: 1\nname: w\nmaxParallel: 1\nrunbooks: [a.yaml]\n", 2, 1, /unique|duplicate/i],
  ])("%j → %i:%i", async (text, line, column, message) => {
    const w = await parseWave(text, "w.yaml");
    expect(w.wave).toBeUndefined();
    const d = w.diagnostics.find((x) => x.severity === "error");
    expect(d, JSON.stringify(w.diagnostics)).toMatchObject({ file: "w.yaml", line, column });
    expect(d?.message).toMatch(message);
    expect(d?.hint).toBeTruthy();
  });
  it("refuses a file over 1 MiB, its size in the one byte format", async () => {
    const w = await parseWave("wave: 1\n", "w.yaml", 10 * 1024 * 1024);
    expect(w.wave).toBeUndefined();
    expect(w.diagnostics[0]).toMatchObject({
      file: "w.yaml",
      line: 1,
      column: 1,
      message: "the file is 10 MiB: a wave file is at most 1 MiB",
      hint: "Split it.",
    });
  });
  it("resolves paths relative to the wave file", async () => {
    const w = await parseWave(
      "wave: 1\nname: w\nmaxParallel: 1\nrunbooks: [x.yaml, { path: sub/y.yaml }]\n",
      "waves/w.yaml",
    );
    expect(w.entries.map((e) => [e.path, e.file])).toEqual([
      ["x.yaml", "waves/x.yaml"],
      ["sub/y.yaml", "waves/sub/y.yaml"],
    ]);
  });
});

describe("order", () => {
  it("finds a cycle and names it in order, the first name repeated", () => {
    expect(
      findCycle([
        { name: "a", after: [] },
        { name: "b", after: ["c"] },
        { name: "c", after: ["b"] },
      ]),
    ).toEqual(["b", "c", "b"]);
    expect(findCycle([{ name: "a", after: ["a"] }])).toEqual(["a", "a"]);
    expect(findCycle([{ name: "a", after: ["zzz"] }])).toBeUndefined();
  });
  it("stages: a chain of 100 counts up, a diamond takes the longest path", () => {
    const chain = Array.from({ length: 100 }, (_, i) => ({ name: `r${i}`, after: i ? [`r${i - 1}`] : [] }));
    expect(stagesOf(chain).get("r99")).toBe(99);
    const diamond = stagesOf([
      { name: "d", after: ["b", "c"] },
      { name: "a", after: [] },
      { name: "b", after: ["a"] },
      { name: "c", after: ["b"] },
    ]);
    expect(Object.fromEntries(diamond)).toEqual({ a: 0, b: 1, c: 2, d: 3 });
  });
});

describe("instance URLs are told apart as fleets are", () => {
  it.each([
    ["http://127.0.0.1:27182", "http://localhost:27182/"],
    ["http://user:secret-password@127.0.0.1:27182", "http://127.0.0.1:27182"],
    ["http://HOST.example:80", "http://host.example"],
    ["https://h.example", "https://h.example:443/"],
    ["http://[::1]:27182", "http://127.0.0.2:27182"],
  ])("%s is %s", (a, b) => {
    expect(normalizeInstanceUrl(a)).toBe(normalizeInstanceUrl(b));
    expect(normalizeInstanceUrl(a)).toBeDefined();
  });
  it.each([
    ["http://127.0.0.1:27182", "http://127.0.0.1:27183"],
    ["http://127.0.0.1:27182", "https://127.0.0.1:27182"],
    ["http://a.example:1", "http://b.example:1"],
    ["http://h.example:1/x", "http://h.example:1/y"],
  ])("%s is not %s", (a, b) => {
    expect(normalizeInstanceUrl(a)).not.toBe(normalizeInstanceUrl(b));
  });
  it("a placeholder or a non-URL is not judged", () => {
    expect(normalizeInstanceUrl("${env.URL}")).toBeUndefined();
    expect(normalizeInstanceUrl("mongodb://h:1")).toBeUndefined();
  });
});
