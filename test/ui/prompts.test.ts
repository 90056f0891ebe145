import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { createUi } from "../../src/ui/index.js";
import { createPrompter } from "../../src/ui/prompts.js";
import { raceAbort } from "../../src/timers.js";
import type { PromptHost, PromptSpec } from "../../src/ui/prompts.js";
import { EventBuilder, FakeStream, INSTANCES, STEPS } from "../support/ui-fixtures.js";

const tty = { isTTY: true } as unknown as NodeJS.ReadStream;
const pipe = { isTTY: false } as unknown as NodeJS.ReadStream;
const never: PromptHost = () => new Promise(() => undefined);
const step = STEPS[5]!;

describe("prompter", () => {
  it("refuses --step without a TTY (npm test has none), with a usage exit code and a hint", async () => {
    const p = createPrompter({ input: pipe, host: never });
    const err: unknown = await p.stepChoice(step, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(2);
    expect((err as UserError).hint).toMatch(/--step/);
  });

  it("refuses a confirm without a TTY unless --yes, which answers yes and says so", async () => {
    const said: string[] = [];
    await expect(
      createPrompter({ input: pipe, host: never }).confirm("commit?", new AbortController().signal),
    ).rejects.toBeInstanceOf(UserError);
    const yes = createPrompter({ input: pipe, host: never, yes: true, onAutoAnswer: (m) => said.push(m) });
    await expect(yes.confirm("commit?", new AbortController().signal)).resolves.toBe(true);
    expect(said).toEqual(["commit? → yes (--yes)"]);
  });

  it("rejects promptly on abort even when the prompt itself ignores the signal", async () => {
    const p = createPrompter({ input: tty, host: never });
    const ac = new AbortController();
    const pending = p.stepChoice(step, ac.signal);
    setTimeout(() => ac.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  // issue 39, point 3: the commit's --step question is the point of no return
  it("a point of no return: said in the question, and run or run the rest asked once more, no by default, never by --yes", async () => {
    const asked: PromptSpec[] = [];
    const answers: unknown[] = ["run", false, "rest", false, "run", true];
    const host: PromptHost = (spec) => (asked.push(spec), Promise.resolve(answers.shift()));
    const p = createPrompter({ input: tty, host, yes: true });
    const commitStep = { ...step, pointOfNoReturn: "this step sends commit to 2 instances" };
    await expect(p.stepChoice(commitStep, new AbortController().signal)).resolves.toBe("run");
    expect(asked.map((a) => a.kind)).toEqual(["select", "confirm", "select", "confirm", "select", "confirm"]);
    expect(asked[0]!.message).toContain("POINT OF NO RETURN: this step sends commit to 2 instances");
    expect(asked[1]!.message).toMatch(/^POINT OF NO RETURN: send commit now\?/);
    // the question names its step: it is drawn as not started
    expect(asked[1]!.step).toBe(step.index);
    // skip and abort send nothing: asked once
    for (const choice of ["skip", "abort"]) {
      asked.length = 0;
      const once = createPrompter({ input: tty, host: (spec) => (asked.push(spec), Promise.resolve(choice)) });
      await expect(once.stepChoice(commitStep, new AbortController().signal)).resolves.toBe(choice);
      expect(asked).toHaveLength(1);
    }
    // any other step: one question, run on Enter as before
    asked.length = 0;
    const plainStep = createPrompter({ input: tty, host: (spec) => (asked.push(spec), Promise.resolve("run")) });
    await expect(plainStep.stepChoice(step, new AbortController().signal)).resolves.toBe("run");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).not.toContain("POINT OF NO RETURN");
  });

  it("rejects at once with an already aborted signal, without asking", async () => {
    let asked = false;
    const p = createPrompter({ input: tty, host: () => ((asked = true), Promise.resolve(true)) });
    await expect(p.confirm("x", AbortSignal.abort())).rejects.toMatchObject({ name: "AbortError" });
    expect(asked).toBe(false);
  });

  it("passes the host's answer through, and rejects answers that are not a choice", async () => {
    await expect(
      createPrompter({ input: tty, host: () => Promise.resolve("rest") }).stepChoice(
        step,
        new AbortController().signal,
      ),
    ).resolves.toBe("rest");
    await expect(
      createPrompter({ input: tty, host: () => Promise.resolve("later") }).stepChoice(
        step,
        new AbortController().signal,
      ),
    ).rejects.toThrow(/unexpected answer/);
  });

  it("raceAbort keeps the abort reason the runner gave", async () => {
    const ac = new AbortController();
    const reason = new Error("Ctrl-C");
    const p = raceAbort(new Promise(() => undefined), ac.signal);
    ac.abort(reason);
    await expect(p).rejects.toBe(reason);
  });
});

describe("prompts with the simple renderer", () => {
  it("asks through inquirer and holds event lines until the answer, so they do not garble the prompt", async () => {
    const out = new FakeStream(false);
    const input = Object.assign(new PassThrough(), {
      isTTY: true,
      setRawMode() {
        return this;
      },
    });
    const ui = createUi({ renderer: "simple", out, color: false, input });
    const b = new EventBuilder();
    await ui.listener(
      b.emit("run.started", { runbook: "r", file: "f", hash: "h", instances: INSTANCES, mode: "run", steps: STEPS }),
    );
    const answer = ui.prompt.confirm("Point of no return: commit?", new AbortController().signal);
    await new Promise((r) => setTimeout(r, 50));
    await ui.listener(b.emit("log", { level: "info", message: "held while asking" }));
    expect(out.text).not.toContain("held while asking");
    input.write("y\r");
    expect(await answer).toBe(true);
    expect(out.text).toContain("held while asking");
    expect(out.text.indexOf("held while asking")).toBeGreaterThan(out.text.indexOf("commit?"));
    await ui.close();
  });

  it("--yes answers confirm steps and the line says so", async () => {
    const out = new FakeStream(false);
    const ui = createUi({ renderer: "simple", out, color: false, input: pipe, yes: true });
    await expect(ui.prompt.confirm("commit sales?", new AbortController().signal)).resolves.toBe(true);
    expect(out.text).toMatch(/\d\d:\d\d:\d\d confirmed: commit sales\? → yes \(--yes\)/);
  });
});
