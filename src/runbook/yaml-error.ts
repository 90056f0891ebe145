/**
 * A YAML parser error as a diagnostic's position, message and hint: the one home for the runbook's
 * and the wave file's syntax errors. The parser reports an unclosed flow collection (`{` or `[`)
 * where it noticed, the next line; the cause is the bracket, so the diagnostic points there.
 */
import { CST, Parser, type LineCounter, type YAMLError } from "yaml";

export interface YamlErrorAt {
  line: number;
  column: number;
  rule: "yaml" | "yaml-duplicate-key";
  message: string;
  hint: string;
}

export function yamlErrorAt(e: YAMLError, text: string, lines: LineCounter): YamlErrorAt {
  const first = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "");
  const at = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
  if (e.code === "DUPLICATE_KEY") {
    const key = keyAt(text, e.pos[0]);
    return {
      line: at.line,
      column: at.col,
      rule: "yaml-duplicate-key",
      message: key
        ? `duplicate key \`${key}\`: it already appears earlier in this mapping`
        : "duplicate key: it already appears earlier in this mapping",
      hint: "A key may appear once per mapping: the second would silently replace the first.",
    };
  }
  const open = /^Flow (map|sequence) /.test(first) ? unclosedBefore(text, e.pos[0]) : undefined;
  if (open) {
    const o = lines.linePos(open.offset);
    const close = open.source === "{" ? "}" : "]";
    return {
      line: o.line,
      column: o.col,
      rule: "yaml",
      message: `this \`${open.source}\` is never closed (the parser noticed at line ${at.line}, column ${at.col}: ${first})`,
      hint: `End the ${open.source === "{" ? "mapping" : "list"} with \`${close}\` before the next line of the block, or write it as a block (one key or item per line).`,
    };
  }
  return {
    line: at.line,
    column: at.col,
    rule: "yaml",
    message: first,
    hint: "Fix the YAML syntax (indentation, quotes, a `:` after every key).",
  };
}

/** The last flow collection opened before `offset` that the parser found no closing bracket for. */
function unclosedBefore(text: string, offset: number): { offset: number; source: string } | undefined {
  let found: { offset: number; source: string } | undefined;
  for (const token of new Parser().parse(text)) {
    if (token.type !== "document") continue;
    CST.visit(token, (item) => {
      for (const v of [item.key, item.value]) {
        if (v?.type !== "flow-collection" || v.offset >= offset) continue;
        const closer = v.start.source === "{" ? "flow-map-end" : "flow-seq-end";
        if (!v.end.some((t) => t.type === closer) && (!found || v.offset > found.offset))
          found = { offset: v.offset, source: v.start.source };
      }
    });
  }
  return found;
}

/** The key written at an offset (`name: b` → `name`), for the duplicate-key message. */
function keyAt(text: string, offset: number): string | undefined {
  const m = /^\s*(?:-\s+)?["']?([^"':{}[\],#]+?)["']?\s*:/.exec(text.slice(offset, offset + 200));
  return m?.[1]?.trim() || undefined;
}
