/**
 * Issue 14, point 8: "Lint fits real repositories. `lint <dir>` skips YAML files that are not
 * runbooks (no `runbook:` key) unless named explicitly; an instance URL from an unset `${env.*}`
 * says 'not set here (not judged)', not 'expected a string, got a mapping';
 * `commit-without-stop-writes` explains that write blocking covering the source counts (before
 * 1.20), as the documentation says; schema errors and rule errors are reported in one pass; 'did
 * you mean' for enum values (`topology: shard`) and plugin options." Also point 9: `--list-rules`
 * cites the public documentation, never files that are not in this repository.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { lintFiles } from "../../src/lint/run.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "syncbook-lint-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const RUNBOOK = (steps: string, head = "", clusters = "{ topology: replicaSet }") => `runbook: 1
name: r
serviceVersion: "1.22.0"
clusters:
  cluster0: ${clusters}
  cluster1: { topology: replicaSet }
instances: [http://127.0.0.1:27182]
${head}steps:
${steps}`;
const START = "  - { id: start, start: { source: cluster0, destination: cluster1 } }\n";
const READY = "  - { id: ready, waitFor: { canCommit: true } }\n";
const COMMIT = "  - { id: commit, commit: {} }\n  - { id: done, waitFor: { state: COMMITTED } }\n";

const findings = (d: { diagnostics: { rule: string; severity: string; message: string; line: number }[] }) =>
  d.diagnostics.map((x) => `${x.line} ${x.severity} ${x.rule}: ${x.message}`);

describe("lint in a real repository", () => {
  it("a folder: YAML without a top-level `runbook:` key is not a runbook and is skipped; named, it is linted", async () => {
    mkdirSync(join(dir, "deploy"));
    writeFileSync(join(dir, "deploy", "compose.yaml"), "services:\n  db: { image: mongo }\n");
    writeFileSync(join(dir, ".github-workflow.yml"), "on: push\n");
    writeFileSync(join(dir, "cutover.yaml"), `# a runbook\n${RUNBOOK(READY)}`);
    const r = await lintFiles([dir]);
    expect(r.files).toEqual([join(dir, "cutover.yaml")]);
    const named = await lintFiles([join(dir, "deploy", "compose.yaml")]);
    expect(named.diagnostics.some((d) => d.message.includes("missing the required field `runbook`"))).toBe(true);
    const only = await lintFiles([join(dir, "deploy")]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(only).toBeInstanceOf(UserError);
    expect((only as UserError).message).toMatch(
      /no runbooks in folder .*deploy \(1 YAML file\(s\) without a top-level `runbook:` key, so not runbooks\)/,
    );
  });

  it("schema errors and rule errors in one pass, with did-you-mean for an enum value", async () => {
    writeFileSync(join(dir, "r.yaml"), RUNBOOK(START + READY + COMMIT, "", "{ topology: shard }"));
    const r = await lintFiles([join(dir, "r.yaml")]);
    expect(findings(r)).toEqual([
      "5 error schema: `topology`: expected one of `replicaSet`, `sharded`, got `shard`; did you mean `sharded`?",
      // (service 1.17+: the afterDataCopy default, a note)
      expect.stringMatching(/^9 info build-indexes-after-copy: From service 1\.17, `afterDataCopy` is the default/),
      expect.stringMatching(/^11 error commit-without-stop-writes: No stopWrites step runs before this commit/),
      expect.stringMatching(/^11 warning commit-without-verify: .*"Before you switch your application workload/),
    ]);
  });

  it("commit-without-stop-writes explains that write blocking covering the source counts before 1.20", async () => {
    const start =
      "  - { id: start, start: { source: cluster0, destination: cluster1, enableUserWriteBlocking: true } }\n";
    writeFileSync(
      join(dir, "r.yaml"),
      RUNBOOK(start + READY + COMMIT)
        .replace("replicaSet }", 'replicaSet, serverVersion: "6.0" }')
        .replace('"1.22.0"', '"1.19.0"'),
    );
    const r = await lintFiles([join(dir, "r.yaml")]);
    const m = r.diagnostics.find((d) => d.rule === "commit-without-stop-writes")?.message;
    expect(m).toMatch(
      /Write blocking that covers the source counts \(before 1\.20: `enableUserWriteBlocking: true` or `"sourceAndDestination"` in start, which blocks source writes once commit is sent\), and the start at line 9 sets it: declare `writesStoppedExternally: true`/,
    );
    writeFileSync(
      join(dir, "r.yaml"),
      RUNBOOK(start + READY + COMMIT, "writesStoppedExternally: true\n").replace(
        "replicaSet }",
        'replicaSet, serverVersion: "6.0" }',
      ),
    );
    expect(
      (await lintFiles([join(dir, "r.yaml")])).diagnostics.filter((d) => d.rule === "commit-without-stop-writes"),
    ).toEqual([]);
  });

  it("did you mean for plugin options: a misspelt option and an enum value", async () => {
    writeFileSync(
      join(dir, "r.yaml"),
      RUNBOOK(
        "  - { id: stop, stopWrites: { use: shell, with: { comand: [x] }, undo: { use: shell, with: { command: [y] } } } }\n",
        "notify:\n  - { use: stdout, on: [run.finished], with: { format: jsn } }\n",
      ),
    );
    const r = await lintFiles([join(dir, "r.yaml")]);
    const messages = r.diagnostics.map((d) => d.message);
    expect(messages).toContain("hook `shell`: unknown option `comand`; did you mean `command`?");
    expect(messages).toContain(
      'notifier `stdout`: option `format`: expected one of `text`, `json`, got "jsn"; did you mean `json`?',
    );
  });

  it("--list-rules cites the public documentation, not the project's internal spec files", () => {
    const cli = join(process.cwd(), "dist/cli/syncbook.cjs");
    for (const format of ["pretty", "json", "sarif"]) {
      const r = spawnSync(process.execPath, [cli, "lint", "--list-rules", "--format", format], { encoding: "utf8" });
      expect(r.status).toBe(0);
      expect(r.stdout, format).not.toMatch(/sync-service-api\.md|service-facts\.md|DESIGN\.md|spec\//);
      expect(r.stdout, format).toContain("https://www.mongodb.com/docs/cluster-to-cluster-sync/current/");
    }
  });
});
