#!/usr/bin/env node
// The GitHub Action's work (action.yml at the repository root runs it after `npm ci`): syncbook
// lint or rehearse over the runbooks named by the `paths` input, with the inputs turned into the
// CLI's own flags. Inputs arrive as SYNCBOOK_INPUT_<NAME> variables (action.yml passes them
// through `env:`, never spliced into a script). Runnable outside Actions too, which is how
// test/ci/action.e2e.test.ts runs it.
//
// lint:     one `syncbook lint` over every path (annotations with the default `github` format),
//           and a second, quiet one in SARIF when `sarif-file` is set. Exit: lint's.
// rehearse: `syncbook rehearse` of each runbook the paths hold (found as lint finds them), each in
//           a folded log group, with its report in <report-dir>/<path without .yaml>. Every runbook
//           is rehearsed even after one fails. Exit: 0 when all passed, else the code they share,
//           else 1.
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/cli/syncbook.cjs");
const input = (name) => (process.env[`SYNCBOOK_INPUT_${name.toUpperCase().replace(/-/g, "_")}`] ?? "").trim();
const words = (s) => s.split(/\s+/).filter(Boolean);
// workflow-command property values escape %, CR, LF, `:` and `,` (as src/lint/format/github.ts)
const prop = (s) =>
  s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A").replace(/:/g, "%3A").replace(/,/g, "%2C");

/** `key=value` for later steps (`steps.<id>.outputs`); nothing outside Actions. */
function output(key, value) {
  if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, `${key}=${value}\n`);
}

function syncbook(args, { capture = false, env = {} } = {}) {
  process.stdout.write(`$ syncbook ${args.join(" ")}\n`);
  const r = spawnSync(process.execPath, [cli, ...args], {
    stdio: ["ignore", capture ? "pipe" : "inherit", "inherit"],
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  if (r.error) {
    process.stderr.write(`syncbook action: cannot run ${cli}: ${r.error.message}\n`);
    return { code: 2, stdout: "" };
  }
  return { code: r.status ?? 1, stdout: r.stdout ?? "" };
}

function fail(message, hint) {
  process.stdout.write(`::error title=syncbook action::${message}\n`);
  if (hint) process.stderr.write(`  hint: ${hint}\n`);
  output("exit-code", 2);
  process.exit(2);
}

// Paths the workflow's other steps see are relative to the repository root (GITHUB_WORKSPACE),
// while this step runs in `working-directory`: annotations (matched to the pull request's diff),
// the SARIF file (where upload-sarif looks) and the outputs are given from the root.
const workspace = resolve(process.env.GITHUB_WORKSPACE || process.cwd());
/** A path of this folder as seen from the repository root (unchanged when outside it). */
const fromRoot = (p) => {
  const rel = relative(workspace, resolve(p)).replace(/\\/g, "/");
  return rel === "" || rel.startsWith("..") ? p : rel;
};

const command = input("command") || "lint";
const paths = words(input("paths") || "runbooks");
const extra = words(input("args"));

if (command === "lint") {
  const format = input("format") || "github";
  const maxWarnings = input("max-warnings");
  const flags = maxWarnings !== "" ? ["--max-warnings", maxWarnings] : [];
  const { code } = syncbook(["lint", ...paths, "--format", format, ...flags, ...extra]);
  const sarif = input("sarif-file");
  if (sarif) {
    // the same findings again, as SARIF into the file; its job summary was written by the first run
    const r = syncbook(["lint", ...paths, "--format", "sarif", ...extra], {
      capture: true,
      env: { GITHUB_STEP_SUMMARY: "" },
    });
    if (r.stdout.startsWith("{")) {
      // relative to the repository root, where the documented upload-sarif step looks for it
      const at = resolve(workspace, sarif);
      mkdirSync(dirname(at), { recursive: true });
      writeFileSync(at, r.stdout);
      output("sarif-file", fromRoot(at));
      process.stdout.write(`SARIF: ${fromRoot(at)}\n`);
    }
  }
  output("exit-code", code);
  process.exit(code);
} else if (command === "rehearse") {
  // the runbooks lint would read: same search, same order
  const { findRunbookFiles } = await import(pathToFileURL(join(root, "dist/src/lint/files.js")).href);
  let files;
  try {
    files = findRunbookFiles(paths);
  } catch (err) {
    fail(err.message, err.hint);
  }
  const reportDir = input("report-dir");
  const renderer = input("renderer") || "simple";
  const timeScale = input("time-scale");
  const results = [];
  for (const file of files) {
    const rel = relative(process.cwd(), resolve(file)).replace(/\\/g, "/");
    const name = (rel.startsWith("..") ? file : rel).replace(/\.ya?ml$/i, "").replace(/^[./]+/, "");
    const flags = ["--renderer", renderer];
    if (timeScale) flags.push("--time-scale", timeScale);
    if (reportDir) flags.push("--report", join(reportDir, name));
    process.stdout.write(`::group::syncbook rehearse ${file}\n`);
    const { code } = syncbook(["rehearse", file, ...flags, ...extra]);
    process.stdout.write("::endgroup::\n");
    if (code !== 0)
      process.stdout.write(
        `::error file=${prop(fromRoot(file))},title=syncbook rehearse::${prop(file)}: exit ${code}\n`,
      );
    results.push({ file, code });
  }
  const failed = results.filter((r) => r.code !== 0);
  process.stdout.write(
    `\nrehearsed ${results.length} runbook(s): ${results.length - failed.length} passed${failed.length ? `, ${failed.length} failed (${failed.map((f) => `${f.file}: exit ${f.code}`).join(", ")})` : ""}\n`,
  );
  const codes = [...new Set(failed.map((f) => f.code))];
  const code = codes.length === 0 ? 0 : codes.length === 1 ? codes[0] : 1;
  if (reportDir) output("report-dir", fromRoot(reportDir));
  output("exit-code", code);
  process.exit(code);
} else {
  fail(`command must be lint or rehearse, not "${command}"`, "Set the action's `command` input to lint or rehearse.");
}
