/**
 * The one JUnit XML writer: lint's and preflight's findings (`--format junit`), a run's steps
 * (junit.xml beside report.json) and a wave's runbooks each say what their test cases are; this
 * writes them, with the counts, times and escaping CI readers expect (one `<testsuites>`, a
 * `<testsuite>` per group, `<failure>`, `<error>` or `<skipped/>` in a case, `time` in seconds).
 */
import { escapeXml as esc } from "./text.js";

export interface JunitCase {
  classname: string;
  name: string;
  /** Omitted: the case carries no `time`. */
  timeMs?: number;
  /** A failed case (`failure`: the check did not hold) or one that could not finish (`error`). */
  failure?: { tag: "failure" | "error"; type?: string; message: string; text: string };
  /** A case skipped, with why. */
  skipped?: string;
  systemOut?: string;
}

export interface JunitSuite {
  name: string;
  cases: readonly JunitCase[];
  timeMs?: number;
  /** ISO time the suite started, without its fraction and zone. */
  timestamp?: string;
  properties?: readonly (readonly [string, string])[];
}

const secs = (ms: number): string => (ms / 1000).toFixed(3);

function counts(cases: readonly JunitCase[]): string {
  const n = (f: (c: JunitCase) => boolean): number => cases.filter(f).length;
  return `tests="${cases.length}" failures="${n((c) => c.failure?.tag === "failure")}" errors="${n((c) => c.failure?.tag === "error")}" skipped="${n((c) => c.skipped !== undefined)}"`;
}

function caseXml(c: JunitCase): string {
  const open = `    <testcase classname="${esc(c.classname)}" name="${esc(c.name)}"${c.timeMs !== undefined ? ` time="${secs(c.timeMs)}"` : ""}`;
  const body: string[] = [];
  if (c.failure) {
    const f = c.failure;
    body.push(
      `      <${f.tag}${f.type !== undefined ? ` type="${esc(f.type)}"` : ""} message="${esc(f.message)}">${esc(f.text)}</${f.tag}>`,
    );
  } else if (c.skipped !== undefined) body.push(`      <skipped message="${esc(c.skipped)}"/>`);
  if (c.systemOut !== undefined) body.push(`      <system-out>${esc(c.systemOut)}</system-out>`);
  return body.length === 0 ? `${open}/>` : `${open}>\n${body.join("\n")}\n    </testcase>`;
}

/** The document: `<testsuites name>` over the suites, each with its counts (and time when given). */
export function renderJunitXml(name: string, suites: readonly JunitSuite[], timeMs?: number): string {
  const all = suites.flatMap((s) => s.cases);
  const time = (ms: number | undefined): string => (ms !== undefined ? ` time="${secs(ms)}"` : "");
  const out = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${esc(name)}" ${counts(all)}${time(timeMs)}>`,
  ];
  for (const s of suites) {
    out.push(
      `  <testsuite name="${esc(s.name)}" ${counts(s.cases)}${time(s.timeMs)}${s.timestamp ? ` timestamp="${esc(s.timestamp)}"` : ""}>`,
    );
    if (s.properties?.length)
      out.push(
        `    <properties>\n${s.properties.map(([k, v]) => `      <property name="${esc(k)}" value="${esc(v)}"/>`).join("\n")}\n    </properties>`,
      );
    out.push(...s.cases.map(caseXml), `  </testsuite>`);
  }
  out.push(`</testsuites>`, "");
  return out.join("\n");
}
