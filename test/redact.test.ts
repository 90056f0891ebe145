/**
 * Redaction in one place (src/redact.ts): every spelling a service, a hook or an output can give
 * a secret, a secret cut across lines, structured values leaf by leaf, the path and query of a
 * secret URL, JSON bodies parsed before they are excerpted, the OpenTelemetry exporter's headers.
 * The spellings are written here independently of src/redact.ts (issue 42, point 7).
 */
import { describe, expect, it } from "vitest";
import { spellings } from "./support/spellings.js";
import {
  base64Cores,
  bodyExcerpt,
  createRedactor,
  environmentSecrets,
  MIN_SECRET_LENGTH,
  redactLeaves,
  redactSecretFields,
  redactUrl,
  stripUserinfo,
} from "../src/redact.js";
import { ExitCode, UserError, redactedError } from "../src/errors.js";

/** What must not survive of `s` in a redacted text: any 6-character piece, and the base64 cores. */
function remnants(s: string, redacted: string): string[] {
  const found: string[] = [];
  for (let i = 0; i + 6 <= s.length; i++)
    if (redacted.toLowerCase().includes(s.slice(i, i + 6).toLowerCase())) found.push(s.slice(i, i + 6));
  const flat = redacted.replace(/\r?\n/g, "");
  for (const core of base64Cores(Buffer.from(s))) if (flat.includes(core)) found.push(`base64 ${core}`);
  return found;
}

const SECRETS = [`We'b"<H>ook~+1a2b&v`, "Pa55 w0rd/with?all#the=chars;[x]", "plainalphanumeric42", "ünïcödé-pässwörd€"];

describe("every spelling of a secret, in a longer text", () => {
  for (const secret of SECRETS)
    it(`masks ${JSON.stringify(secret)} in every spelling`, () => {
      const r = createRedactor([secret]);
      for (const [name, spelled] of Object.entries(spellings(secret))) {
        const out = r(`before ${spelled} after`);
        expect(out, name).toContain("***");
        expect(out.startsWith("before "), `${name}: ${out}`).toBe(true);
        expect(out.endsWith(" after"), `${name}: ${out}`).toBe(true);
        expect(remnants(secret, out), `${name}: ${out}`).toEqual([]);
        // the spelled form itself is gone (a MIME text keeps what does not depend on the secret)
        if (!name.startsWith("base64 wrapped")) expect(out, name).toBe("before *** after");
      }
    });

  it("a Basic credential whatever the user name; base64 at every alignment inside a longer encoding", () => {
    const secret = "Pa55-w0rd~with+more";
    const r = createRedactor([secret]);
    for (const user of ["a", "ab", "ops", "ops4", "admin", "verifier"]) {
      const b64 = Buffer.from(`${user}:${secret}`).toString("base64");
      expect(r(`Authorization: Basic ${b64}`)).toBe("Authorization: Basic ***");
      expect(r(`token ${b64}.`)).toContain("***");
    }
    for (let before = 0; before < 7; before++)
      for (let after = 0; after < 4; after++) {
        const enc = Buffer.from(`${"u".repeat(before)}${secret}${"x".repeat(after)}`).toString("base64");
        expect(remnants(secret, r(enc)), `${before} before, ${after} after`).toEqual([]);
      }
  });

  it("a secret URL: its password in every form, its path and query; scheme and host stay readable", () => {
    const r = createRedactor(["https://ops:pa%23ss-w0rd@hooks.example.com/services/T1/B2/XYZ?token=abc"]);
    expect(r("sent to https://hooks.example.com/services/T1/B2/XYZ?token=abc")).toBe(
      "sent to https://hooks.example.com***",
    );
    expect(r("password pa#ss-w0rd, PA%23SS-W0RD")).toBe("password ***, ***");
    expect(r(`Basic ${Buffer.from("ops:pa#ss-w0rd").toString("base64")}`)).toBe("Basic ***");
    expect(r("404 on /services/T1/B2/XYZ")).toBe("404 on ***");
  });
});

describe("short secrets and the words of the output's own grammar", () => {
  it(`a secret under ${MIN_SECRET_LENGTH} characters is not redacted (it would mangle any text)`, () => {
    expect(createRedactor(["ab"])("ab cab")).toBe("ab cab");
  });

  it("a short common word is masked wherever it appears, in any case; a boolean word in any case never", () => {
    const r = createRedactor(["prod", "TRUE", "Yes"]);
    expect(r("canCommit true, TRUE, yes; prod PROD production Production")).toBe(
      "canCommit true, TRUE, yes; *** *** ***uction ***uction",
    );
    expect(redactLeaves({ reversible: true, note: "true prod", production: 1 }, r)).toEqual({
      reversible: true,
      note: "true ***",
      "***uction": 1,
    });
  });
});

