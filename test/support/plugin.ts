import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LineCounter, parseDocument, isMap, isPair, isScalar } from "yaml";
import type { RunEvent } from "../../src/events.js";
import type { PluginLintInput, PluginRunContext } from "../../src/plugin/index.js";
import { createRedactor, lintPlugins } from "../../src/plugin/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";
import { HOOK_TOKEN_ENV, runProcess } from "../../src/plugin/process.js";

/** A minimal runbook for plugin tests: `body` is YAML under `steps:`, `head` top-level lines before it (e.g. `plugins:`). */
export function runbook(body: string, head = ""): string {
  return `runbook: 1
name: t
clusters:
  cluster0: { topology: replicaSet }
  cluster1: { topology: replicaSet }
instances: [http://127.0.0.1:27182]
${head}steps:
${body}`;
}

export function tempDir(prefix = "syncbook-plugin-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes files (path → text) under a folder, creating subfolders. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
}

function interpolate(v: unknown, env: Record<string, string>): unknown {
  if (typeof v === "string") return v.replace(/\$\{env\.([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, k: string) => env[k] ?? m);
  if (Array.isArray(v)) return v.map((x) => interpolate(x, env));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, interpolate(x, env)]));
  return v;
}

/**
 * A stand-in for the loader's `LoadedRunbook` (what lint and the plugin checks use): YAML with
 * positions, `${env.*}` interpolated from `env` (those values are the secrets).
 */
export function loadedFromYaml(
  file: string,
  text: string,
  env: Record<string, string> = {},
): PluginLintInput & { text: string; secrets: string[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const raw = doc.toJS() as unknown;
  const secrets = Object.values(env);
  const redact = createRedactor(secrets);
  const pos = (offset: number) => lineCounter.linePos(offset);
  return {
    file,
    text,
    raw,
    runbook: interpolate(raw, env),
    secrets,
    redact,
    locate(path, opts) {
      if (opts?.key && path.length > 0) {
        const parent = doc.getIn(path.slice(0, -1), true);
        if (isMap(parent)) {
          const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === path[path.length - 1]);
          const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
          if (range) {
            const a = pos(range[0]);
            return { line: a.line, column: a.col };
          }
        }
      }
      const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
      const range = (node as { range?: [number, number, number] } | undefined)?.range;
      if (!range) throw new Error(`no node at ${path.join(".")}`);
      const a = pos(range[0]);
      const b = pos(range[1]);
      return { line: a.line, column: a.col, endLine: b.line, endColumn: b.col };
    },
  };
}

/** 1-based line of the first line containing `needle`. */
export function lineOf(text: string, needle: string, from = 0): number {
  const i = text.indexOf(needle, from);
  if (i < 0) throw new Error(`${needle} not in text`);
  return text.slice(0, i).split("\n").length;
}

/** A run context that records every log line and printed line. */
export function recordingContext(
  dir: string,
  secrets: string[] = [],
  name = "test-runbook",
): PluginRunContext & { logs: string[]; printed: string[] } {
  const logs: string[] = [];
  const printed: string[] = [];
  return {
    runbook: { name, file: join(dir, "rb.yaml") },
    cwd: dir,
    env: {},
    redact: createRedactor(secrets),
    log: (level, message) => logs.push(`${level} ${message}`),
    mode: "rehearse",
    print: (line) => printed.push(line),
    logs,
    printed,
  };
}

let seq = 0;
/** A run event with seq/at filled in. */
export function ev<E extends RunEvent>(e: Omit<E, "seq" | "at">): E {
  return { ...e, seq: ++seq, at: Date.UTC(2024, 0, 1, 3, 0, seq) } as E;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The plugin-call findings of a runbook text (written to a temp folder), each tagged `rule@line`. */
export async function lintCalls(text: string) {
  const dir = tempDir();
  const file = join(dir, "rb.yaml");
  writeFiles(dir, { "rb.yaml": text });
  return (await lintPlugins(loadedFromYaml(file, text, {}), { callKinds: PLUGIN_CALL_KINDS })).map((d) => ({
    ...d,
    at: `${d.rule}@${d.line}`,
  }));
}

/** Runs a command that prints the hook token it was given (`SYNCBOOK_HOOK_TOKEN`); resolves to what it printed ("none" outside every watch). */
export async function tokenOfProcess(): Promise<string> {
  const printsToken = [process.execPath, "-e", `process.stdout.write(process.env.${HOOK_TOKEN_ENV} ?? "none")`];
  const lines: string[] = [];
  const log = {
    debug: () => undefined,
    info: (m: string) => void lines.push(m),
    warn: () => undefined,
    error: () => undefined,
  };
  await runProcess({ argv: printsToken, log, signal: new AbortController().signal });
  return lines.join("\n").replace(/^stdout: /, "");
}
