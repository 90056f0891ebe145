import type { FormatInput } from "./types.js";

// GitHub Actions workflow commands: data escapes %, CR, LF; property values also `:` and `,`.
const data = (s: string): string => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const prop = (s: string): string => data(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

const COMMAND = { error: "error", warning: "warning", info: "notice" } as const;

/** One `::error file=…,line=…,col=…,title=RULE::message` line per finding (the hint on a second annotation line). */
export function formatGithub({ diagnostics }: FormatInput): string {
  let out = "";
  for (const d of diagnostics) {
    const message = d.hint ? `${d.message}\nhint: ${d.hint}` : d.message;
    out += `::${COMMAND[d.severity]} file=${prop(d.file)},line=${d.line},col=${d.column},title=${prop(d.rule)}::${data(message)}\n`;
  }
  return out;
}