describe("a stream of lines (a hook's output): a secret cut across lines", () => {
  const secret = `Cl'us"<T>er~+9f3a&q`;

  it("cut at every place between two lines: both halves masked, nothing else", () => {
    for (let at = 1; at < secret.length; at++) {
      const lines = createRedactor([secret]).lines();
      const a = lines(`line one ends with ${secret.slice(0, at)}`);
      const b = lines(`${secret.slice(at)} and goes on`);
      const c = lines("a line of its own");
      // the end of the first line is masked once it holds 4 characters of the secret
      if (at >= 4) expect(a, `cut at ${at}`).toBe("line one ends with ***");
      else expect(a, `cut at ${at}`).toBe(`line one ends with ${secret.slice(0, at)}`);
      expect(b, `cut at ${at}`).toBe("*** and goes on");
      expect(c).toBe("a line of its own");
    }
  });

  it("a long secret over many lines, and base64 wrapped at 76 columns at each alignment: every line's part masked", () => {
    const long = `-----BEGIN KEY-----${"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789".repeat(6)}-----END KEY-----`;
    const r = createRedactor([long]);
    const lines = r.lines();
    const shown = (long.match(/.{1,64}/g) ?? []).map((l) => lines(l));
    expect(
      shown.every((l) => l === "***"),
      shown.join("\n"),
    ).toBe(true);
    for (let k = 0; k < 3; k++) {
      const mime = createRedactor([secret]).lines();
      const b64 = Buffer.from(`${"h".repeat(50 + k)}${secret}tail`).toString("base64");
      const out = (b64.match(/.{1,76}/g) ?? []).map((l) => mime(l)).join("\n");
      expect(remnants(secret, out), out).toEqual([]);
    }
  });

  it("the lines of a hook's redactor see the run's secrets too (they are one pass)", () => {
    const run = createRedactor([secret]);
    const hook = createRedactor(["hook-only-token-1"], run);
    const lines = hook.lines();
    expect([lines(`a ${secret.slice(0, 8)}`), lines(`${secret.slice(8)} b`)]).toEqual(["a ***", "*** b"]);
    expect(hook("hook-only-token-1 and hook-only-token-1".toUpperCase())).toBe("*** AND ***");
    expect(run("hook-only-token-1")).toBe("hook-only-token-1");
  });

  it("a line ending in three letters of a secret keeps them (four would be masked)", () => {
    const lines = createRedactor(["productionpassword"]).lines();
    expect(lines("deployed to pro")).toBe("deployed to pro");
    expect(lines("next")).toBe("next");
    expect(lines("deployed to prod")).toBe("deployed to ***");
  });
});

describe("JSON bodies are parsed before they are excerpted", () => {
  const secret = `Go&<secret>~77`;
  const r = createRedactor([secret]);
  it("Go's escapes, a secret as a key, then the cut", () => {
    const go = JSON.stringify({ error: `denied for ${secret}`, [secret]: true, detail: "x".repeat(300) })
      .replace(/&/g, "\\u0026")
      .replace(/</g, "\\u003c")
      .replace(/>/g, "\\u003e");
    const e = bodyExcerpt(go, 60, r);
    expect(e).toBe(`{"error":"denied for ***","***":true,"detail":"xxxxxxxxxxxxx…`);
    expect(e).toHaveLength(61);
  });
  it("a body that is not JSON is redacted as text, on one line", () => {
    expect(bodyExcerpt(`<p>bad\n  ${secret.toUpperCase()}</p>`, 200, r)).toBe("<p>bad ***</p>");
  });
});

