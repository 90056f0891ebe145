/**
 * A short, stable key of a JSON Schema (FNV-1a over its JSON): how a plugin's schema finds its
 * validator compiled at build time. Not a security measure: a schema whose key matches but whose
 * JSON differs is compared in full before the validator is used (options.ts).
 */
export function schemaKey(schema: unknown): string {
  const text = JSON.stringify(schema);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return `${(h >>> 0).toString(36)}-${text.length}`;
}
