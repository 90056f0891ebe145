/**
 * "Did you mean": the candidate nearest to a word by edit distance (fastest-levenshtein),
 * ignoring case. One rule for every hint (schema fields, lint values, plugin names), so a word
 * gets the same suggestion wherever it is misspelt.
 */
import { distance } from "fastest-levenshtein";

/** The nearest candidate, however far (for hints that always name one). */
export function closest(word: string, candidates: readonly string[]): string {
  const w = word.toLowerCase();
  let best = candidates[0] ?? "";
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(w, c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best;
}

/**
 * The nearest candidate when it is close enough to be a misspelling (a third of the word, at
 * least 1), or one that the word begins (`shard` → `sharded`, `replica` → `replicaSet`) when no
 * other candidate begins with it too.
 */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0) return undefined;
  const best = closest(word, candidates);
  if (distance(word.toLowerCase(), best.toLowerCase()) <= Math.max(1, Math.floor(word.length / 3))) return best;
  const w = word.toLowerCase();
  const prefixed = w.length >= 3 ? candidates.filter((c) => c.toLowerCase().startsWith(w)) : [];
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
