/**
 * The order of a wave: each runbook's stage (0 without `after`, else one more than the highest
 * stage it comes after) and the first `after` cycle, if any. Plain data in, plain data out: lint,
 * the planners and the rehearsal all read the order from here.
 */

/** A runbook of the wave by name, with the names it comes after. */
export interface Node {
  name: string;
  after: readonly string[];
}

/**
 * A cycle of `after` edges, as names in order with the first repeated at the end (`a → b → a`:
 * a comes after b, which comes after a), or undefined. Unknown names are ignored (lint reports
 * them on their own).
 */
export function findCycle(nodes: readonly Node[]): string[] | undefined {
  const by = new Map(nodes.map((n) => [n.name, n]));
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const s = state.get(name);
    if (s === "done") return undefined;
    if (s === "open") return [...stack.slice(stack.indexOf(name)), name];
    state.set(name, "open");
    stack.push(name);
    for (const next of by.get(name)?.after ?? []) {
      if (!by.has(next)) continue;
      const found = visit(next);
      if (found) return found;
    }
    stack.pop();
    state.set(name, "done");
    return undefined;
  };
  for (const n of nodes) {
    const found = visit(n.name);
    if (found) return found;
  }
  return undefined;
}

/** Each runbook's stage, by name. Needs an acyclic wave with known names (lint checks both first). */
export function stagesOf(nodes: readonly Node[]): Map<string, number> {
  const by = new Map(nodes.map((n) => [n.name, n]));
  const out = new Map<string, number>();
  const stage = (name: string, depth: number): number => {
    const known = out.get(name);
    if (known !== undefined) return known;
    if (depth > nodes.length) throw new Error(`the wave has an \`after\` cycle through ${name}`);
    const after = by.get(name)?.after ?? [];
    const s = after.length === 0 ? 0 : 1 + Math.max(...after.map((a) => stage(a, depth + 1)));
    out.set(name, s);
    return s;
  };
  for (const n of nodes) stage(n.name, 0);
  return out;
}
