/**
 * An owed undo is made from the runbook with the run's `--var` values (src/run/earlier.ts):
 * `undoVarsDiffer` names the variables its step is made of whose value differs from the run that
 * called the hook; `undoVarsRefusal` says so with the command that has the hook's values; and
 * `wayOnVars` (src/next-run.ts) is what every way on repeats of the last run's `--var` values.
 * The end-to-end case: test/run/undo-vars.e2e.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { HookRun, JournalState } from "../../src/journal/index.js";
import { execFileSync } from "node:child_process";
import { MASKED_VAR_WORDS, varText, varValue, wayOnVars } from "../../src/next-run.js";
import { parseVars } from "../../src/cli/execute.js";
import { shellCommand } from "../../src/text.js";
import {
  undoVarsDiffer,
  undoVarsRefusal,
  varsChangedRefusal,
  varsChangedSince,
  varsChangedText,
  cutoverValuesFrom,
  cutoverTargetFrom,
  whenVars,
} from "../../src/run/earlier.js";
import { parseRunbook } from "../../src/runbook/index.js";
import { UserError } from "../../src/errors.js";

const TEXT = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
vars: { switch: "http://a", lag: 5, other: false, token: "\${env.TOKEN}" }
steps:
  - { id: stop, stopWrites: { use: sim-writes, with: { url: "\${vars.switch}" }, undo: { use: sim-writes, with: { url: "\${ vars.switch }", enabled: true } } } }
  - { id: hook, hook: { use: shell, with: { command: [echo, "\${vars.lag}", "\${vars.token}"] } } }
  - { id: plain, hook: { use: shell, with: { command: [echo, "\${env.TOKEN}"] } } }
  - { id: gated, when: "\${vars.other}", hook: { use: shell, with: { command: [echo] } } }
`;

const load = (vars: Record<string, string | number> = {}) =>
  parseRunbook(TEXT, "rb.yaml", { vars, env: { TOKEN: "s3cr3t-token" } });

const hook = (stepIndex: number, vars?: HookRun["vars"]): HookRun => ({
  stepIndex,
  id: ["stop", "hook", "plain"][stepIndex]!,
  use: stepIndex === 0 ? "sim-writes" : "shell",
  undone: false,
  ...(vars ? { vars } : {}),
});

const RAN = { switch: "http://b", lag: 5, other: "x", token: "***" };

describe("undoVarsDiffer", () => {
  it("names each variable of the hook's step whose value differs from the run that called it", async () => {
    const loaded = await load();
    expect(undoVarsDiffer([hook(0, RAN)], loaded)).toEqual([
      { hook: hook(0, RAN), name: "switch", then: "http://b", now: "http://a" },
    ]);
    // the same values: nothing; the text "5" is another value than the number 5 (a whole-value
    // `${vars.lag}` sends "5" or 5: an outside review)
    expect(undoVarsDiffer([hook(0, RAN), hook(1, RAN)], await load({ switch: "http://b" }))).toEqual([]);
    expect(undoVarsDiffer([hook(1, { ...RAN, lag: "5" })], loaded)).toEqual([
      { hook: hook(1, { ...RAN, lag: "5" }), name: "lag", then: '"5"', now: "5" },
    ]);
    expect(undoVarsDiffer([hook(1, { ...RAN, lag: 7 })], loaded)).toEqual([
      { hook: hook(1, { ...RAN, lag: 7 }), name: "lag", then: "7", now: "5" },
    ]);
  });

  it("a variable the step does not use, a hook of an older journal, an env-derived value, a step the runbook lacks: nothing", async () => {
    const loaded = await load();
    // a variable only the step's `when` reads: which steps run is another check's (whenDecidedOtherwise)
    expect(undoVarsDiffer([{ ...hook(1, { ...RAN, other: "y" }), stepIndex: 3 }], loaded)).toEqual([]);
    expect(
      varsChangedSince(
        { steps: [], vars: { ...RAN, other: "y", switch: "http://a", lag: 5 } } as unknown as JournalState,
        loaded,
        3,
      ),
    ).toEqual([]);
    // `other` differs, but no step uses it; `plain` uses only the environment
    expect(undoVarsDiffer([hook(1, { ...RAN, other: "y" }), hook(2, { ...RAN, switch: "z" })], loaded)).toEqual([]);
    // no vars journaled (an earlier runner): not judged
    expect(undoVarsDiffer([hook(0)], loaded)).toEqual([]);
    // a secret is journaled redacted, and loaded redacted alike
    expect(loaded.vars.token).toBe("***");
    expect(undoVarsDiffer([hook(1, RAN)], loaded)).toEqual([]);
    // the hook ran with a variable this run does not have at all
    const without = { ...loaded, vars: { lag: 5 } };
    expect(undoVarsDiffer([hook(0, RAN)], without)).toEqual([
      { hook: hook(0, RAN), name: "switch", then: "http://b", now: "(unset)" },
    ]);
    // a variable the hook's run did not have is not judged; nor a step past the runbook's end
    expect(undoVarsDiffer([hook(0, { lag: 5 })], loaded)).toEqual([]);
    expect(undoVarsDiffer([{ ...hook(0, RAN), stepIndex: 9 }], loaded)).toEqual([]);
    expect(undoVarsDiffer([hook(0, RAN)], { ...loaded, raw: undefined })).toEqual([]);
    // a step that is no object (a runbook that failed its schema): read as it is, a `when` only on an object
    const odd = { ...loaded, raw: { steps: [null, "${vars.lag}", ["${vars.lag}"]] } };
    expect(
      undoVarsDiffer(
        [0, 1, 2].map((i) => ({ ...hook(1, { ...RAN, lag: 7 }), stepIndex: i })),
        odd,
      ).map((d) => [d.hook.stepIndex, d.name]),
    ).toEqual([
      [1, "lag"],
      [2, "lag"],
    ]);
    // an empty value then, unset now: a difference too
    expect(undoVarsDiffer([hook(1, { ...RAN, lag: "" })], { ...loaded, vars: { token: "***" } })).toEqual([
      { hook: hook(1, { ...RAN, lag: "" }), name: "lag", then: "", now: "(unset)" },
    ]);
  });
});

describe("undoVarsRefusal", () => {
  it("says which step ran with which value, and offers the command with the hook's values", async () => {
    const loaded = await load();
    const state = { steps: [], given: ["other"], vars: { other: "q" } } as unknown as JournalState;
    const err = undoVarsRefusal(undoVarsDiffer([hook(0, RAN)], loaded), state, loaded, "abort from j.jsonl", "--abort");
    expect(err).toBeInstanceOf(UserError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe(
      'cannot abort from j.jsonl: step 1 "stop" ran with switch=http://b, this run has switch=http://a: the undo it owes would be made of this run\'s values, and go where its hook did not; nothing was run, and what the hook did still holds',
    );
    // the last run's other --var values, then the hook's
    expect(err.hint).toBe(
      "Run with the values its hook ran with: syncbook run rb.yaml --var other=q --var switch=http://b --abort",
    );
    // a value the last run was given for the same variable: the hook's wins, once
    const given = {
      steps: [],
      given: ["switch", "lag"],
      vars: { switch: "http://c", lag: 5 },
    } as unknown as JournalState;
    expect(undoVarsRefusal(undoVarsDiffer([hook(0, RAN)], loaded), given, loaded, "x", "--abort").hint).toBe(
      "Run with the values its hook ran with: syncbook run rb.yaml --var lag=5 --var switch=http://b --abort",
    );
    // two hooks with the same variable: one --var; a secret value: said how to give it
    const two = undoVarsDiffer([hook(0, RAN), hook(1, { ...RAN, lag: "***" })], loaded);
    const masked = undoVarsRefusal(two, { steps: [] } as unknown as JournalState, loaded, "resume", "--resume");
    expect(masked.message).toContain(
      'step 1 "stop" ran with switch=http://b, this run has switch=http://a; step 2 "hook" ran with lag=***, this run has lag=5',
    );
    expect(masked.hint).toBe(
      "Run with the values its hook ran with (a --var shown with *** holds a secret: set each as that run did): syncbook run rb.yaml --var switch=http://b --var 'lag=***' --resume",
    );
    const same = undoVarsDiffer([hook(0, RAN), hook(0, RAN)], loaded);
    expect(undoVarsRefusal(same, { steps: [] } as unknown as JournalState, loaded, "x", "--abort").hint).toBe(
      "Run with the values its hook ran with: syncbook run rb.yaml --var switch=http://b --abort",
    );
  });

  // an outside review (helper 87): an --abort whose fleet moved (--allow-changed-runbook) is refused
  // before it journals anything; a hint with the journal's values read the old fleet, RUNNING, and
  // turned writes on over a commit on the new one (test/run/undo-vars.e2e.test.ts)
  it("after the fleet moved: the new values with the flag that takes them; a hook of the old fleet's own variables is left to a person", async () => {
    const loaded = await load();
    const state = { steps: [], given: ["other"], vars: { other: "q" } } as unknown as JournalState;
    const moved = { decidedVars: [], cutoverValues: { vars: { other: "z" }, given: ["other"] } };
    expect(
      undoVarsRefusal(undoVarsDiffer([hook(0, RAN)], loaded), state, loaded, "abort from j", "--abort", moved).hint,
    ).toBe(
      "Run with the values its hook ran with: syncbook run rb.yaml --var other=z --var switch=http://b --allow-changed-runbook --abort",
    );
    const fleetText = TEXT.replace('instances: ["http://127.0.0.1:1"]', 'instances: ["${vars.switch}"]');
    const fleetLoaded = await parseRunbook(fleetText, "rb.yaml", { env: { TOKEN: "s3cr3t-token" } });
    const err = undoVarsRefusal(
      undoVarsDiffer([hook(0, RAN)], fleetLoaded),
      state,
      fleetLoaded,
      "abort from j",
      "--abort",
      moved,
    );
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe(
      'cannot abort from j: step 1 "stop" ran with switch=http://b, this run has switch=http://a: the undo it owes would be made of this run\'s values, and go where its hook did not; nothing was run, and what the hook did still holds',
    );
    expect(err.hint).toMatch(/^switch is a variable of the fleet too: /);
    expect(err.hint).toContain("no --abort can make that undo");
    expect(err.hint).not.toMatch(/syncbook run /);
    // a secret value of the moved fleet is kept masked, with how to give it: left out, the flag
    // took the runbook's default, another fleet (an outside review, helper 88)
    const secret = {
      decidedVars: [],
      cutoverValues: { vars: { other: "z", token: "***" }, given: ["other", "token"] },
    };
    expect(
      undoVarsRefusal(undoVarsDiffer([hook(0, RAN)], loaded), state, loaded, "abort from j", "--abort", secret).hint,
    ).toBe(
      "Run with the values its hook ran with (a --var shown with *** holds a secret: set each as that run did): syncbook run rb.yaml --var other=z --var 'token=***' --var switch=http://b --allow-changed-runbook --abort",
    );
    // two of the fleet's variables: both named
    const twoText = TEXT.replace(
      'instances: ["http://127.0.0.1:1"]',
      'instances: ["${vars.switch}", "http://h:${vars.lag}"]',
    );
    const twoLoaded = await parseRunbook(twoText, "rb.yaml", { env: { TOKEN: "s3cr3t-token" } });
    const two = undoVarsRefusal(
      undoVarsDiffer([hook(0, RAN), hook(1, { ...RAN, lag: 9 })], twoLoaded),
      state,
      twoLoaded,
      "abort from j",
      "--abort",
      moved,
    );
    expect(two.hint).toMatch(/^switch, lag are variables of the fleet too: /);
    // not moved: the hook's values, as before
    expect(undoVarsRefusal(undoVarsDiffer([hook(0, RAN)], fleetLoaded), state, fleetLoaded, "x", "--abort").hint).toBe(
      "Run with the values its hook ran with: syncbook run rb.yaml --var other=q --var switch=http://b --abort",
    );
  });
});

describe("varsChangedSince", () => {
  it("the variables of the steps still to run whose value differs from the last run's, said with both values", async () => {
    const loaded = await load({ lag: 7 });
    const state = (vars?: Record<string, string | number>) =>
      ({ steps: [], ...(vars ? { vars } : {}) }) as unknown as JournalState;
    const changed = varsChangedSince(state(RAN), loaded, 0);
    expect(changed).toEqual([
      { name: "switch", then: "http://b", now: "http://a" },
      { name: "lag", then: "5", now: "7" },
    ]);
    expect(varsChangedText(changed)).toBe(
      "this run has switch=http://a (the run it continues had switch=http://b), lag=7 (the run it continues had lag=5): the steps still to run are made of these values, not the ones the cutover ran with until now",
    );
    // from the second step on: the write stop's switch is no longer to run
    expect(varsChangedSince(state(RAN), loaded, 1)).toEqual([{ name: "lag", then: "5", now: "7" }]);
    expect(varsChangedSince(state(RAN), loaded, 2)).toEqual([]);
    // unset now; not journaled then (an older runner); a runbook that does not parse
    expect(
      varsChangedSince(state({ lag: 7, switch: "http://a", gone: 1 }), { ...loaded, vars: { lag: 7 } }, 0),
    ).toEqual([{ name: "switch", then: "http://a", now: "(unset)" }]);
    expect(varsChangedSince(state(), loaded, 0)).toEqual([]);
    expect(varsChangedSince(state({ lag: "" }), { ...loaded, vars: {} }, 1)).toEqual([
      { name: "lag", then: "", now: "(unset)" },
    ]);
    expect(varsChangedSince(state(RAN), { ...loaded, raw: undefined }, 0)).toEqual([]);
  });

  // the commit reads the check of every write stop before it (src/steps/kit/writes-check.ts): a
  // resume or --from past the stop, with the check made of another switch, read that switch, found
  // it off and committed while the cutover's switch was on again
  it("a commit still to run counts the variables of every earlier write stop's check; without a commit to run, they do not count", async () => {
    const text = `runbook: 1
name: rb
instances: ["http://127.0.0.1:1"]
vars: { switch: "http://a", reader: "http://r", lag: 5 }
steps:
  - { id: stop, stopWrites: { use: sim-writes, with: { url: "\${vars.switch}" }, check: { use: sim-writes-stopped, with: { url: "\${vars.reader}" } } } }
  - { id: gate, hook: { use: shell, with: { command: [echo, "\${vars.lag}"] } } }
  - { id: commit, commit: {} }
  - { id: after, hook: { use: shell, with: { command: [echo] } } }
`;
    const loaded = await parseRunbook(text, "rb.yaml", { vars: { reader: "http://other" } });
    const state = { steps: [], vars: { switch: "http://a", reader: "http://r", lag: 5 } } as unknown as JournalState;
    // from the gate and from the commit: the stop's check is read again, before the commit
    expect(varsChangedSince(state, loaded, 1)).toEqual([{ name: "reader", then: "http://r", now: "http://other" }]);
    expect(varsChangedSince(state, loaded, 2)).toEqual([{ name: "reader", then: "http://r", now: "http://other" }]);
    // the stop's own variables too: its check's hook is given the stop step (StepInfo.raw)
    const switched = await parseRunbook(text, "rb.yaml", { vars: { switch: "http://b" } });
    expect(varsChangedSince(state, switched, 2)).toEqual([{ name: "switch", then: "http://a", now: "http://b" }]);
    // a write stop without a check is not read again past it
    const unchecked = await parseRunbook(
      text.replace(', check: { use: sim-writes-stopped, with: { url: "${vars.reader}" } }', ""),
      "rb.yaml",
      {
        vars: { switch: "http://b" },
      },
    );
    expect(unchecked.runbook?.steps[0]?.stopWrites?.check).toBeUndefined();
    expect(varsChangedSince(state, unchecked, 2)).toEqual([]);
    // past the commit: nothing reads the check again
    expect(varsChangedSince(state, loaded, 3)).toEqual([]);
  });

  // an outside review, reproduced: a `--from drained` without the cutover's --var committed the
  // runbook's default fleet, another environment's sync (test/run/undo-vars.e2e.test.ts)
  it("the variables of the instances' and the verifier's URLs count from every step: the run goes on with that fleet", async () => {
    const text = `runbook: 1
name: rb
instances: ["\${vars.fleet}", { url: "http://127.0.0.1:2", name: b }]
verifier: "\${vars.checker}"
vars: { fleet: "http://127.0.0.1:1", checker: "http://127.0.0.1:9", lag: 5 }
steps:
  - { id: gate, hook: { use: shell, with: { command: [echo, "\${vars.lag}"] } } }
  - { id: commit, commit: {} }
`;
    const state = {
      steps: [],
      vars: { fleet: "http://127.0.0.1:1", checker: "http://127.0.0.1:9", lag: 5 },
    } as unknown as JournalState;
    const moved = await parseRunbook(text, "rb.yaml", {
      vars: { fleet: "http://127.0.0.1:3", checker: "http://127.0.0.1:8" },
    });
    const changes = [
      { name: "fleet", then: "http://127.0.0.1:1", now: "http://127.0.0.1:3" },
      { name: "checker", then: "http://127.0.0.1:9", now: "http://127.0.0.1:8" },
    ];
    expect(varsChangedSince(state, moved, 1)).toEqual(changes);
    // past the last step too: the cutover's way on still talks to them
    expect(varsChangedSince(state, moved, 2)).toEqual(changes);
    // and the values the cutover goes on with are this run's for them
    expect(cutoverValuesFrom(state, moved, 2)?.vars).toMatchObject({ fleet: "http://127.0.0.1:3", lag: 5 });
  });

  // a --from the last step typed without the --var became "the values the cutover ran with": a
  // later --from the write-on hook without them went through, on another environment's switch
  it("cutoverValuesFrom: this run's values for the variables read from `from` on, the cutover's for the others, each with whether --var set it", async () => {
    const state = (vars?: Record<string, string | number>, given?: string[]) =>
      ({ steps: [], ...(vars ? { vars } : {}), ...(given ? { given } : {}) }) as unknown as JournalState;
    const ran = state({ switch: "http://b", lag: 5, other: "y", token: "***" }, ["switch", "other"]);
    // from the hook (lag, token): the switch and `other` stay the cutover's, given as then
    const loaded = await load({ lag: 7 });
    expect(cutoverValuesFrom(ran, loaded, 1)).toEqual({
      vars: { switch: "http://b", lag: 7, other: "y", token: "***" },
      given: ["switch", "lag", "other"],
    });
    // from the write stop: the switch is read, this run's (and not given by it)
    expect(cutoverValuesFrom(ran, loaded, 0)).toEqual({
      vars: { switch: "http://a", lag: 7, other: "y", token: "***" },
      given: ["lag", "other"],
    });
    // a `when` counts as a read (withoutWhen leaves it out of the steps' own, not of the range)
    expect(cutoverValuesFrom(ran, await load({ other: "z" }), 3)?.vars.other).toBe("y");
    // a variable the cutover did not have: this run's (lag kept: the cutover's, not given then);
    // none journaled (an earlier runner): none
    expect(cutoverValuesFrom(state({ lag: 5 }), loaded, 3)).toEqual({
      vars: { switch: "http://a", lag: 5, other: false, token: "***" },
      given: [],
    });
    expect(cutoverValuesFrom(state({ other: "x" }), loaded, 3)?.given).toEqual(["lag"]);
    expect(cutoverValuesFrom(state(), loaded, 1)).toBeUndefined();
    // a runbook that does not parse reads nothing: every value the cutover's
    expect(cutoverValuesFrom(ran, { ...loaded, raw: undefined }, 0)?.vars.switch).toBe("http://b");
  });

  // an outside review: a --var with a password was journaled redacted, every way on left it out,
  // and the offered --resume was refused as "other values", offering itself again
  it("a secret value is compared as journaled: the same secret given again is no change; left out, the refusal says to set it", async () => {
    const ran = { switch: "http://***@b", lag: 5, other: "x", token: "***" };
    const state = { steps: [], vars: ran, given: ["switch"] } as unknown as JournalState;
    const same = await load({ switch: "http://ops:pa55word@b", lag: 5 });
    expect(same.vars.switch).toBe("http://***@b");
    expect(varsChangedSince(state, same, 0)).toEqual([]);
    const without = await load({ lag: 5 });
    const changed = varsChangedSince(state, without, 0);
    expect(changed).toEqual([{ name: "switch", then: "http://***@b", now: "http://a" }]);
    const err = varsChangedRefusal(changed, state, without, "j.jsonl");
    expect(err).toBeInstanceOf(UserError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe(`cannot resume from j.jsonl: ${varsChangedText(changed)}; nothing was run`);
    expect(err.hint).toBe(
      "Resume with the cutover's values (a --var shown with *** holds a secret: set each as that run did): syncbook run rb.yaml --var 'switch=http://***@b' --resume. To go on with the new values on purpose, add --allow-changed-runbook.",
    );
    // not secret: the command as one pastes it
    const plain = varsChangedSince({ ...state, vars: { ...ran, switch: "http://b" } }, without, 0);
    expect(varsChangedRefusal(plain, state, without, "j.jsonl").hint).toBe(
      "Resume with the cutover's values: syncbook run rb.yaml --var switch=http://b --resume. To go on with the new values on purpose, add --allow-changed-runbook.",
    );
  });

  // an outside review (helper 90): compared as text, the journal's text "5" and this run's number 5
  // were one value, where a whole-value `${vars.lag}` sends them as two (`"5"`, `5`)
  it("a value's type counts: the text 5 is not the number 5; the refusal's command gives the text, and as given is no change", async () => {
    const state = {
      steps: [],
      vars: { switch: "http://a", lag: "5", other: "x" },
      given: [],
    } as unknown as JournalState;
    const now = await load({ lag: 5 });
    const changed = varsChangedSince(state, now, 0);
    expect(changed).toEqual([{ name: "lag", then: '"5"', now: "5" }]);
    expect(varsChangedRefusal(changed, state, now, "j.jsonl").hint).toContain(`syncbook run rb.yaml --var 'lag="5"'`);
    expect(varsChangedSince(state, await load({ lag: "5" }), 0)).toEqual([]);
    const hook = { stepIndex: 1, id: "hook", vars: { lag: "5" } } as unknown as HookRun;
    expect(undoVarsDiffer([hook], now).map((d) => [d.name, d.then, d.now])).toEqual([["lag", '"5"', "5"]]);
    expect(undoVarsDiffer([hook], await load({ lag: "5" }))).toEqual([]);
  });

  // an outside review (helper 91): a number that holds a secret is masked in the runbook's values
  // since 64e450f; a journal of the runner before held it in clear, which never matched its masked
  // value: every --abort and --resume refused, its offer refused again
  it("a journal's clear number that holds a secret is compared masked, as the runbook's values are now: no loop, no secret said", async () => {
    const pinned = await parseRunbook(TEXT, "rb.yaml", { vars: { lag: 98765432 }, env: { TOKEN: "98765432" } });
    expect(pinned.vars.lag).toBe("***");
    expect(undoVarsDiffer([hook(1, { ...RAN, lag: 98765432 })], pinned)).toEqual([]);
    const state = {
      steps: [],
      vars: { ...RAN, switch: "http://a", other: false, lag: 98765432 },
    } as unknown as JournalState;
    expect(varsChangedSince(state, pinned, 1)).toEqual([]);
    // another value now: a change, the journal's said masked
    const five = await parseRunbook(TEXT, "rb.yaml", { vars: { lag: 5 }, env: { TOKEN: "98765432" } });
    expect(undoVarsDiffer([hook(1, { ...RAN, lag: 98765432 })], five).map((d) => [d.then, d.now])).toEqual([
      ["***", "5"],
    ]);
    expect(varsChangedSince(state, five, 1)).toEqual([{ name: "lag", then: "***", now: "5" }]);
  });

  // an outside review (helper 91): an offer's masked value pasted unedited was the text ***, which
  // the checks took for the cutover's masked secret: the undo ran with *** where its hook had the secret
  it("a --var whose value holds *** is refused before anything runs, the value unsaid", () => {
    for (const item of ["tag=***", "url=http://***@b", "tok=***-x"]) {
      const err = (() => {
        try {
          parseVars([item]);
        } catch (e) {
          return e;
        }
        return undefined;
      })() as UserError;
      expect(err).toBeInstanceOf(UserError);
      expect(err.exitCode).toBe(2);
      expect(err.message).toBe(
        `--var ${item.slice(0, item.indexOf("="))}: its value holds ***, which is how syncbook shows a secret, not a value`,
      );
      expect(err.hint).toContain("the value the cutover's runs were given");
    }
    expect(parseVars(["tag=*x*"])).toEqual({ tag: "*x*" });
  });

  // a third outside review (helper 92)
  it("a --var refused for its form never says its value: typed without its name, it may be a secret", () => {
    const said = (item: string) => {
      try {
        parseVars(["ok=1", item]);
      } catch (e) {
        return (e as UserError).message;
      }
      return "";
    };
    expect(said("s3cr3t-pw")).toBe("--var number 2: expected name=value");
    expect(said("bad-name=s3cr3t-pw")).toBe('--var: "bad-name" is not a variable name');
  });

  it("cutoverValuesFrom redacts a kept journal value as the runbook's are: a clear secret number of an earlier runner's journal is not copied into the new run's", async () => {
    const pinned = await parseRunbook(TEXT, "rb.yaml", { vars: {}, env: { TOKEN: "98765432" } });
    const state = { steps: [], vars: { ...RAN, lag: 98765432 }, given: ["lag"] } as unknown as JournalState;
    // from the last step, which reads no lag: the journal's kept
    expect(cutoverValuesFrom(state, pinned, 3)?.vars.lag).toBe("***");
  });
});

describe("wayOnVars", () => {
  it("the decided values, then the last run's given ones a `when` did not decide and no secret is", () => {
    expect(wayOnVars([], {})).toEqual([]);
    expect(wayOnVars(["rollback=true"], {})).toEqual(["rollback=true"]);
    expect(
      wayOnVars(["rollback=true"], {
        vars: { rollback: false, url: "http://x", n: 3, pw: "http://u:***@h", off: false },
        given: ["rollback", "url", "n", "pw", "missing", "off"],
      }),
    ).toEqual(["rollback=true", "url=http://x", "n=3", "off=false"]);
    // given names without values journaled: none
    expect(wayOnVars([], { given: ["url"] })).toEqual([]);
  });
});

// an outside review (helper 88): a way on carrying --allow-changed-runbook after a commit named the
// cutover's values as `cutoverVars` has them, leaving out a value the cutover took from the
// runbook's old default and a secret one: the flag took the runbook's value now, another fleet
describe("cutoverTargetFrom", () => {
  const stateOf = (vars: Record<string, unknown>, given: string[] = []) =>
    ({ steps: [], given, vars }) as unknown as JournalState;
  it("names every value the steps from there read as the cutover had it, a secret one masked", async () => {
    const loaded = await load();
    // the cutover ran with the old default switch, and was given a secret token; the `when` of a
    // later step (gated) is decided again by the run, with the cutover's value
    const state = stateOf({ switch: "http://old", lag: 5, other: "x", token: "***" }, ["token"]);
    expect(cutoverTargetFrom(state, loaded, "stop")).toEqual({
      target: "rb.yaml --var 'token=***' --var switch=http://old --var lag=5 --var other=x",
      note: MASKED_VAR_WORDS,
    });
    // the same values as the runbook's now are named too: status and watch load the runbook at the
    // cutover's fleet values, where an old default shows no change, and the pasted command reads
    // the new one (the 17:01 session's note)
    const same = stateOf({ switch: "http://a", lag: 5, other: "x" });
    expect(cutoverTargetFrom(same, loaded, "stop")).toEqual({
      target: "rb.yaml --var switch=http://a --var lag=5 --var other=x",
    });
    // a value not given that holds a secret (env-derived): the runbook's to read again where its
    // text reads the same now; else shown masked, to be set (an outside review: a changed default
    // of it was read at the new host, silently)
    expect(cutoverTargetFrom(stateOf({ lag: 5, token: "***" }), loaded, "hook")).toEqual({
      target: "rb.yaml --var lag=5",
    });
    expect(cutoverTargetFrom(stateOf({ lag: 5, token: "***-x" }), loaded, "hook")).toEqual({
      target: "rb.yaml --var lag=5 --var 'token=***-x'",
      note: MASKED_VAR_WORDS,
    });
    // a text --var would read as a number (`007`) is named in double quotes, which --var reads as
    // that text (an outside review: named as 007, pasted, the hook got 7; then only a note said so,
    // and pasted unedited the run took the runbook's value now)
    expect(cutoverTargetFrom(stateOf({ lag: "007" }), loaded, "hook")).toEqual({
      target: `rb.yaml --var 'lag="007"'`,
    });
    // named even where the runbook's text reads it so now: what status and watch load is the
    // runbook at the cutover's fleet, not what a pasted run reads
    const text007 = await parseRunbook(TEXT.replace("lag: 5", 'lag: "007"'), "rb.yaml", {
      env: { TOKEN: "t0ken-s3cr3t" },
    });
    expect(cutoverTargetFrom(stateOf({ lag: "007" }), text007, "hook")).toEqual({
      target: `rb.yaml --var 'lag="007"'`,
    });
    // two, and a secret one with them: the secret one masked, said; the others in double quotes
    expect(cutoverTargetFrom(stateOf({ lag: "007", other: "true", token: "***-x" }), loaded, "hook")).toEqual({
      target: `rb.yaml --var 'lag="007"' --var 'token=***-x' --var 'other="true"'`,
      note: MASKED_VAR_WORDS,
    });
    // the step found by its id in the runbook as edited, not by the journal's index (an outside
    // review: a step removed before it, and another step's values were named)
    const lines = TEXT.split("\n");
    const hookLast = [...lines.slice(0, 6), ...lines.slice(7, 9), lines[6], ""].join("\n");
    const last = await parseRunbook(hookLast, "rb.yaml", { env: { TOKEN: "s3cr3t-token" } });
    const lagThen = stateOf({ switch: "http://a", lag: 9, other: "x" });
    expect(cutoverTargetFrom(lagThen, last, "hook").target).toBe("rb.yaml --var lag=9");
    const noStop = await parseRunbook([...lines.slice(0, 5), ...lines.slice(6)].join("\n"), "rb.yaml", {
      env: { TOKEN: "s3cr3t-token" },
    });
    expect(cutoverTargetFrom(same, noStop, "hook").target).toBe("rb.yaml --var lag=5 --var other=x");
    // the runbook's notifiers are read by the run too: their values the cutover's
    const paged = await parseRunbook(
      TEXT.replace(
        "steps:",
        'notify: [{ use: webhook, with: { url: "${vars.pager}" }, on: [run.finished] }]\nsteps:',
      ).replace("other: false,", 'other: false, pager: "http://new",'),
      "rb.yaml",
      { env: { TOKEN: "s3cr3t-token" } },
    );
    expect(cutoverTargetFrom(stateOf({ lag: 5, pager: "http://old" }), paged, "hook").target).toBe(
      "rb.yaml --var lag=5 --var pager=http://old",
    );
    // a value journaled before the runbook knew it for a secret (now an env value): masked as every output
    const known = stateOf({ lag: 5, switch: "http://s3cr3t-token.example" });
    expect(cutoverTargetFrom(known, loaded, "stop")).toStrictEqual({
      target: "rb.yaml --var 'switch=http://***.example' --var lag=5",
      note: MASKED_VAR_WORDS,
    });
    // no step of that id: only the values given
    expect(cutoverTargetFrom(lagThen, last, "nosuch")).toStrictEqual({ target: "rb.yaml" });
    // a runbook that does not load: no step is found
    expect(cutoverTargetFrom(lagThen, { ...last, runbook: undefined }, "hook")).toStrictEqual({ target: "rb.yaml" });
    // one the edited runbook no longer declares nor reads is not named, a secret one neither
    const gone = stateOf({ switch: "http://a", lag: 5, gone: "x", old: "***" }, ["gone", "old"]);
    expect(cutoverTargetFrom(gone, loaded, "hook")).toEqual({ target: "rb.yaml --var lag=5" });
    // a value given and one a `when` decided come first, once each
    const given = stateOf({ switch: "http://a", lag: 7, other: "x" }, ["lag"]);
    expect(cutoverTargetFrom(given, loaded, "stop").target).toBe(
      "rb.yaml --var lag=7 --var switch=http://a --var other=x",
    );
  });

  it("the `when`s decided: as the journal's runs named their variables, not the edited runbook's step at that index", async () => {
    const loaded = await load();
    // the journal's step 3 was `gated` (when other), skipped; the edited runbook has another step there
    const journaled = {
      steps: [{ index: 3, id: "gated", kind: "hook", started: false, skippedByWhen: true, when: "other" }],
      vars: { other: false },
      hash: "sha256:old",
    } as unknown as JournalState;
    expect(whenVars(journaled, loaded)).toEqual(["other=false"]);
    // a journal of an earlier runner (no `when` journaled): the runbook's step at its index, only
    // where the runbook is the journal's text
    const { when: _w, ...bare } = journaled.steps[0]!;
    const earlier = { ...journaled, steps: [bare] };
    expect(whenVars(earlier, loaded)).toEqual([]);
    expect(whenVars({ ...earlier, hash: loaded.hash }, loaded)).toEqual(["other=false"]);
    // started, ended or not: it ran on its `when`, true; neither started nor skipped by it: nothing
    const ran = { ...journaled, steps: [{ ...journaled.steps[0]!, skippedByWhen: undefined, started: true }] };
    expect(whenVars(ran as unknown as JournalState, loaded)).toEqual(["other=true"]);
    const not = { ...journaled, steps: [{ ...journaled.steps[0]!, skippedByWhen: undefined }] };
    expect(whenVars(not as unknown as JournalState, loaded)).toEqual([]);
  });
});

// every value a runbook's `vars:` can hold is given back by the text a way on names it with: a text
// that reads as a number or a boolean was named as typed (`007`), and the pasted run read the
// number 7 (an outside review)
describe("varText and varValue", () => {
  const TEXTS = [
    "7e10238",
    "1e400",
    "12e3",
    "12345678901234567890",
    "0.0000001",
    "007",
    "1",
    "-0",
    "1.50",
    "1e5",
    "0x10",
    "true",
    "false",
    "True",
    "",
    " 7",
    "7 ",
    "a=b",
    '"a"',
    '""',
    '"',
    '"a"b"',
    "\\",
    "***",
    "http://h:1/x?y=1",
    "ünï ☃",
  ];
  const NUMBERS = [
    0,
    -0,
    7,
    -1.5,
    0.1 + 0.2,
    1e21,
    1e-7,
    -2.5e-300,
    5e-324,
    Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER + 2,
  ];
  const VALUES: (string | number | boolean)[] = [...TEXTS, ...NUMBERS, true, false];

  it("varValue reads back each value as varText names it, through a shell and parseVars", () => {
    for (const value of VALUES) {
      const text = varText(value);
      expect(varValue(text) === value, `${JSON.stringify(value)} named ${text}`).toBe(true);
      // as pasted: quoted for a shell, split by one, read by parseVars (which refuses a masked one)
      if (text.includes("***")) continue;
      const line = shellCommand(["--var", `x=${text}`]);
      const argv = execFileSync("sh", ["-c", `set -- ${line}; printf '%s\\0' "$2"`], { encoding: "utf8" });
      expect(parseVars([argv.slice(0, -1)]).x === value, `${JSON.stringify(value)} pasted as ${line}`).toBe(true);
    }
  });

  it("a value that reads as itself is named as written; another text in double quotes", () => {
    expect(["http://h:1/x?y=1", "a=b", "***", "", "True", "0x10", " 7", '"'].map(varText)).toEqual([
      "http://h:1/x?y=1",
      "a=b",
      "***",
      "",
      "True",
      "0x10",
      " 7",
      '"',
    ]);
    expect([5, -1.5, 1e21, 1e-7, true, false].map(varText)).toEqual(["5", "-1.5", "1e+21", "1e-7", "true", "false"]);
    expect(["007", "1e-7", "true", '"a"'].map(varText)).toEqual(['"007"', '"1e-7"', '"true"', '"\\"a\\""']);
  });

  it("varValue: numbers in decimal and exponent form, true and false, a JSON text in double quotes, else the text as typed", () => {
    expect(["3", "-1.5", "1e-7", "1e+21", "007", "-007.50", "-0", "1.0"].map(varValue)).toEqual([
      3, -1.5, 1e-7, 1e21, 7, -7.5, -0, 1,
    ]);
    // a number the text does not hold exactly stays text (an outside review: `7e10238`, a hex id,
    // was Infinity, journaled null, and no undo's check compared it; a long id was rounded)
    const NOT_EXACT = ["7e10238", "1e400", "1e-400", "12e3", "2E+3", "1e21", "12345678901234567890", "0.0000001"];
    expect(NOT_EXACT.map(varValue)).toEqual(NOT_EXACT);
    // a NUL no process argument carries: as typed
    expect(varValue('"a\\u0000"')).toBe('"a\\u0000"');
    expect(["true", "false", "TRUE", "yes"].map(varValue)).toEqual([true, false, "TRUE", "yes"]);
    expect(['"007"', '"true"', '""', '"a\\"b"'].map(varValue)).toEqual(["007", "true", "", 'a"b']);
    // not a JSON text: as typed
    expect(['"', '"a', 'a"', '"a"b"', '"\\x"', "1.", ".5", "0x10", "1e", "- 1"].map(varValue)).toEqual([
      '"',
      '"a',
      'a"',
      '"a"b"',
      '"\\x"',
      "1.",
      ".5",
      "0x10",
      "1e",
      "- 1",
    ]);
  });
});
