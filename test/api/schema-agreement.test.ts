/**
 * The field descriptors of src/api/types.ts (what the lenient checker enforces) against
 * schemas/*.schema.json (what editors and readers see), and the checker against ajv on sample
 * answers: nothing is written twice unchecked.
 */
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { checkAnswer } from "../../src/api/check.js";
import {
  OPERATION_RESPONSE_SPEC,
  PROGRESS_RESPONSE_SPEC,
  VERIFIER_RESPONSE_SPEC,
  type FieldSpec,
  type FieldsSpec,
} from "../../src/api/types.js";

type Json = Record<string, unknown>;
const load = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), "utf8")) as Json;

/** Resolves a local `$ref` (and an `anyOf` of one object and null) to the object schema. */
function resolve(root: Json, s: Json): { schema: Json; nullable: boolean } {
  if (Array.isArray(s.anyOf)) {
    const parts = s.anyOf as Json[];
    const obj = parts.find((p) => p.type !== "null")!;
    return { schema: resolve(root, obj).schema, nullable: parts.some((p) => p.type === "null") };
  }
  if (typeof s.$ref === "string") {
    const path = s.$ref.replace(/^#\//, "").split("/");
    let cur: unknown = root;
    for (const p of path) cur = (cur as Json)[p];
    const r = resolve(root, cur as Json);
    return {
      schema: { ...r.schema, ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) },
      nullable: r.nullable,
    };
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === "string" ? [s.type] : [];
  return { schema: s, nullable: types.includes("null") };
}

function compare(root: Json, schema: Json, spec: FieldsSpec, at: string): void {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  expect(Object.keys(props).sort(), `${at}: properties`).toEqual(Object.keys(spec).sort());
  const required = ((schema.required ?? []) as string[]).slice().sort();
  const specRequired = Object.entries(spec)
    .filter(([, f]) => f.presence !== "optional")
    .map(([k]) => k)
    .sort();
  expect(required, `${at}: required = required + expected`).toEqual(specRequired);
  for (const [name, field] of Object.entries<FieldSpec>(spec)) {
    const { schema: s, nullable } = resolve(root, props[name]!);
    const where = `${at}.${name}`;
    if (field.type === "any") continue;
    expect(nullable, `${where}: nullable`).toBe(field.nullable === true);
    const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t) => t !== "null");
    if (s.const === true) expect(field.type, where).toBe("boolean");
    else expect(types, `${where}: type`).toEqual([field.type]);
    if (field.type === "string" && field.enum) expect(s.enum, `${where}: enum`).toEqual([...field.enum]);
    if (field.type === "object" && Object.keys(field.fields).length > 0) compare(root, s, field.fields, where);
  }
}

describe("descriptors match the schemas", () => {
  it("progress", () => {
    const root = load("progress.schema.json");
    compare(root, root, PROGRESS_RESPONSE_SPEC, "progress answer");
  });
  it("operation response", () => {
    const root = load("operation-response.schema.json");
    compare(root, root, OPERATION_RESPONSE_SPEC, "operation answer");
  });
  it("verifier progress", () => {
    const root = load("verifier-progress.schema.json");
    compare(root, root, VERIFIER_RESPONSE_SPEC, "verifier answer");
  });
});

describe("the checker and ajv agree on sample answers", () => {
  const ajv = new Ajv2020.default({ allErrors: true, strict: false });
  const validate = ajv.compile(load("progress.schema.json"));
  const running = {
    state: "RUNNING",
    canCommit: true,
    canWrite: false,
    info: "change event application",
    lagTimeSeconds: 2,
    totalEventsApplied: 10,
    collectionCopy: { estimatedTotalBytes: 10, estimatedCopiedBytes: 10 },
    directionMapping: { Source: "cluster0: a:1", Destination: "cluster1: b:2" },
    mongosyncID: "a",
    coordinatorID: "a",
  };
  const samples: [string, unknown][] = [
    ["running", { success: true, progress: running }],
    [
      "idle",
      {
        success: true,
        progress: {
          ...running,
          state: "IDLE",
          canCommit: false,
          canWrite: null,
          info: null,
          lagTimeSeconds: null,
          totalEventsApplied: null,
          collectionCopy: null,
          directionMapping: null,
          mongosyncID: null,
          coordinatorID: null,
        },
      },
    ],
    ["unknown field", { success: true, progress: { ...running, later: { x: 1 } } }],
    ["lag as string", { success: true, progress: { ...running, lagTimeSeconds: "2" } }],
    ["unknown state", { success: true, progress: { ...running, state: "PAUSING" } }],
    ["no canWrite", { progress: (({ canWrite: _c, ...rest }) => rest)(running) }],
    ["no progress", { success: true }],
  ];
  it.each(samples)("%s", (_name, sample) => {
    const ajvOk = validate(sample) === true;
    const out = checkAnswer(sample, PROGRESS_RESPONSE_SPEC);
    // valid for ajv ⇔ usable and without issue for the checker
    expect(out.ok && out.issues.length === 0).toBe(ajvOk);
  });
});
