import { isAbsolute, relative, resolve, sep } from "node:path";
import { repositoryRoot } from "./sarif.js";
import type { FormatInput } from "./types.js";

// GitHub Actions workflow commands: data escapes %, CR, LF; property values also `:` and `,`.
const data = (s: string): string => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const prop = (s: string): string => data(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

const COMMAND = { error: "error", warning: "warning", info: "notice" } as const;

/**
 * A finding's file as GitHub matches annotations to a pull request's diff: relative to the
 * repository root (`GITHUB_WORKSPACE`, else the folder holding `.git`), not to the folder lint ran
 * in (the Action's `working-directory`). A file outside the root keeps the path it was given.
 */
export function annotationPath(file: string, cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env): string {
  const rel = relative(repositoryRoot(cwd, env), resolve(cwd, file));
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? file : rel.split(sep).join("/");
}

/** One `::error file=…,line=…,col=…,title=RULE::message` line per finding (the hint on a second annotation line). */
export function formatGithub({ diagnostics }: FormatInput): string {
  let out = "";
  for (const d of diagnostics) {
    const message = d.hint ? `${d.message}\nhint: ${d.hint}` : d.message;
    out += `::${COMMAND[d.severity]} file=${prop(annotationPath(d.file))},line=${d.line},col=${d.column},title=${prop(d.rule)}::${data(message)}\n`;
  }
  return out;
}
