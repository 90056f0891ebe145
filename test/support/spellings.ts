/**
 * Every spelling in which a service, a hook or an output can give a secret back, written from the
 * standards that define them and independently of src/redact.ts: the URL standard's percent-encode
 * sets (https://url.spec.whatwg.org/#percent-encoded-bytes, each in either hex case), every byte
 * percent-encoded, JSON `\uXXXX` (Go's encoding/json writes `&`, `<`, `>` as `\u0026`, `\u003c`,
 * `\u003e`), HTML entities (named, decimal, hex), upper and lower case, Markdown escapes, base64
 * wrapped at 76 columns (RFC 2045) at each alignment, and a secret cut across two lines. Used by
 * the redactor's unit tests and by the scan of every output (test/security/secret-scan.e2e.test.ts).
 */
const bytesOf = (s: string): number[] => [...Buffer.from(s, "utf8")];
const pct = (b: number, upper: boolean): string => {
  const h = b.toString(16).padStart(2, "0");
  return `%${upper ? h.toUpperCase() : h}`;
};
/** URL standard percent-encoding of `s` with the set `inSet` (C0, DEL and non-ASCII always), in either hex case. */
function percentEncode(s: string, inSet: (c: string) => boolean, upper: boolean, spaceAsPlus = false): string {
  return bytesOf(s)
    .map((b) => {
      const c = String.fromCharCode(b);
      if (spaceAsPlus && c === " ") return "+";
      return b < 0x20 || b >= 0x7f || inSet(c) ? pct(b, upper) : c;
    })
    .join("");
}
// https://url.spec.whatwg.org/#percent-encoded-bytes: each set includes the one before it
const QUERY = (c: string): boolean => ' "#<>'.includes(c);
const SPECIAL_QUERY = (c: string): boolean => QUERY(c) || c === "'";
const PATH = (c: string): boolean => QUERY(c) || "?^`{}".includes(c);
const USERINFO = (c: string): boolean => PATH(c) || "/:;=@[\\]|".includes(c);
const COMPONENT = (c: string): boolean => USERINFO(c) || "$%&+,".includes(c);
const FORM = (c: string): boolean => COMPONENT(c) || "!'()~".includes(c);
const ALNUM = /^[A-Za-z0-9]$/;
const hex4 = (c: string, upper: boolean): string => {
  const h = c.charCodeAt(0).toString(16).padStart(4, "0");
  return upper ? h.toUpperCase() : h;
};

/** Every spelling of `s` the redactor must catch, by name. */
export function spellings(s: string): Record<string, string> {
  const out: Record<string, string> = {
    "as written": s,
    "upper case": s.toUpperCase(),
    "lower case": s.toLowerCase(),
    "JSON.stringify": JSON.stringify(s).slice(1, -1),
    // Go's encoding/json escapes &, < and > (HTMLEscape) besides what JSON must escape
    "Go JSON": JSON.stringify(s)
      .slice(1, -1)
      .replace(/&/g, "\\u0026")
      .replace(/</g, "\\u003c")
      .replace(/>/g, "\\u003e"),
    "hex (lower)": Buffer.from(s).toString("hex"),
    "hex (upper)": Buffer.from(s).toString("hex").toUpperCase(),
    encodeURIComponent: encodeURIComponent(s),
    encodeURI: encodeURI(s),
    "cut across two lines (LF)": `${s.slice(0, 7)}\n${s.slice(7)}`,
    "cut across two lines (CRLF)": `${s.slice(0, 12)}\r\n${s.slice(12)}`,
    "percent-encoded twice": encodeURIComponent(encodeURIComponent(s)),
    "Markdown-escaped": s.replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`),
    "HTML named entities": s
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&apos;"),
  };
  for (const upper of [false, true]) {
    const u = upper ? "upper" : "lower";
    for (const [name, set] of Object.entries({
      query: QUERY,
      "special-query": SPECIAL_QUERY,
      path: PATH,
      userinfo: USERINFO,
      component: COMPONENT,
    }))
      out[`URL ${name} set (${u})`] = percentEncode(s, set, upper);
    out[`form-urlencoded (${u})`] = percentEncode(s, FORM, upper, true);
    out[`every byte percent-encoded (${u})`] = bytesOf(s)
      .map((b) => pct(b, upper))
      .join("");
    out[`JSON \\u00XX of every non-alphanumeric (${u})`] = [...s]
      .map((c) => (ALNUM.test(c) ? c : `\\u${hex4(c, upper)}`))
      .join("");
    out[`JSON \\uXXXX of every character (${u})`] = [...s].map((c) => `\\u${hex4(c, upper)}`).join("");
    out[`HTML hex entities (${u})`] = [...s]
      .map((c) =>
        ALNUM.test(c)
          ? c
          : `&#${upper ? "X" : "x"}${c.charCodeAt(0).toString(16)[upper ? "toUpperCase" : "toLowerCase"]()};`,
      )
      .join("");
  }
  out["HTML decimal entities"] = [...s].map((c) => (ALNUM.test(c) ? c : `&#${c.charCodeAt(0)};`)).join("");
  out["HTML decimal entities of every character"] = [...s].map((c) => `&#${c.charCodeAt(0)};`).join("");
  // RFC 2045: base64 in lines of at most 76 characters, CRLF between; the secret at each alignment
  for (let k = 0; k < 3; k++) {
    const wrapped = Buffer.from(`${"h".repeat(50 + k)}${s}tail`)
      .toString("base64")
      .replace(/(.{76})/g, "$1\r\n");
    out[`base64 wrapped at 76 columns, alignment ${k}`] = wrapped;
  }
  return out;
}

/** The spellings of `s`, each with a short label (`[a3]`) a test can find in an output without the secret. */
export function labelled(s: string, tag: string): { label: string; name: string; text: string }[] {
  return Object.entries(spellings(s)).map(([name, text], i) => ({ label: `[${tag}${i}]`, name, text }));
}
