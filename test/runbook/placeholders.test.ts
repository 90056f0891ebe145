/**
 * Issue 12, items 6, 7 and 9 (short secrets), at the loader:
 * - "Reject `__proto__`, `constructor`, `prototype` keys anywhere in a runbook, with a positioned error."
 * - "Give placeholders types (numbers and booleans coerce and are checked when the value is known)
 *   and judge every option before the first request."
 * - "Short secrets (under 3 characters) are never redacted: warn at lint that they cannot be protected."
 */
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { lintRunbook, lintWithLoader } from "../../src/lint/index.js";
import { loadRunbookPlugins } from "../../src/plugin/index.js";
import { MIN_SECRET_LENGTH } from "../../src/redact.js";
import { parseRunbook, type LoadOptions } from "../../src/runbook/index.js";
import { callStandIns, rehearsalStandIns } from "../../src/rehearse/index.js";
import { PLUGIN_CALL_KINDS } from "../../src/steps/index.js";

const HEAD = `runbook: 1
name: t
serviceVersion: "1.22.0"
clusters:
  cluster0: { topology: replicaSet, serverVersion: "6.0" }
  cluster1: { topology: replicaSet, serverVersion: "6.0" }
instances: [http://127.0.0.1:27182]
`;
const load = (steps: string, opts: LoadOptions = {}, head = "") =>
  parseRunbook(`${HEAD}${head}steps:\n${steps}`, "rb.yaml", { env: {}, ...opts });
const at = (d: { line: number; column: number; rule: string }) => `${d.line}:${d.column} ${d.rule}`;

