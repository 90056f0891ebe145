/**
 * `lintWave`: the wave file (schema, positions), every runbook it lists (lint's own rules), and
 * the wave's rules: a runbook path that is missing, names unknown or listed twice, an `after`
 * cycle, and two runbooks that drive the same sync service instance (they would send commands
 * to one fleet). Findings about the wave are positioned in the wave file.
 */
import { existsSync, statSync } from "node:fs";
import { sortDiagnostics, type Diagnostic, type RuleInfo } from "../diagnostics.js";
import { serviceKey } from "../instance-identity.js";
import { lintFiles } from "../lint/run.js";
import { stripUserinfo } from "../redact.js";
import { envNamesIn, loadRunbook, type LoadedRunbook } from "../runbook/index.js";
import { suggest } from "../suggest.js";
import { findCycle, stagesOf } from "./graph.js";
import { loadWave, type LoadedWave, type WaveEntry, type WaveFile } from "./load.js";

/** The wave's rules, as lint's catalogue lists its own (`--format sarif` names them). */
export const WAVE_RULES = [
  {
    id: "wave-runbook-missing",
    severity: "error",
    description: "a runbook the wave lists is not a file",
    spec: "runbooks: a list of paths (relative to the wave file).",
    source: "docs/waves.md",
    hint: "Fix the path: it is relative to the wave file.",
  },
  {
    id: "wave-duplicate-name",
    severity: "error",
    description: "two runbooks of the wave have the same name",
    spec: "after names runbooks by their `name:`; the engine's lease is keyed by it.",
    source: "docs/waves.md",
    hint: "Give each runbook its own `name:`, and list each file once.",
  },
  {
    id: "wave-unknown-name",
    severity: "error",
    description: "`after` names a runbook that is not in the wave",
    spec: "after: [<runbook name>, …] (names are the runbooks' name:).",
    source: "docs/waves.md",
    hint: "Use the `name:` of a runbook the wave lists.",
  },
  {
    id: "wave-after-cycle",
    severity: "error",
    description: "the `after` lists form a cycle: none of those runbooks could ever start",
    spec: "A runbook runs once every runbook it comes after has succeeded.",
    source: "docs/waves.md",
    hint: "Remove one of the `after` entries of the cycle.",
  },
  {
    id: "wave-env-unmapped",
    severity: "error",
    description: "a runbook uses an `${env.NAME}` that the wave's `secrets:` does not map",
    spec: "secrets: { NAME: { secret, key } }: the engine's job gets each runbook variable from a Kubernetes Secret (Argo) or a GitHub secret.",
    source: "docs/waves.md",
    hint: "Add `secrets: { NAME: { secret: <Kubernetes Secret>, key: <its key> } }` to the wave file (GitHub Actions takes the secret of the same name, or `github: <name>`).",
  },
  {
    id: "wave-shared-instance",
    severity: "error",
    description: "two runbooks drive the same sync service instance",
    spec: "Each runbook of a wave drives its own fleet: two would send commands to one fleet.",
    source: "docs/waves.md",
    hint: "Each runbook needs its own sync service instances; merge the two cutovers into one runbook if they are one migration.",
  },
] as const satisfies readonly RuleInfo[];

/** A runbook of a wave that lints: where it stands in the order. */
export interface WavePlanItem {
  name: string;
  /** The runbook file, relative to the current directory (as the engine's job checks it out). */
  runbook: string;
  stage: number;
  after: string[];
  /** The `${env.NAME}` names it uses. */
  env: string[];
}

/** Where the engine takes one runbook variable from (the wave's `secrets:`). */
export interface WaveSecret {
  /** The Kubernetes Secret and its key (Argo Workflows). */
  secret: string;
  key: string;
  /** The GitHub Actions secret's name. */
  github: string;
}

export interface WavePlan {
  name: string;
  maxParallel: number;
  /** The PersistentVolumeClaim the Argo tasks keep their journals on (the wave's `journal.volumeClaim`). */
  volumeClaim?: string;
  /** Where the engine takes each runbook variable from (the wave's `secrets:`), by `${env.NAME}` name. */
  secrets: Record<string, WaveSecret>;
  /** In the wave file's order. */
  items: WavePlanItem[];
}

