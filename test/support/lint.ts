import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Diagnostic } from "../../src/diagnostics.js";
import { lintRunbook } from "../../src/lint/index.js";
import { loadRunbook } from "../../src/runbook/index.js";

export const FIXTURES = new URL("../fixtures/lint/", import.meta.url);

/** Load a runbook file as `syncbook lint` does; loader and rule diagnostics apart. */
export async function lintFile(file: string): Promise<{ loader: Diagnostic[]; rules: Diagnostic[]; text: string }> {
  const loaded = await loadRunbook(file, { env: "lint" });
  return { loader: loaded.diagnostics, rules: lintRunbook(loaded), text: loaded.text };
}

let dir: string | undefined;
/** Lint a runbook given as text (written to a temp file first). */
export async function lintYaml(yaml: string): Promise<{ loader: Diagnostic[]; rules: Diagnostic[]; text: string }> {
  dir ??= mkdtempSync(join(tmpdir(), "syncbook-lint-test-"));
  const file = join(dir, `rb-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, yaml);
  return lintFile(file);
}

/** `# expect: rule-a, rule-b` markers of a fixture: the findings it must produce, as `rule@line`. */
export function expectedFindings(text: string): string[] {
  const out: string[] = [];
  text.split("\n").forEach((l, i) => {
    const m = /#\s*expect:\s*(.+)$/.exec(l);
    if (m?.[1]) for (const r of m[1].split(",")) out.push(`${r.trim()}@${i + 1}`);
  });
  return out.sort();
}

export const findings = (diags: readonly Diagnostic[]): string[] => diags.map((d) => `${d.rule}@${d.line}`).sort();

export const read = (u: URL): string => readFileSync(u, "utf8");

/** The service version `runbook()` declares: the current release (service facts, "Supported versions"). */
export const CURRENT = "1.22.0";

/** `runbook()` at another service version (a test of an older version's behaviour, on purpose). */
export const atVersion = (yaml: string, version: string): string =>
  yaml.replace(`serviceVersion: "${CURRENT}"`, `serviceVersion: "${version}"`);

/** Not the end-of-life warning: for tests of an old version's behaviour (it has its own fixture and tests). */
export const notEol = (d: Diagnostic): boolean => d.rule !== "service-version-eol";

/**
 * Neither the end-of-life warning nor `commit-without-verify`: for tests of other rules on small
 * runbooks that commit without a `verify` on purpose (both have their own fixture and tests).
 */
export const notAside = (d: Diagnostic): boolean => notEol(d) && d.rule !== "commit-without-verify";

/** A small runbook that lints clean: steps are appended by the tests. */
export function runbook(steps: string, head = ""): string {
  return `runbook: 1
name: t
serviceVersion: "${CURRENT}"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "7.0" }
  cluster1: { topology: replicaSet, serverVersion: "7.0" }
instances: [http://127.0.0.1:27182]
verifier: http://127.0.0.1:27020
${head}steps:
${steps}`;
}

export const START = "  - start: { source: cluster0, destination: cluster1 }\n";
export const READY = "  - waitFor: { canCommit: true, lagBelow: 5 }\n";
export const STOP =
  "  - stopWrites: { use: shell, with: { command: [off] }, undo: { use: shell, with: { command: [on] } } }\n";
export const COMMIT = "  - commit: {}\n  - waitFor: { state: COMMITTED }\n";
