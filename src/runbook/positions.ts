/**
 * Source positions of runbook nodes: a YAML path (`["steps", 2, "waitFor", "lagBelow"]`) → the
 * line and column of the value, or of its key. Paths that do not resolve all the way point at
 * the deepest node that exists (a missing field is reported at the mapping that lacks it).
 */
import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from "yaml";

export interface Span {
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
}

export type Locate = (path: readonly (string | number)[], opts?: { key?: boolean }) => Span;

export function createLocator(doc: Document, lines: LineCounter): Locate {
  const span = (range: readonly number[] | null | undefined): Span => {
    if (!range) return { line: 1, column: 1 };
    const a = lines.linePos(range[0] ?? 0);
    const b = lines.linePos(range[1] ?? range[0] ?? 0);
    return { line: a.line, column: a.col, endLine: b.line, endColumn: b.col };
  };
  return (path, opts = {}) => {
    let node: unknown = doc.contents;
    let keyNode: Node | undefined;
    for (const seg of path) {
      keyNode = undefined;
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg),
        );
        if (!pair) break;
        keyNode = pair.key as Node;
        // `key:` with no value: point at the key
        node = pair.value ?? pair.key;
      } else if (isSeq(node) && typeof seg === "number" && node.items[seg] !== undefined) {
        node = node.items[seg];
      } else break;
    }
    const target = opts.key && keyNode ? keyNode : (node as Node | null);
    return span(target?.range);
  };
}
