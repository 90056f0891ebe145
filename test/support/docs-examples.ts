/**
 * The corpus of published example answers (issue 36, point 6): every example answer the
 * documentation's source files show (the service's progress, each command's answer, the migration
 * verifier's progress) and the verifier README's progress example, one fixture per example in
 * test/fixtures/docs-examples/, copied as published (the JSON only, the page's indentation taken
 * off an inline block), each with where it was read: repository, path, branch or tag, commit.
 *
 * `versions`: the service versions whose documentation published it. A branch `vX.Y` of
 * mongodb/docs-cluster-to-cluster-sync is the documentation of X.Y (its snooty.toml); its master
 * (2025-04-29) is 1.13's (`latest-version="1.13.0"`); mongodb/docs `content/mongosync/<v>` is
 * v's, `current` the current release's at that commit (1.21 at cebf01bd, the lag object without
 * ceaStage; 1.22 at 42e877ed). Where master's history shows a file unchanged across releases
 * (progress.json from 2022-07-18, e9f16d1b "add can write v1.0", to 2024-04-08, 6c177f8a "Add
 * errorDescription and success keys", which the v1.8 branch has), each of those releases published it.
 */
import { readFileSync } from "node:fs";

export type ExampleKind = "progress" | "operation" | "verifier-progress";

export interface ExampleSource {
  repo: string;
  path: string;
  /** Branch or tag. */
  ref: string;
  commit: string;
  /** Where an inline block sits in the file (1-based, inclusive), for examples inside a page. */
  lines?: [number, number];
}

export interface DocsExample {
  /** File name in test/fixtures/docs-examples/. */
  file: string;
  kind: ExampleKind;
  /** The commands whose answer it shows (`operation` examples). */
  commands?: readonly string[];
  /** Service versions whose documentation published it (verifier examples: the verifier release). */
  versions: readonly string[];
  sources: readonly ExampleSource[];
}

const C2C = "mongodb/docs-cluster-to-cluster-sync";
const DOCS = "mongodb/docs";
const VERIFIER = "mongodb-labs/migration-verifier";
const BRANCH: Record<string, string> = {
  "v0.9": "fbccb4a76518a3d06959247b0899c8f2b8242f78",
  "v1.0": "d065065c6b26b6ec906c7c47f32aa17d380e27f1",
  "v1.7": "eb2c4bfb64e838aee14cfb8587b0e8402484279f",
  "v1.8": "9ed5bafb9a69f1d7fefae8d03e46f1e38ea22d8c",
  "v1.9": "5fb41de2b593b62920ffa813a98945ded3fc3fc6",
  "v1.10": "c1cef224e88f5658e8a7879e2471639108843675",
  "v1.11": "0c2cb4617edd1c827b3ac3f8df4ffedc0ebbc0bc",
  "v1.12": "ac9068c5f4f6b14e03ea4eaad81d09eb52fe7bed",
  "v1.13": "31f9159d549f15ba01dbbf041b7183ed8289c2de",
  master: "2789ddb1af2ae11325c7803f33c52bfaf6b95613",
};
const c2c = (path: string, refs: string[]): ExampleSource[] =>
  refs.map((ref) => ({ repo: C2C, path, ref, commit: BRANCH[ref]! }));

/** An inline block of a page, at its lines on each branch (the pages moved between branches). */
const inline = (path: string, at: Record<string, number>, length: number): ExampleSource[] =>
  Object.entries(at).map(([ref, first]) => ({
    repo: C2C,
    path,
    ref,
    commit: BRANCH[ref]!,
    lines: [first, first + length - 1],
  }));

const PROGRESS = "source/includes/api/responses/progress.json";
const VERIFIER_PAGE = "source/reference/verification/verifier.txt";
/** 1.9 to 1.13: the branches v1.9–v1.13, and master (1.13's). */
const V1_9 = ["v1.9", "v1.10", "v1.11", "v1.12", "v1.13"];
const V1_9_TO_MASTER = [...V1_9, "master"];
const at = (refs: string[], line: number): Record<string, number> => Object.fromEntries(refs.map((r) => [r, line]));

