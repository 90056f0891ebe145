/**
 * Redaction in one place (src/redact.ts): every encoding of a secret, the path and query of a
 * secret URL, structured values leaf by leaf. Issue 12, items 8-10.
 */
import { describe, expect, it } from "vitest";
import { createRedactor, MIN_SECRET_LENGTH, redactUrl, secretForms, stripUserinfo } from "../src/redact.js";

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

  it("redacts structured values leaf by leaf and keeps keys, numbers and booleans", () => {
    const r = createRedactor(["true", "token-abc"]);
    expect(r.value({ true: true, note: "true token-abc", n: 5, list: ["token-abc"] })).toEqual({
      true: true,
      note: "*** ***",
      n: 5,
      list: ["***"],
    });
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
