/**
 * Wave file text → wave: parse with source positions, validate against schemas/wave.schema.json
 * (ajv standalone code generated at build time), and explain every problem at its line and
 * column, as the runbook loader does. Never throws for a problem in the text: problems are
 * diagnostics, and `wave` is set only when the text is schema-valid.
 */
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import type { Diagnostic } from "../diagnostics.js";
import { errorMessage } from "../errors.js";
import { createLocator, type Locate } from "../runbook/positions.js";
import { yamlErrorAt } from "../runbook/yaml-error.js";
import { formatBytes } from "../text.js";
import type { SyncbookWave } from "./schema.gen.js";
import { validateWaveSchema } from "./validate.gen.js";

export type WaveFile = SyncbookWave;

/** One runbook of the wave, as listed. */
export interface WaveEntry {
  /** Position in `runbooks:` (its YAML path is `["runbooks", index]`). */
  index: number;
  /** The path as written in the wave file (relative to it). */
  path: string;
  /** The runbook file, as reachable from the current directory. */
  file: string;
  /** Names of the runbooks it comes after (empty: none). */
  after: string[];
}

export interface LoadedWave {
  file: string;
  text: string;
  /** The validated wave, when schema-valid. */
  wave: WaveFile | undefined;
  /** Its runbooks, when schema-valid (else empty). */
  entries: WaveEntry[];
  diagnostics: Diagnostic[];
  locate: Locate;
}

/** A wave lists runbooks; a file bigger than this is a mistake, not a wave. */
const MAX_WAVE_BYTES = 1024 * 1024;

export async function loadWave(file: string): Promise<LoadedWave> {
  const buf = await readFile(file);
  return parseWave(buf.subarray(0, MAX_WAVE_BYTES + 1).toString("utf8"), file, buf.length);
}

export async function parseWave(text: string, file: string, size = Buffer.byteLength(text)): Promise<LoadedWave> {
  const lines = new LineCounter();
  const diagnostics: Diagnostic[] = [];
  const at = (line: number, column: number, rule: string, message: string, hint: string): Diagnostic => ({
    file,
    line,
    column,
    rule,
    severity: "error",
    message,
    hint,
  });
  const none = (d: Diagnostic): LoadedWave => ({
    file,
    text,
    wave: undefined,
    entries: [],
    diagnostics: [d, ...diagnostics],
    locate: () => ({ line: d.line, column: d.column }),
  });
  if (size > MAX_WAVE_BYTES)
    return none(
      at(
        1,
        1,
        "yaml",
        `the file is ${formatBytes(size)}: a wave file is at most ${formatBytes(MAX_WAVE_BYTES)}`,
        "Split it.",
      ),
    );
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true, strict: true });
  } catch (err) {
    return none(at(1, 1, "yaml", `cannot parse: ${errorMessage(err)}`, "This does not look like a wave file."));
  }
  const locate = createLocator(doc, lines);
  const result = (wave?: WaveFile): LoadedWave => ({
    file,
    text,
    wave,
    entries: wave ? entriesOf(wave, file) : [],
    diagnostics,
    locate,
  });
  for (const e of doc.errors) {
    const y = yamlErrorAt(e, text, lines);
    diagnostics.push(at(y.line, y.column, y.rule, y.message, y.hint));
  }
  if (doc.errors.length) return result();
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    diagnostics.push(at(1, 1, "yaml", errorMessage(err), "Write the values out instead of expanding aliases."));
    return result();
  }
  if (validateWaveSchema(value)) return result(value as WaveFile);
  const errors = [...(validateWaveSchema.errors ?? [])];
  const [{ explainSchemaErrors }, { WAVE_SCHEMA }] = await Promise.all([
    import("../runbook/explain.js"),
    import("./schema-json.gen.js"),
  ]);
  diagnostics.push(
    ...explainSchemaErrors({ file, data: value, errors, locate, redact: (s) => s, schema: WAVE_SCHEMA }),
  );
  return result();
}

function entriesOf(wave: WaveFile, file: string): WaveEntry[] {
  const base = dirname(file);
  return wave.runbooks.map((r, index) => {
    const path = typeof r === "string" ? r : r.path;
    const after = typeof r === "string" ? [] : (r.after ?? []);
    // relative to the wave file, shown relative to where the command runs (as lint shows files)
    const full = resolve(base, path);
    return { index, path, file: relative(process.cwd(), full) || full, after };
  });
}
