/**
 * Redaction in one place (src/redact.ts): every encoding of a secret, the path and query of a
 * secret URL, structured values leaf by leaf. Issue 12, items 8-10.
 */
import { describe, expect, it } from "vitest";
import {
  base64Cores,
  createRedactor,
  MIN_SECRET_LENGTH,
  redactLeaves,
  redactSecretFields,
  redactUrl,
  secretForms,
  stripUserinfo,
} from "../src/redact.js";

describe("secretForms", () => {
  it("as written, JSON-escaped, percent-encoded (path and form) and base64", () => {
    const s = 'p@ss "w/rd"?&';
    const forms = secretForms(s);
    expect(forms).toContain(s);
    expect(forms).toContain(JSON.stringify(s).slice(1, -1));
    expect(forms).toContain(encodeURIComponent(s));
    expect(forms).toContain(Buffer.from(s).toString("base64"));
  });

  it("a URL with a password: the password in every form, and the Basic credentials a client sends", () => {
    const forms = secretForms("https://ops:pa%23ss@hooks.example.com/services/T1/B2/XYZ?token=abc");
    expect(forms).toContain("pa#ss");
    expect(forms).toContain("pa%23ss");
    expect(forms).toContain(Buffer.from("ops:pa#ss").toString("base64"));
    // the path and query of a secret URL are secret; scheme and host are not
    expect(forms).toContain("/services/T1/B2/XYZ?token=abc");
    expect(forms).toContain("/services/T1/B2/XYZ");
    expect(forms.some((f) => f === "hooks.example.com")).toBe(false);
  });

  it("HTML- and Markdown-escaped, hex in both cases, base64url", () => {
    const s = `a'b"c<d>e&f*g_h`;
    const forms = secretForms(s);
    expect(forms).toContain("a&#39;b&quot;c&lt;d&gt;e&amp;f*g_h");
    expect(forms).toContain("a&apos;b&quot;c&lt;d&gt;e&amp;f*g_h");
    expect(forms).toContain("a'b\"c&lt;d&gt;e&amp;f*g_h");
    expect(forms).toContain("a'b\"c<d>e&f\\*g\\_h");
    expect(forms).toContain(Buffer.from(s).toString("hex"));
    expect(forms).toContain(Buffer.from(s).toString("hex").toUpperCase());
    expect(forms).toContain(Buffer.from(s).toString("base64url"));
  });

  it("base64 at every alignment: one core is in the encoding of any text around the secret", () => {
    const secret = "Pa55-w0rd~with+more";
    const cores = base64Cores(Buffer.from(secret));
    for (let before = 0; before < 7; before++)
      for (let after = 0; after < 4; after++) {
        const enc = Buffer.from(`${"u".repeat(before)}${secret}${"x".repeat(after)}`).toString("base64");
        expect(
          cores.some((c) => enc.includes(c)),
          `${before} before, ${after} after`,
        ).toBe(true);
      }
    // and the redactor masks `user:secret` whatever the user's length (ops4 as well as admin)
    const r = createRedactor([secret]);
    for (const user of ["a", "ab", "ops", "ops4", "admin", "verifier"]) {
      const b64 = Buffer.from(`${user}:${secret}`).toString("base64");
      expect(r(`Authorization: Basic ${b64}`)).toBe("Authorization: Basic ***");
      // not in a header: the cores still leave no 8-character piece of the encoding of the secret
      const bare = r(`token ${b64}.`);
      expect(bare).toContain("***");
    }
  });

  it(`forms shorter than ${MIN_SECRET_LENGTH} characters are not redacted (they would mangle any text)`, () => {
    expect(secretForms("ab")).toEqual([]);
  });
});

describe("createRedactor", () => {
  const redact = createRedactor(['s3"cr\\et', "https://hooks.example.com/T/B/XYZ123"]);

  it("removes every encoding from text", () => {
    expect(redact(`raw s3"cr\\et, json ${JSON.stringify('s3"cr\\et')}, url ${encodeURIComponent('s3"cr\\et')}`)).toBe(
      'raw ***, json "***", url ***',
    );
    expect(redact("POST https://hooks.example.com/T/B/XYZ123 failed: 404 on /T/B/XYZ123")).toBe(
      "POST *** failed: 404 on ***",
    );
    expect(redact("mongodb://user:pw@host/db")).toBe("mongodb://***@host/db");
  });

  it("redacts structured values leaf by leaf, keys included, and keeps numbers and booleans", () => {
    const r = createRedactor(["pass", "token-abc"]);
    expect(r.value({ pass: true, note: "pass token-abc", n: 5, list: ["token-abc"], x: { "token-abc": 1 } })).toEqual({
      "***": true,
      note: "*** ***",
      n: 5,
      list: ["***"],
      x: { "***": 1 },
    });
    // a record of the program's own (`keep` given): its top-level names stay
    expect(r.value({ pass: "token-abc", type: "pass" }, new Set(["type"]))).toEqual({ pass: "***", type: "pass" });
  });

  it("a JSON literal as a secret never breaks a structure, and a boolean word is not masked (OWNER=true)", () => {
    const r = createRedactor(["true", "prod"]);
    expect(redactLeaves({ reversible: true, note: "true prod", production: 1 }, r)).toEqual({
      reversible: true,
      note: "true ***",
      "***uction": 1,
    });
    expect(r("canCommit true in production")).toBe("canCommit true in ***uction");
  });

  it("keeps the named fields whole at any depth", () => {
    const r = createRedactor(["step"]);
    expect(
      r.value({ type: "step.started", steps: [{ kind: "step", id: "step-1" }] }, new Set(["type", "kind"])),
    ).toEqual({
      type: "step.started",
      steps: [{ kind: "step", id: "***-1" }],
    });
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
    expect(r("late-secret")).toBe("***");
  });
});

describe("URLs", () => {
  it("stripUserinfo and redactUrl", () => {
    expect(stripUserinfo("see http://a:b@h:1/x and mongodb+srv://u:p@c/")).toBe(
      "see http://***@h:1/x and mongodb+srv://***@c/",
    );
    expect(redactUrl("http://u:p@h:27182/?k=v#f")).toBe("http://***@h:27182/?k=***");
  });
});
