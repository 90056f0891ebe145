import type { Diagnostic } from "../../diagnostics.js";
import type { FormatInput } from "./types.js";
import { escapeXml as xml } from "../../text.js";

/**
 * One <testsuite> per file; one failing <testcase> per error or warning (named after the rule
 * and position), one passing <testcase> for a file without any. Infos are not listed.
 */
export function formatJunit({ diagnostics, files, command = "lint" }: FormatInput): string {
  const byFile = new Map<string, Diagnostic[]>();
  for (const f of files) byFile.set(f, []);
  for (const d of diagnostics) {
    if (d.severity === "info") continue;
    const list = byFile.get(d.file) ?? [];
    list.push(d);
    byFile.set(d.file, list);
  }
  let tests = 0;
  let failures = 0;
  const suites: string[] = [];
  for (const [file, diags] of byFile) {
    const cases =
      diags.length === 0
        ? [`    <testcase classname="${xml(file)}" name="${command}"/>`]
        : diags.map((d) => {
            const text = `${d.file}:${d.line}:${d.column} ${d.severity} ${d.rule}: ${d.message}${d.hint ? `\nhint: ${d.hint}` : ""}`;
            return `    <testcase classname="${xml(file)}" name="${xml(`${d.rule} at ${d.line}:${d.column}`)}"><failure type="${d.severity}" message="${xml(d.message)}">${xml(text)}</failure></testcase>`;
          });
    tests += cases.length;
    failures += diags.length;
    suites.push(
      `  <testsuite name="${xml(file)}" tests="${cases.length}" failures="${diags.length}" errors="0" skipped="0">\n${cases.join("\n")}\n  </testsuite>`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="syncbook ${command}" tests="${tests}" failures="${failures}" errors="0">\n${suites.join("\n")}${suites.length ? "\n" : ""}</testsuites>\n`;
}
