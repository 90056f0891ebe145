import type { Report } from "./contract.js";

/**
 * report.json: the whole timeline. Laid out for people, grep and diff without the size of full
 * pretty-printing (a long run holds hundreds of thousands of requests): the top level indented,
 * every element of a top-level array on a line of its own, compact inside. `jq .` pretty-prints.
 */
export function renderJson(report: Report): string {
  const lines: string[] = ["{"];
  const entries = Object.entries(report).filter(([, v]) => v !== undefined);
  entries.forEach(([key, value], i) => {
    const comma = i < entries.length - 1 ? "," : "";
    if (Array.isArray(value) && value.length > 0) {
      lines.push(`  ${JSON.stringify(key)}: [`);
      value.forEach((item, j) => lines.push(`    ${JSON.stringify(item)}${j < value.length - 1 ? "," : ""}`));
      lines.push(`  ]${comma}`);
    } else lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(value)}${comma}`);
  });
  lines.push("}");
  return `${lines.join("\n")}\n`;
}