export interface WaveLintResult {
  wave: LoadedWave;
  /** The wave file first, then every runbook file. */
  files: string[];
  diagnostics: Diagnostic[];
  sources: Map<string, string>;
  /** Set when the wave and every runbook lint without errors. */
  plan: WavePlan | undefined;
}

interface Member {
  entry: WaveEntry;
  loaded: LoadedRunbook | undefined;
  name: string | undefined;
}

export async function lintWave(file: string): Promise<WaveLintResult> {
  const wave = await loadWave(file);
  const diagnostics: Diagnostic[] = [...wave.diagnostics];
  const sources = new Map<string, string>([[wave.file, wave.text]]);
  const report = (path: (string | number)[], rule: string, message: string, hint?: string, key = false): void => {
    const info = WAVE_RULES.find((r) => r.id === rule);
    diagnostics.push({
      file: wave.file,
      ...wave.locate(path, { key }),
      rule,
      severity: info?.severity ?? "error",
      message,
      hint: hint ?? info?.hint ?? "",
    });
  };
  const entryPath = (e: WaveEntry): (string | number)[] =>
    typeof wave.wave?.runbooks[e.index] === "string" ? ["runbooks", e.index] : ["runbooks", e.index, "path"];

  const present = wave.entries.filter((e) => {
    const ok = existsSync(e.file) && statSync(e.file).isFile();
    if (!ok)
      report(
        entryPath(e),
        "wave-runbook-missing",
        `${e.path}: ${existsSync(e.file) ? "is a folder, not a runbook file" : "no such file"} (${e.file})`,
      );
    return ok;
  });
  const files = [...new Set(present.map((e) => e.file))];
  const linted = files.length ? await lintFiles(files) : { diagnostics: [], sources: new Map<string, string>() };
  diagnostics.push(...linted.diagnostics);
  for (const [f, t] of linted.sources) sources.set(f, t);

  // names and instances: read again by the loader (lint's result keeps no runbook); never env values
  const members: Member[] = await Promise.all(
    wave.entries.map(async (entry): Promise<Member> => {
      if (!present.includes(entry)) return { entry, loaded: undefined, name: undefined };
      const loaded = await loadRunbook(entry.file, { env: "lint" });
      const rb = (loaded.runbook ?? loaded.unchecked ?? loaded.raw) as { name?: unknown } | undefined;
      return { entry, loaded, name: typeof rb?.name === "string" ? rb.name : undefined };
    }),
  );

  const byName = new Map<string, Member>();
  for (const m of members) {
    if (m.name === undefined) continue;
    const first = byName.get(m.name);
    if (!first) {
      byName.set(m.name, m);
      continue;
    }
    report(
      entryPath(m.entry),
      "wave-duplicate-name",
      first.entry.file === m.entry.file
        ? `${m.entry.path} is listed twice (also runbooks[${first.entry.index}])`
        : `${m.entry.path} is named \`${m.name}\`, as ${first.entry.path} (runbooks[${first.entry.index}]) is`,
    );
  }

  // a runbook whose name cannot be read (it does not load) would make every `after` on it look
  // unknown: its own findings say what is wrong, and the unknown-name check waits for it
  const allNamed = members.length > 0 && members.every((m) => m.name !== undefined);
  let unknown = 0;
  if (allNamed) {
    const names = [...byName.keys()];
    for (const m of members)
      m.entry.after.forEach((a, j) => {
        if (byName.has(a)) {
          if (a === m.name)
            report(
              ["runbooks", m.entry.index, "after", j],
              "wave-after-cycle",
              `\`${a}\` comes after itself: it could never start`,
            );
          return;
        }
        unknown++;
        const near = suggest(a, names);
        report(
          ["runbooks", m.entry.index, "after", j],
          "wave-unknown-name",
          `\`after\`: no runbook of the wave is named \`${a}\`${near ? `; did you mean \`${near}\`?` : ""}`,
          `Names of the wave's runbooks: ${names.join(", ")}.`,
        );
      });
  }
  const nodes = [...byName.values()].map((m) => ({
    name: m.name as string,
    after: m.entry.after.filter((a) => a !== m.name),
  }));
  const cycle = findCycle(nodes);
  if (cycle) {
    const from = byName.get(cycle[0] as string) as Member;
    report(
      ["runbooks", from.entry.index, "after", from.entry.after.indexOf(cycle[1] as string)],
      "wave-after-cycle",
      `\`after\` cycle: ${cycle.join(" → ")} (each comes after the next): none of them could ever start`,
    );
  }

  // every runbook variable from a secret the engine hands the job (a job without it fails at its
  // first use, in the window, or never starts)
  const secrets = wave.wave?.secrets ?? {};
  for (const m of members) {
    const unmapped = m.loaded ? envOf(m.loaded).filter((n) => !Object.hasOwn(secrets, n)) : [];
    if (unmapped.length)
      report(
        entryPath(m.entry),
        "wave-env-unmapped",
        `${m.entry.path} (\`${m.name ?? "?"}\`) uses ${unmapped.map((n) => `\${env.${n}}`).join(", ")}, which the wave's \`secrets:\` does not map: the engine's job would run without ${unmapped.length === 1 ? "it" : "them"}`,
        `Add to the wave file: secrets: { ${unmapped.map((n) => `${n}: { secret: <Kubernetes Secret>, key: <key> }`).join(", ")} } (GitHub Actions takes the secret of the same name, or \`github: <name>\`).`,
      );
  }

  // two runbooks, one fleet
  const drivers = new Map<string, { member: Member; url: string }>();
  for (const m of members) {
    for (const url of instanceUrls(m.loaded)) {
      // one service in any spelling, two loopback spellings at one port as one: the reading that refuses
      const key = serviceKey(url);
      if (!key) continue;
      const other = drivers.get(key);
      if (!other) {
        drivers.set(key, { member: m, url });
        continue;
      }
      if (other.member === m) continue; // lint's instance-duplicate tells it within one runbook
      report(
        entryPath(m.entry),
        "wave-shared-instance",
        `${m.entry.path} (\`${m.name ?? "?"}\`) drives ${stripUserinfo(url)}, which ${other.member.entry.path} (\`${other.member.name ?? "?"}\`) drives too${stripUserinfo(url) !== stripUserinfo(other.url) ? ` as ${stripUserinfo(other.url)}` : ""}: the two would send commands to one fleet`,
      );
      break;
    }
  }

  // a wave with any error, in it or in a runbook, is never planned
  const errors = diagnostics.some((d) => d.severity === "error");
  const plan = wave.wave && !errors && allNamed && !cycle && unknown === 0 ? planOf(wave.wave, members) : undefined;
  return {
    wave,
    files: [wave.file, ...files],
    diagnostics: sortDiagnostics(diagnostics),
    sources,
    plan,
  };
}

