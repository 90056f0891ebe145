/** Output formats of `syncbook lint`: pretty (a compiler-like report), json, github, junit, sarif. */
import { formatGithub } from "./github.js";
import { formatJson } from "./json.js";
import { formatJunit } from "./junit.js";
import { formatPretty } from "./pretty.js";
import { formatSarif } from "./sarif.js";
import type { Format, FormatInput } from "./types.js";

export { FORMATS, type Format, type FormatInput } from "./types.js";

/** The whole report in one format, ending with a newline. */
export function formatDiagnostics(format: Format, input: FormatInput): string {
  switch (format) {
    case "json":
      return formatJson(input);
    case "github":
      return formatGithub(input);
    case "junit":
      return formatJunit(input);
    case "pretty":
      return formatPretty(input);
    case "sarif":
      return formatSarif(input);
  }
}

export { formatGithub, formatJson, formatJunit, formatPretty, formatSarif };