describe("reserved keys", () => {
  it("`__proto__` in a start body is an error at its key; lint never sees an inherited field", async () => {
    const l = await load(
      "  - start:\n      source: cluster0\n      destination: cluster1\n      __proto__: { reversible: true }\n",
    );
    expect(l.runbook).toBeUndefined();
    expect(l.diagnostics.map(at)).toEqual(["12:7 reserved-key"]);
    expect(l.diagnostics[0]?.message).toMatch(/`__proto__` is not allowed as a key.*replace the object's prototype/);
    expect(lintRunbook(l)).toEqual([]);
  });

  it.each([
    ["constructor", "  - hook: { use: shell, with: { command: [true], constructor: 1 } }\n", "9:50"],
    ["prototype", "  - start: { source: cluster0, destination: cluster1, x-passthrough: { prototype: 1 } }\n", "9:72"],
    ["__proto__", '  - { waitFor: { state: RUNNING }, "__proto__": 1 }\n', "9:36"],
  ])("`%s` anywhere (plugin options, x-passthrough, a step) is refused at its position", async (key, steps, pos) => {
    const l = await load(steps);
    expect(l.runbook).toBeUndefined();
    expect(l.diagnostics.map(at)).toEqual([`${pos} reserved-key`]);
    expect(l.diagnostics[0]?.message).toContain(`\`${key}\``);
  });

  it("in vars too, and a value named so is fine", async () => {
    const l = await load("  - waitFor: { state: RUNNING }\n", {}, "vars: { prototype: 1 }\n");
    expect(l.diagnostics.map(at)).toEqual(["8:9 reserved-key"]);
    const ok = await load('  - notify: "constructor __proto__ prototype"\n');
    expect(ok.diagnostics).toEqual([]);
  });

  it("with a cyclic alias beside it, the reserved key is the finding, alone (one walk finds both, issue 41)", async () => {
    const l = await load("  - waitFor: { state: RUNNING }\n", {}, "vars: { prototype: 1 }\nx: &a [*a]\n");
    expect(l.diagnostics.map(at)).toEqual(["8:9 reserved-key"]);
    const alias = await load("  - waitFor: { state: RUNNING }\n", {}, "x: &a [1, [*a]]\n");
    expect(alias.diagnostics.map(at)).toEqual(["8:12 yaml"]);
    expect(alias.diagnostics[0]?.message).toMatch(/the alias \*a refers to a node that contains it/);
  });
});

describe("typed placeholders", () => {
  it("a whole-value ${env.*} takes the type its field wants: numbers, durations in seconds, booleans", async () => {
    const l = await load(
      '  - waitFor: { state: RUNNING, lagBelow: "${env.LAG}", timeout: "${env.T}" }\n    when: "${env.GO}"\n',
      { env: { LAG: "4.5", T: "120", GO: "false" } },
    );
    expect(l.diagnostics).toEqual([]);
    expect(l.runbook?.steps[0]).toEqual({ waitFor: { state: "RUNNING", lagBelow: 4.5, timeout: 120 }, when: false });
  });

  it("a value that is not what the field wants is an error at its line, before anything runs", async () => {
    const l = await load('  - waitFor: { state: RUNNING, timeout: "${env.T}" }\n', { env: { T: "soon" } });
    expect(l.runbook).toBeUndefined();
    expect(l.diagnostics.map(at)).toEqual(["9:41 schema"]);
  });

  // issue 39, point 8: "the editor's schema check flags `lagBelow: \"${vars.maxLag}\"` in runbooks that lint accepts"
  it("a ${vars.*} where a duration is expected: the editor's schema takes the placeholder; the loader resolves it, or names the variable and where it is set", async () => {
    const text = (v: string) =>
      `${HEAD}vars: { maxLag: ${v} }\nsteps:\n  - waitFor: { canCommit: true, lagBelow: "\${vars.maxLag}" }\n`;
    // the editor validates the text as written (no interpolation) against schemas/runbook.schema.json
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    const editor = ajv.compile(
      JSON.parse(readFileSync(new URL("../../schemas/runbook.schema.json", import.meta.url), "utf8")) as object,
    );
    expect(editor(parseYaml(text("5"))), JSON.stringify(editor.errors)).toBe(true);
    // a typo in the placeholder, or a word, is still an error to the editor
    expect(editor(parseYaml(text("5").replace("${vars.maxLag}", "${vars.maxLag")))).toBe(false);
    expect(editor(parseYaml(text("5").replace("${vars.maxLag}", "five")))).toBe(false);
    // the loader: a number resolves
    const ok = await parseRunbook(text("5"), "rb.yaml", { env: {} });
    expect(ok.diagnostics).toEqual([]);
    expect(ok.runbook?.steps[0]).toEqual({ waitFor: { canCommit: true, lagBelow: 5 } });
    // a value that is no duration: said as the variable's, with file:line:col of the use and of the variable
    const bad = await parseRunbook(text('"five"'), "rb.yaml", { env: {} });
    expect(bad.runbook).toBeUndefined();
    expect(bad.diagnostics.map(at)).toEqual(["10:43 schema"]);
    expect(bad.diagnostics[0]?.message).toBe(
      "`${vars.maxLag}` is `five`: expected a duration like 30s or 10m, got `five`",
    );
    expect(bad.diagnostics[0]?.hint).toMatch(
      /^vars\.maxLag is set at rb\.yaml:8:\d+: give it a value this field takes\. Durations are/,
    );
    // the same value from --var: said as the flag's, not at the runbook's default it overrides
    const flag = await parseRunbook(text("5"), "rb.yaml", { env: {}, vars: { maxLag: "five" } });
    expect(flag.diagnostics.map(at)).toEqual(["10:43 schema"]);
    expect(flag.diagnostics[0]?.hint).toMatch(/^vars\.maxLag is set by --var: give it a value this field takes\./);
  });

  // issue 39, point 8: "a schema typo cascades into false `format uri` errors on correct lines" (in the editor)
  it.each([
    ["an instance field", 'instances: [{ url: "http://127.0.0.1:27182", nmae: a }]\n', "/instances/0"],
    ["a step field", "", "/steps/0"],
    ["a defaults field", "defaults: { polInterval: 2s }\n", "/defaults"],
    [
      "a notifier field",
      'notify: [{ use: webhook, on: [run.finished], wtih: { url: "https://example.com/h" } }]\n',
      "/notify/0",
    ],
  ])(
    "a typo in %s: the editor's errors stay on the typo's line, none on the correct URLs around it",
    (_what, head, at) => {
      const ajv = new Ajv2020.default({ strict: false, allErrors: true });
      const editor = ajv.compile(
        JSON.parse(readFileSync(new URL("../../schemas/runbook.schema.json", import.meta.url), "utf8")) as object,
      );
      const step = head
        ? "  - { id: s, waitFor: { canCommit: true } }\n"
        : "  - { id: s, waitFor: { canCommit: true }, timout: 5s }\n";
      const text = `${HEAD.replace("instances: [http://127.0.0.1:27182]\n", head.startsWith("instances") ? "" : "instances: [http://127.0.0.1:27182]\n")}verifier: "http://127.0.0.1:27020"\n${head}steps:\n${step}`;
      expect(editor(parseYaml(text))).toBe(false);
      const errors = editor.errors ?? [];
      expect(errors.length).toBeGreaterThan(0);
      for (const e of errors) {
        expect(e.keyword, JSON.stringify(e)).not.toBe("format");
        // the typo's object, or a container of it: never a sibling's correct value
        expect(at.startsWith(e.instancePath) || e.instancePath.startsWith(at), JSON.stringify(e)).toBe(true);
        expect(e.instancePath, JSON.stringify(e)).not.toMatch(/\/url$|^\/verifier$/);
      }
    },
  );

  it("a string field keeps the string; a placeholder inside a string is never coerced", async () => {
    const l = await load('  - waitFor: { info: "${env.I}", state: RUNNING }\n  - notify: "lag ${env.I}"\n', {
      env: { I: "120" },
    });
    expect(l.diagnostics).toEqual([]);
    expect(l.runbook?.steps.map((s) => ("waitFor" in s ? s.waitFor?.info : "notify" in s ? s.notify : ""))).toEqual([
      "120",
      "lag 120",
    ]);
  });

  it("lint (no environment) cannot judge them, and says only that (info)", async () => {
    const l = await load('  - waitFor: { state: RUNNING, timeout: "${env.T}" }\n', { env: "lint" });
    expect(l.diagnostics.map((d) => [d.severity, d.message])).toEqual([
      ["info", "`timeout`: `${env.T}` is not set here (not judged): it comes from the environment"],
    ]);
  });

  const HOOK = '  - hook: { use: http, with: { url: "http://127.0.0.1:9/x", method: GET, retries: "${env.R}" } }\n';
  it("plugin options: retries: ${env.R} is judged when R is known, and the plugin gets a number", async () => {
    const bad = await load(HOOK, { env: { R: "three" } });
    expect(bad.diagnostics).toEqual([]);
    const b = await loadRunbookPlugins(bad, { callKinds: PLUGIN_CALL_KINDS });
    expect(b.diagnostics.map(at)).toEqual(["9:83 plugin-options"]);
    expect(b.diagnostics[0]?.message).toMatch(/retries/);

    const tooMany = await loadRunbookPlugins(await load(HOOK, { env: { R: "99" } }), { callKinds: PLUGIN_CALL_KINDS });
    expect(tooMany.diagnostics.map((d) => d.message)).toEqual(["hook `http`: option `retries` must be <= 10"]);

    const good = await load(HOOK, { env: { R: "2" } });
    // one character: it cannot be redacted, and the loader says so (a threshold is better a --var)
    expect(good.diagnostics.map(at)).toEqual(["9:84 secret-too-short"]);
    const g = await loadRunbookPlugins(good, { callKinds: PLUGIN_CALL_KINDS });
    expect(g.diagnostics).toEqual([]);
    const step = good.runbook?.steps[0];
    expect(step && "hook" in step ? step.hook?.with : undefined).toEqual({
      url: "http://127.0.0.1:9/x",
      method: "GET",
      retries: 2,
    });

    // lint mode: R unknown, nothing to judge
    const lint = await loadRunbookPlugins(await load(HOOK, { env: "lint" }), { callKinds: PLUGIN_CALL_KINDS });
    expect(lint.diagnostics).toEqual([]);
  });

  it("through a var too: vars: { r: ${env.R} } then retries: ${vars.r}", async () => {
    const steps = '  - hook: { use: http, with: { url: "http://127.0.0.1:9/x", retries: "${vars.r}" } }\n';
    const l = await load(steps, { env: { R: "1.0" } }, 'vars: { r: "${env.R}" }\n');
    expect((await loadRunbookPlugins(l, { callKinds: PLUGIN_CALL_KINDS })).diagnostics).toEqual([]);
    const step = l.runbook?.steps[0];
    const options: Record<string, unknown> | undefined = step && "hook" in step ? step.hook?.with : undefined;
    expect(options?.retries).toBe(1);
  });

  // a helper's runbook: lint said `plugin-options: … must match format "uri"` of the placeholder's
  // own text (the var's value, `${env.SWITCH_URL}` as written), while `run` passed it
  it("lint: a var made of ${env.*} is not judged where it is used (a uri option); a literal one still is", async () => {
    const steps = '  - stopWrites: { use: http, with: { url: "${vars.writeSwitch}" } }\n';
    const plugins = async (head: string, opts: LoadOptions) =>
      (await loadRunbookPlugins(await load(steps, opts, head), { callKinds: PLUGIN_CALL_KINDS })).diagnostics.map(
        (d) => `${d.rule}: ${d.message}`,
      );
    const fromEnv = 'vars: { writeSwitch: "${env.SWITCH_URL}" }\n';
    expect(await plugins(fromEnv, { env: "lint" })).toEqual([]);
    expect(await plugins(fromEnv, { env: "lint", envLengths: { SWITCH_URL: "http://h/w/long" } })).toEqual([]);
    // known (a run): judged on its value
    expect(await plugins(fromEnv, { env: { SWITCH_URL: "http://h/writes" } })).toEqual([]);
    expect(await plugins(fromEnv, { env: { SWITCH_URL: "not a url at all" } })).toEqual([
      'plugin-options: hook `http`: option `url` must match format "uri"',
    ]);
    // a --var gives it: judged
    expect(await plugins(fromEnv, { env: "lint", vars: { writeSwitch: "/relative" } })).toEqual([
      'plugin-options: hook `http`: option `url` must match format "uri"',
    ]);
    // a literal value that is no URI: an error in lint too
    expect(await plugins('vars: { writeSwitch: "/sim/writes" }\n', { env: "lint" })).toEqual([
      'plugin-options: hook `http`: option `url` must match format "uri"',
    ]);
  });
});

describe("short secrets", () => {
  it(`an \${env.*} value under ${MIN_SECRET_LENGTH} characters is a warning at its placeholder; the value is never shown`, async () => {
    const l = await load('  - notify: "token ${env.PW} end"\n', { env: { PW: "q7" } });
    expect(l.diagnostics.map(at)).toEqual(["9:20 secret-too-short"]);
    expect(l.diagnostics[0]?.severity).toBe("warning");
    expect(l.diagnostics[0]?.message).toMatch(
      /`\$\{env\.PW\}` is 2 characters long: a secret under 3 characters cannot be redacted/,
    );
    expect(JSON.stringify(l.diagnostics)).not.toContain("q7");
    expect(l.runbook).toBeDefined();
  });
  it("in vars too; a secret of 3 characters or an empty one is not warned about; lint mode cannot know", async () => {
    expect(
      (await load("  - notify: x\n", { env: { A: "z" } }, 'vars: { a: "${env.A}" }\n')).diagnostics.map(at),
    ).toEqual(["8:13 secret-too-short"]);
    expect((await load('  - notify: "${env.PW}"\n', { env: { PW: "abc" } })).diagnostics).toEqual([]);
    expect((await load('  - notify: "x${env.PW}"\n', { env: { PW: "" } })).diagnostics).toEqual([]);
    expect((await load('  - notify: "${env.PW}"\n', { env: "lint" })).diagnostics).toEqual([]);
    // lint where the environment is at hand (syncbook lint passes process.env): only the length is read
    const lint = await load('  - notify: "${env.PW}"\n', { env: "lint", envLengths: { PW: "ab" } });
    expect(lint.diagnostics.map(at)).toEqual(["9:14 secret-too-short"]);
    expect(JSON.stringify(lint.diagnostics)).not.toContain('"ab"');
    expect(lint.runbook?.steps[0]).toEqual({ notify: "${env.PW}" });
  });

  // issue 39, point 5: "a team must be able to accept one warning in the runbook with a reason": the
  // loader's warnings too, not only the rule families'
  it("accept: takes a loader's warning (info with the reason, not counted); an entry for a loader's error says errors are not accepted", async () => {
    const head = 'accept:\n  - { rule: secret-too-short, reason: "the test token is short on purpose" }\n';
    const l = await load('  - notify: "token ${env.PW} end"\n', { env: { PW: "q7" } }, head);
    const all = lintWithLoader(l);
    const short = all.filter((d) => d.rule === "secret-too-short");
    expect(short).toHaveLength(1);
    expect(short[0]).toMatchObject({ severity: "info", accepted: "the test token is short on purpose" });
    expect(short[0]?.message).toMatch(/\(accepted in the runbook: the test token is short on purpose\)$/);
    expect(all.filter((d) => d.rule === "accept-unused")).toEqual([]);
    expect(all.filter((d) => d.severity === "warning")).toEqual([]);
    // the rules alone (lintRunbook) do not call the entry unused either: the loader's warning used it
    expect(lintRunbook(l).filter((d) => d.rule === "accept-unused")).toEqual([]);
    // without the warning, the entry is unused
    const none = await load('  - notify: "token ${env.PW} end"\n', { env: { PW: "q7q7" } }, head);
    expect(lintWithLoader(none).map((d) => d.rule)).toContain("accept-unused");
    // an error of the loader is never accepted, and the entry says why
    const err = await load(
      '  - notify: "${vars.nope}"\n',
      {},
      'vars: { yes: 1 }\naccept:\n  - { rule: interpolation, reason: "no" }\n',
    );
    const judged = lintWithLoader(err);
    expect(judged.find((d) => d.rule === "interpolation")?.severity).toBe("error");
    expect(judged.find((d) => d.rule === "accept-unused")?.message).toMatch(
      /`interpolation` is an error here: errors cannot be accepted/,
    );
  });
});

// The runbook's name is its journal folder's name on disk (`.syncbook/<name>/`, which CI uploads)
// and is in every report and page: a secret there cannot be redacted (safeSegment rewrites what
// the redactor would look for), so the loader refuses one, in every mode.
// a review: a stopWrites hook that turns writes on (`enabled: true` written out) beside an option
// lint cannot see passed lint; run --dry-run refused it. Judged when its effect reads none of them
describe("lint: which way a hook turns writes, beside an option it cannot see", () => {
  const on = (options: string, head = 'vars: { switch: "${env.SWITCH_URL}" }\n') =>
    load(`  - stopWrites: { use: sim-writes, with: ${options} }\n`, { env: "lint" }, head).then(async (l) =>
      (await loadRunbookPlugins(l, { callKinds: PLUGIN_CALL_KINDS })).diagnostics.map((d) => d.message),
    );
  it("enabled: true written out, the url unknown: an error; enabled unknown: not judged", async () => {
    expect(await on('{ url: "${vars.switch}", enabled: true }')).toEqual([
      "hook `sim-writes` with these options turns application writes on, under `stopWrites`: the interlock would say writes are stopped while they flow, and writes during commit may be lost",
    ]);
    expect(await on('{ url: "${env.SWITCH_URL}", enabled: true }', "")).toHaveLength(1);
    expect(await on('{ url: "${vars.switch}", enabled: "${env.E}" }')).toEqual([]);
    expect(await on('{ url: "${vars.switch}", enabled: false }')).toEqual([]);
  });
});

// status loads the runbook with the calls' stand-ins (a person on the bridge call has no secrets):
// a variable made of an unset `${env.*}` shows as a secret's value does, `***`, as the journal of a
// run that had it set holds it; a review: status compared `stand-in` with the journal's `***` and
// told the operator to give a --var the cutover never got
describe("a variable that took the stand-in", () => {
  it("shows masked in the runbook's values, whole or in part; its use in a hook gets the stand-in", async () => {
    const head = 'vars: { token: "${env.T}", url: "https://h/${env.T}/x", plain: p }\n';
    const steps = '  - hook: { use: shell, with: { command: [echo, "${vars.token}", "${vars.url}"] } }\n';
    const l = await load(steps, { env: {}, standIn: callStandIns(false) }, head);
    expect(l.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(l.stoodIn).toEqual(["T"]);
    expect(l.vars).toMatchObject({ token: "***", url: "https://h/***/x", plain: "p" });
    const step = l.runbook?.steps[0];
    const options: Record<string, unknown> | undefined = step && "hook" in step ? step.hook?.with : undefined;
    expect(options?.command).toEqual(["echo", "stand-in", "stand-in"]);
    // set, it is redacted alike
    const set = await load(steps, { env: { T: "a-long-secret" }, standIn: callStandIns(false) }, head);
    expect(set.vars).toMatchObject({ token: "***", url: "https://h/***/x" });
  });
});

describe("a secret in the runbook's name", () => {
  const SECRET = "Pa$$w0rd-Secret9876";
  const named = (name: string, opts: LoadOptions, head = "") =>
    parseRunbook(
      `${HEAD.replace("name: t\n", () => `name: ${name}\n`)}${head}steps:\n  - notify: x\n`,
      "rb.yaml",
      opts,
    );
  const only = (l: { diagnostics: { line: number; column: number; rule: string; severity: string }[] }) =>
    l.diagnostics.map((d) => `${at(d)} ${d.severity}`);

  it("`${env.*}` in name is an error at the placeholder, in every mode; never a pattern error nor an info", async () => {
    const modes: [string, LoadOptions][] = [
      ["run and dry run, the variable set", { env: { TENANT: SECRET } }],
      ["run and dry run, the variable unset", { env: {} }],
      ["lint", { env: "lint" }],
      ["lint with the environment at hand (lengths only)", { env: "lint", envLengths: { TENANT: "ab" } }],
      ["rehearse (stand-ins)", { env: {}, standIn: rehearsalStandIns(false) }],
      ["rehearse, the variable set", { env: { TENANT: SECRET }, standIn: rehearsalStandIns(true) }],
    ];
    for (const [mode, opts] of modes) {
      const l = await named('"sales-${env.TENANT}"', opts);
      expect(only(l), mode).toEqual(["2:14 secret-in-name error"]);
      expect(l.diagnostics[0]?.message, mode).toBe(
        "`${env.TENANT}` in `name`: a value from the environment is a secret, and the name becomes the journal folder's name on disk (`.syncbook/<name>/`) and appears in every report and page, where a secret cannot be redacted",
      );
      expect(l.diagnostics[0]?.hint, mode).toMatch(/\$\{vars\.\*\}.*--var/);
      // nothing read from the environment for it: the name stays as written
      expect(JSON.stringify(l), mode).not.toContain("w0rd");
      expect(l.stoodIn ?? [], mode).toEqual([]);
      // lint's rules add nothing about the name either, and the finding is never accepted away
      expect(
        lintWithLoader(l)
          .filter((d) => d.severity === "error")
          .map(at),
        mode,
      ).toEqual(["2:14 secret-in-name"]);
    }
  });

  it("positions: plain and quoted, several placeholders, a literal `$${` is not one", async () => {
    const env = { env: { A: "alpha-1", B: "beta-22" } };
    expect(only(await named("sales-${env.A}", env))).toEqual(["2:13 secret-in-name error"]);
    expect(only(await named("'${env.A}'", env))).toEqual(["2:8 secret-in-name error"]);
    expect(only(await named('"${env.A}-${env.B}"', env))).toEqual([
      "2:8 secret-in-name error",
      "2:17 secret-in-name error",
    ]);
    // `$${` writes a literal `${`: no secret, and the name's pattern judges it
    expect((await named('"x$${env.A}"', env)).diagnostics.map((d) => d.rule)).toEqual(["schema"]);
    // a name that is not a secret is interpolated and judged as before
    const plain = await named('"sales-${vars.t}"', env, "vars: { t: acme }\n");
    expect(plain.diagnostics).toEqual([]);
    expect(plain.runbook?.name).toBe("sales-acme");
  });

  it("a `${vars.x}` made of `${env.*}` is a secret too, unless --var gives it", async () => {
    const head = 'vars: { t: "x-${env.TENANT}" }\n';
    for (const opts of [{ env: { TENANT: SECRET } }, { env: "lint" as const }]) {
      const l = await named('"sales-${vars.t}"', opts, head);
      expect(only(l)).toEqual(["2:14 secret-in-name error"]);
      expect(l.diagnostics[0]?.message).toMatch(/^`\$\{vars\.t\}` in `name` is made of `\$\{env\.TENANT\}`/);
      expect(JSON.stringify(l.diagnostics)).not.toContain("w0rd");
    }
    const given = await named('"sales-${vars.t}"', { env: { TENANT: SECRET }, vars: { t: "acme" } }, head);
    expect(given.diagnostics).toEqual([]);
    expect(given.runbook?.name).toBe("sales-acme");
  });
});