function planOf(wave: WaveFile, members: readonly Member[]): WavePlan {
  const stages = stagesOf(members.map((m) => ({ name: m.name as string, after: m.entry.after })));
  const items = members.map((m) => ({
    name: m.name as string,
    runbook: m.entry.file,
    stage: stages.get(m.name as string) ?? 0,
    after: [...m.entry.after],
    env: m.loaded ? envOf(m.loaded) : [],
  }));
  // every mapping the wave declares (each runbook's variables are among them: wave-env-unmapped)
  const secrets: Record<string, WaveSecret> = {};
  for (const [n, s] of Object.entries(wave.secrets ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    if (s) secrets[n] = { secret: s.secret, key: s.key, github: s.github ?? n };
  return {
    name: wave.name,
    maxParallel: wave.maxParallel,
    ...(wave.journal?.volumeClaim ? { volumeClaim: wave.journal.volumeClaim } : {}),
    secrets,
    items,
  };
}

/** The `${env.NAME}` names a runbook uses (as written: loaded for lint, nothing resolved). */
function envOf(loaded: LoadedRunbook): string[] {
  return envNamesIn(loaded.raw ?? loaded.unchecked ?? loaded.runbook);
}

function instanceUrls(loaded: LoadedRunbook | undefined): string[] {
  const rb = (loaded?.runbook ?? loaded?.unchecked) as { instances?: unknown } | undefined;
  if (!Array.isArray(rb?.instances)) return [];
  return rb.instances
    .map((i: unknown) =>
      typeof i === "string" ? i : i && typeof i === "object" ? (i as { url?: unknown }).url : undefined,
    )
    .filter((u): u is string => typeof u === "string" && !u.includes("${"));
}
