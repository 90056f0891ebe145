import type { Diagnostic } from "../../diagnostics.js";
import { countBySeverity } from "../../diagnostics.js";
import { codeFrame, sourceLine, terminalText } from "../../text.js";
import type { FormatInput } from "./types.js";

/**
 * ANSI styles, or none. Not picocolors: it reads `process.stdout` when imported, which creates
 * the stdout stream (~4 ms of lint's ~50 ms start-up budget) even when colors are off; the
 * caller decides about colors (a TTY, NO_COLOR, FORCE_COLOR) without it.
 */
function createColors(on: boolean) {
  const style = (open: number, close: number) => (s: string) => (on ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return {
    bold: style(1, 22),
    red: style(31, 39),
    yellow: style(33, 39),
    green: style(32, 39),
    blue: style(34, 39),
    cyan: style(36, 39),
  };
}

/**
 * A compiler-like report:
 *
 *     error[sharding-required]: Syncing from replica set `cluster0` to sharded cluster ...
 *       --> runbooks/x.yaml:12:5
 *        |
 *     12 |   - start:
 *        |     ^^^^^
 *        = hint: Add `sharding: ...`
 */
export function formatPretty({ diagnostics, files, sources, color = false, command = "lint" }: FormatInput): string {
  const c = createColors(color);
  const paint = {
    error: (s: string) => c.bold(c.red(s)),
    warning: (s: string) => c.bold(c.yellow(s)),
    info: (s: string) => c.bold(c.cyan(s)),
  };
  const out: string[] = [];
  for (const d of diagnostics) out.push(one(d, sources?.get(d.file), c, paint[d.severity]));
  const n = countBySeverity(diagnostics);
  const withProblems = new Set(diagnostics.filter((d) => d.severity !== "info").map((d) => d.file)).size;
  const fileWord = `${files.length} file${files.length === 1 ? "" : "s"}`;
  const parts = [`${n.error} error${n.error === 1 ? "" : "s"}`, `${n.warning} warning${n.warning === 1 ? "" : "s"}`];
  if (n.info > 0) parts.push(`${n.info} info${n.info === 1 ? "" : "s"}`);
  if (n.error + n.warning === 0)
    out.push(
      c.green(
        `✔ ${command === "lint" ? `${fileWord} linted: no problems` : `preflight of ${fileWord}: no problems`}${n.info > 0 ? ` (${parts[2]})` : ""}`,
      ),
    );
  else out.push((n.error > 0 ? c.red : c.yellow)(`✖ ${parts.join(", ")} in ${withProblems} of ${fileWord}`));
  return `${out.join("\n")}\n`;
}

function one(
  d: Diagnostic,
  text: string | undefined,
  c: ReturnType<typeof createColors>,
  paint: (s: string) => string,
): string {
  const src = sourceLine(text, d.line);
  const pad = " ".repeat(String(d.line).length);
  const width =
    d.endLine === d.line && d.endColumn !== undefined && d.endColumn > d.column ? d.endColumn - d.column : 1;
  const lines = [
    // a finding quotes the runbook: its control characters shown, never obeyed (src/text.ts)
    `${paint(`${d.severity}[${d.rule}]`)}${c.bold(`: ${terminalText(d.message)}`)}`,
    ...codeFrame(
      { file: d.file, line: d.line, column: d.column, width, ...(src !== undefined ? { source: src } : {}) },
      { gutter: c.blue, caret: paint },
    ),
  ];
  if (d.hint) lines.push(`${pad} ${c.blue("=")} ${c.bold("hint")}: ${terminalText(d.hint)}`);
  return `${lines.join("\n")}\n`;
}