describe("the OpenTelemetry exporter's headers are secrets", () => {
  it("read as the exporter reads them: pairs by `,`, properties after `;`, values percent-decoded", () => {
    const basic = Buffer.from("collector:pw-9z8y").toString("base64");
    expect(
      environmentSecrets({
        OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=k3y%2Fvalue,Authorization=Basic%20${basic}`,
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: " api-key = Bearer tok-123 ;prop=1",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTHER_HEADERS: "a=not-this",
      }).sort(),
    ).toEqual(
      [
        "k3y%2Fvalue",
        "k3y/value",
        `Basic%20${basic}`,
        `Basic ${basic}`,
        basic,
        "pw-9z8y",
        "Bearer tok-123",
        "tok-123",
      ].sort(),
    );
  });
});

describe("structured values and URLs", () => {
  it("redacts structured values leaf by leaf, keys included, and keeps numbers and booleans", () => {
    const r = createRedactor(["pass", "token-abc"]);
    expect(r.value({ pass: true, note: "pass token-abc", n: 5, list: ["token-abc"], x: { "token-abc": 1 } })).toEqual({
      "***": true,
      note: "*** ***",
      n: 5,
      list: ["***"],
      x: { "***": 1 },
    });
    expect(r.value({ pass: "token-abc", type: "pass" }, new Set(["type"]))).toEqual({ pass: "***", type: "pass" });
  });

  it("keeps the named fields whole at any depth", () => {
    const r = createRedactor(["step"]);
    expect(
      r.value({ type: "step.started", steps: [{ kind: "step", id: "step-1" }] }, new Set(["type", "kind"])),
    ).toEqual({ type: "step.started", steps: [{ kind: "step", id: "***-1" }] });
  });

  it("the key-name policy lives here too: header values and secret-named fields never kept", () => {
    const r = createRedactor(["s3cret-value"]);
    expect(
      redactSecretFields({ headers: { "X-Key": "abc" }, apiToken: "t", note: "s3cret-value", ["s3cret-value"]: 1 }, r),
    ).toEqual({ headers: { "X-Key": "[redacted]" }, apiToken: "[redacted]", note: "***", "***": 1 });
  });

  it("sees secrets added to its set later", () => {
    const set = new Set<string>();
    const r = createRedactor(set);
    expect(r("late-secret")).toBe("late-secret");
    set.add("late-secret");
    expect(r("LATE-secret")).toBe("***");
  });

  it("sees secrets added later in a value too, whose leaves it remembered before", () => {
    const set = new Set<string>();
    const r = createRedactor(set);
    const answer = { info: "late-secret", ["late-secret"]: ["late-secret"] };
    expect(r.value(answer)).toEqual(answer);
    set.add("late-secret");
    expect(r.value(answer)).toEqual({ info: "***", "***": ["***"] });
    // and a redactor over it (a hook's), which shares its sources: one that remembered a leaf
    // before its base's set grew forgets it
    const hook = createRedactor(["hook-own-x"], r);
    expect(hook.value({ a: "later-still", b: "hook-own-x" })).toEqual({ a: "later-still", b: "***" });
    set.add("later-still");
    expect(hook.value({ a: "later-still", b: "hook-own-x" })).toEqual({ a: "***", b: "***" });
    // over a plain function (no sources to look into): leaf by leaf through it, each time
    const upper = createRedactor(["own-secret-y"], (t) => t.replace(/shout/g, "SHOUT"));
    expect(upper.value({ a: "shout", b: ["own-secret-y"] })).toEqual({ a: "SHOUT", b: ["***"] });
    // whose secrets this one cannot see change: never remembered (a cache would keep the old text)
    let theirs = "first-secret";
    const over = createRedactor(["own-secret-y"], (t) => t.split(theirs).join("###"));
    expect(over("second-secret")).toBe("second-secret");
    expect(over.value({ a: "second-secret" })).toEqual({ a: "second-secret" });
    theirs = "second-secret";
    expect(over("second-secret")).toBe("###");
    expect(over.value({ a: "second-secret" })).toEqual({ a: "###" });
  });

  it("stripUserinfo and redactUrl", () => {
    expect(stripUserinfo("see http://a:b@h:1/x and mongodb+srv://u:p@c/")).toBe(
      "see http://***@h:1/x and mongodb+srv://***@c/",
    );
    expect(redactUrl("http://u:p@h:27182/?k=v#f")).toBe("http://***@h:27182/?k=***");
  });
});

describe("redactedError: a command's error as it prints it", () => {
  const redact = createRedactor(["Tenant7s3cretValue42"]);
  it("a UserError's message and hint redacted, its exit code kept; one without a secret is the same error", () => {
    const err = new UserError("cannot trust /j/sales-Tenant7s3cretValue42/a.jsonl", {
      hint: "move /j/sales-Tenant7s3cretValue42 aside",
      exitCode: ExitCode.usage,
    });
    const out = redactedError(err, redact) as UserError;
    expect(out).toBeInstanceOf(UserError);
    expect([out.message, out.hint, out.exitCode]).toEqual([
      "cannot trust /j/sales-***/a.jsonl",
      "move /j/sales-*** aside",
      ExitCode.usage,
    ]);
    const plain = new UserError("nothing secret", { exitCode: ExitCode.interlock });
    expect(redactedError(plain, redact)).toBe(plain);
  });

  it("another error keeps its identity, its message and stack redacted", () => {
    const err = new Error("ENOENT: /j/sales-Tenant7s3cretValue42");
    const out = redactedError(err, redact) as Error;
    expect(out).toBe(err);
    expect(out.message).toBe("ENOENT: /j/sales-***");
    expect(out.stack).not.toContain("Tenant7s3cretValue42");
  });
});
