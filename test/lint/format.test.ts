import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/diagnostics.js";
import { formatDiagnostics } from "../../src/lint/format/index.js";
import { assertWellFormedXml } from "../support/xml.js";

const text = [
  "runbook: 1",
  "name: x",
  "steps:",
  "  - start:",
  "      source: cluster0",
  "      destination: cluster0",
  "",
].join("\n");
const diags: Diagnostic[] = [
  {
    file: "runbooks/a.yaml",
    line: 6,
    column: 20,
    endLine: 6,
    endColumn: 28,
    rule: "cluster-same",
    severity: "error",
    message: "source and destination are both `cluster0`: a sync needs two, different clusters.",
    hint: "Use cluster1 & cluster0 <swap>.",
  },
  {
    file: "runbooks/a.yaml",
    line: 4,
    column: 5,
    rule: "instance-insecure",
    severity: "warning",
    message: "100% plain\nhttp",
    hint: "tunnel",
  },
  {
    file: "runbooks/a.yaml",
    line: 1,
    column: 1,
    rule: "build-indexes-never",
    severity: "info",
    message: "fyi",
    hint: "",
  },
];
const input = {
  diagnostics: diags,
  files: ["runbooks/a.yaml", "runbooks/clean.yaml"],
  sources: new Map([["runbooks/a.yaml", text]]),
};

describe("json format", () => {
  it('prints {"diagnostics":[{"file","line","column","rule","severity","message","hint"}],"errors":N,"warnings":N}', () => {
    const out = JSON.parse(formatDiagnostics("json", input));
    expect(Object.keys(out)).toEqual(["diagnostics", "errors", "warnings"]);
    expect(out.errors).toBe(1);
    expect(out.warnings).toBe(1);
    expect(out.diagnostics).toHaveLength(3);
    for (const d of out.diagnostics)
      expect(Object.keys(d)).toEqual(["file", "line", "column", "rule", "severity", "message", "hint"]);
    expect(out.diagnostics[0]).toMatchObject({ line: 6, column: 20, rule: "cluster-same" });
  });
});

describe("github format", () => {
  it("prints ::error file=…,line=…,col=…,title=RULE::message, escaping workflow-command characters", () => {
    const lines = formatDiagnostics("github", input).trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^::error file=runbooks\/a\.yaml,line=6,col=20,title=cluster-same::source and destination are both `cluster0`: a sync needs two, different clusters\.%0Ahint: Use cluster1 & cluster0 <swap>\.$/,
    );
    expect(lines[1]).toBe(
      "::warning file=runbooks/a.yaml,line=4,col=5,title=instance-insecure::100%25 plain%0Ahttp%0Ahint: tunnel",
    );
    expect(lines[2]).toMatch(/^::notice file=runbooks\/a\.yaml,line=1,col=1,title=build-indexes-never::fyi$/);
  });
  it("escapes commas and colons in properties", () => {
    const out = formatDiagnostics("github", {
      diagnostics: [{ ...(diags[0] as Diagnostic), file: "a,b:c.yaml" }],
      files: [],
    });
    expect(out).toContain("file=a%2Cb%3Ac.yaml,");
  });
});

describe("junit format", () => {
  it("is well-formed XML with one suite per file and one failure per error or warning", () => {
    const xml = formatDiagnostics("junit", input);
    const doc = assertWellFormedXml(xml);
    expect(doc.root).toBe("testsuites");
    const suites = doc.elements.filter((e) => e.name === "testsuite");
    expect(suites.map((s) => s.attrs.name)).toEqual(["runbooks/a.yaml", "runbooks/clean.yaml"]);
    expect(suites[0]?.attrs.failures).toBe("2");
    expect(suites[1]?.attrs.failures).toBe("0");
    const failures = doc.elements.filter((e) => e.name === "failure");
    expect(failures).toHaveLength(2);
    expect(failures[0]?.attrs.message).toContain("`cluster0`");
    expect(failures[0]?.text).toContain("cluster1 & cluster0");
    expect(failures[0]?.text).toContain("<swap>");
  });
  it("stays well-formed with control characters and quotes in messages", () => {
    const xml = formatDiagnostics("junit", {
      diagnostics: [{ ...(diags[0] as Diagnostic), message: `bad \u0001 "quote" 'apos' ]]> <x/>` }],
      files: ["runbooks/a.yaml"],
    });
    expect(() => assertWellFormedXml(xml)).not.toThrow();
  });
});

describe("pretty format", () => {
  it("shows the offending source line and a caret under the column, like a compiler", () => {
    const out = formatDiagnostics("pretty", { ...input, color: false });
    const lines = out.split("\n");
    const at = lines.findIndex((l) => l === "6 |       destination: cluster0");
    expect(at).toBeGreaterThan(0);
    const caretLine = lines[at + 1] as string;
    // the caret starts under column 20 of the source line (after the "6 | " gutter)
    const gutter = "6 | ".length;
    expect(caretLine.indexOf("^") - gutter).toBe(20 - 1);
    expect(caretLine.trimEnd().endsWith("^".repeat(8))).toBe(true);
    expect(out).toContain("error[cluster-same]: source and destination are both `cluster0`");
    expect(out).toContain("--> runbooks/a.yaml:6:20");
    expect(out).toContain("= hint: Use cluster1 & cluster0 <swap>.");
    expect(out).toContain("✖ 1 error, 1 warning, 1 info in 1 of 2 files");
    expect(out).not.toContain("\u001b[");
  });
  it("uses colors only when asked (the CLI asks on a TTY)", () => {
    expect(formatDiagnostics("pretty", { ...input, color: true })).toContain("\u001b[");
  });
  it("reports a clean run", () => {
    expect(formatDiagnostics("pretty", { diagnostics: [], files: ["a.yaml"] })).toBe("✔ 1 file linted: no problems\n");
  });
});
