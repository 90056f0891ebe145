import type { Diagnostic } from "../../diagnostics.js";
import { renderJunitXml, type JunitCase } from "../../junit.js";
import type { FormatInput } from "./types.js";

/**
 * One <testsuite> per file; one failing <testcase> per error or warning (named after the rule
 * and position), one passing <testcase> for a file without any. Infos are not listed. Written by
 * the one JUnit writer (src/junit.ts).
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
  const suites = [...byFile].map(([file, diags]) => ({
    name: file,
    cases:
      diags.length === 0
        ? [{ classname: file, name: command }]
        : diags.map((d): JunitCase => ({
            classname: file,
            name: `${d.rule} at ${d.line}:${d.column}`,
            failure: {
              tag: "failure",
              type: d.severity,
              message: d.message,
              text: `${d.file}:${d.line}:${d.column} ${d.severity} ${d.rule}: ${d.message}${d.hint ? `\nhint: ${d.hint}` : ""}`,
            },
          })),
  }));
  return renderJunitXml(`syncbook ${command}`, suites);
}