export const DOCS_EXAMPLES: readonly DocsExample[] = [
  { file: "progress-0.9.json", kind: "progress", versions: ["0.9"], sources: c2c(PROGRESS, ["v0.9"]) },
  {
    file: "progress-1.0.json",
    kind: "progress",
    versions: ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7"],
    sources: c2c(PROGRESS, ["v1.0", "v1.7"]),
  },
  { file: "progress-1.8.json", kind: "progress", versions: ["1.8"], sources: c2c(PROGRESS, ["v1.8"]) },
  {
    file: "progress-1.9.json",
    kind: "progress",
    versions: ["1.9", "1.10", "1.11", "1.12", "1.13"],
    sources: [
      ...c2c(PROGRESS, V1_9_TO_MASTER),
      {
        repo: DOCS,
        path: "content/mongosync/v1.13/source/includes/api/responses/progress.json",
        ref: "main",
        commit: "9cef96a04d40ba87259b63c608a2b45b6ef4ecda",
      },
    ],
  },
  {
    file: "progress-1.20.json",
    kind: "progress",
    versions: ["1.20"],
    sources: [
      {
        repo: DOCS,
        path: "content/mongosync/v1.20/source/includes/api/responses/progress.json",
        ref: "main",
        commit: "573e1555810e1cc248bc8c122335e0d88670bf1a",
      },
    ],
  },
  {
    file: "progress-1.21.json",
    kind: "progress",
    versions: ["1.21"],
    sources: [
      {
        repo: DOCS,
        path: "content/mongosync/current/source/includes/api/responses/progress.json",
        ref: "main",
        commit: "cebf01bdff829e69488a503f544fb91ae91ec544",
      },
    ],
  },
  {
    file: "progress-1.22.json",
    kind: "progress",
    versions: ["1.22"],
    sources: [
      {
        repo: DOCS,
        path: "content/mongosync/current/source/includes/api/responses/progress.json",
        ref: "main",
        commit: "42e877ed10e9fcb672a98a5c5be6cbf0ce0f044b",
      },
    ],
  },
  // the migration verifier's page: "check that the progress.info field returns change event application"
  {
    file: "verifier-page-mongosync-progress.json",
    kind: "progress",
    versions: ["1.7", "1.8", "1.9", "1.10", "1.11", "1.12", "1.13"],
    sources: inline(VERIFIER_PAGE, { "v1.7": 72, "v1.8": 73, ...at(V1_9, 70), master: 73 }, 20),
  },
  // start, commit, pause, resume and reverse all include this one file as their answer
  {
    file: "success.json",
    kind: "operation",
    commands: ["start", "commit", "pause", "resume", "reverse"],
    versions: ["0.9", "1.0", "1.7", "1.8", "1.9", "1.10", "1.11", "1.12", "1.13"],
    sources: c2c("source/includes/api/responses/success.json", ["v0.9", "v1.0", "v1.7", "v1.8", ...V1_9_TO_MASTER]),
  },
  {
    file: "mongosync-page-start-answer.json",
    kind: "operation",
    commands: ["start"],
    versions: ["0.9", "1.0"],
    sources: inline("source/reference/mongosync.txt", { "v0.9": 238, "v1.0": 254 }, 1),
  },
  // the migration verifier's page, "Check Progress": its answer once done
  {
    file: "verifier-page-verifier-progress.json",
    kind: "verifier-progress",
    versions: ["1.7", "1.8", "1.9", "1.10", "1.11", "1.12", "1.13"],
    sources: inline(VERIFIER_PAGE, { "v1.7": 140, "v1.8": 141, ...at(V1_9, 138), master: 141 }, 15),
  },
  {
    file: "verifier-readme-progress.json",
    kind: "verifier-progress",
    versions: ["v0.2.1"],
    sources: [
      {
        repo: VERIFIER,
        path: "README.md",
        ref: "v0.2.1",
        commit: "c67b514f93b26fbdce889a24902734e1653c87cc",
        lines: [164, 212],
      },
    ],
  },
];

const DIR = new URL("../fixtures/docs-examples/", import.meta.url);

/** The example as published, parsed. */
export function exampleAnswer(e: DocsExample): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(e.file, DIR), "utf8")) as Record<string, unknown>;
}

/** `progress-1.9.json (mongodb/docs-cluster-to-cluster-sync source/includes/api/responses/progress.json @ v1.9 …)`. */
export function exampleName(e: DocsExample): string {
  const s = e.sources[0]!;
  return `${e.file} (${s.repo} ${s.path} @ ${s.ref}${e.sources.length > 1 ? ` and ${e.sources.length - 1} more` : ""})`;
}
