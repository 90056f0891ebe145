import type { FormatInput } from "./types.js";

/**
 * `{"diagnostics":[{"file","line","column","rule","severity","message","hint"}],"errors":N,"warnings":N}`:
 * exactly these keys, in this order; line and column 1-based; `hint` is "" when there is none.
 */
export function formatJson({ diagnostics }: FormatInput): string {
  let errors = 0;
  let warnings = 0;
  const out = diagnostics.map((d) => {
    if (d.severity === "error") errors++;
    else if (d.severity === "warning") warnings++;
    return {
      file: d.file,
      line: d.line,
      column: d.column,
      rule: d.rule,
      severity: d.severity,
      message: d.message,
      hint: d.hint ?? "",
    };
  });
  return `${JSON.stringify({ diagnostics: out, errors, warnings })}\n`;
}
