/**
 * Issue 40, point 4: the layers docs/ARCHITECTURE.md lists hold for all of src/. The list is read
 * from the page (its numbered list under "Dependencies point down"), so the page and this test
 * cannot drift apart. A module imports (static, dynamic or type-only) only from its own layer or
 * below; every file and folder of src/ is in a layer; the simulator imports nothing outside
 * itself. (Issue 27's check that preflight never imports lint is the order 3 < 5.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../", import.meta.url));
const src = join(root, "src");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Every relative import of a file: `import … from`, `export … from`, `import("…")`. */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"/gms)) out.push(m[1] ?? "");
  for (const m of text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)) out.push(m[1] ?? "");
  return out.filter((i) => i.startsWith("."));
}

/** A layer's line up to its first colon outside a code span: its members; after it, prose. */
function members(line: string): string {
  let code = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "`") code = !code;
    else if (line[i] === ":" && !code) return line.slice(0, i);
  }
  return line;
}

/** The layers as the page lists them: `src/x/` or `src/x.ts` → its layer's number. */
function documentedLayers(): Map<string, number> {
  const md = readFileSync(join(root, "docs", "ARCHITECTURE.md"), "utf8");
  const from = md.indexOf("Dependencies point down");
  expect(from, "docs/ARCHITECTURE.md has no 'Dependencies point down' list").toBeGreaterThanOrEqual(0);
  const layers = new Map<string, number>();
  for (const line of md.slice(from).split("\n")) {
    const m = /^(\d+)\. (.*)$/.exec(line);
    if (!m) {
      if (layers.size && line.trim() === "") break;
      continue;
    }
    for (const c of members(m[2]!).matchAll(/`(src\/[^`]+)`/g)) layers.set(c[1]!, Number(m[1]));
  }
  return layers;
}

/** The unit a src file belongs to, as the page names it: `src/fleet/` or `src/events.ts`. */
const unitOf = (file: string): string => {
  const rel = relative(root, file).split("\\").join("/");
  const parts = rel.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : rel;
};

describe("the layers of src/ (docs/ARCHITECTURE.md)", () => {
  const layers = documentedLayers();
  const all = files(src);

  it("the page lists eight layers, bottom first", () => {
    expect(Math.max(...layers.values())).toBe(8);
    expect(layers.get("src/events.ts")).toBe(1);
    expect(layers.get("src/cli/")).toBe(8);
  });

  it("every file and folder of src/ is in a layer", () => {
    const units = [...new Set(all.map(unitOf))].map((u) => u.replace(/\.gen\.ts$/, ".ts"));
    expect(units.filter((u) => !layers.has(u))).toEqual([]);
    // and the page names nothing that is not there
    expect([...layers.keys()].filter((u) => !units.includes(u))).toEqual([]);
  });

  it("no module imports from a layer above its own", () => {
    const upward: string[] = [];
    for (const f of all) {
      const from = unitOf(f);
      for (const i of importsOf(readFileSync(f, "utf8"))) {
        const to = unitOf(resolve(dirname(f), i));
        if (!to.startsWith("src/") || to === from) continue;
        const a = layers.get(from);
        const b = layers.get(to.replace(/\.js$/, ".ts"));
        if (a !== undefined && b !== undefined && b > a)
          upward.push(`${relative(root, f)} (layer ${a}) → ${i} (layer ${b})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("the simulator imports nothing outside itself", () => {
    const out = files(join(src, "sim")).flatMap((f) =>
      importsOf(readFileSync(f, "utf8"))
        .filter((i) => !resolve(dirname(f), i).startsWith(join(src, "sim")))
        .map((i) => `${relative(root, f)} → ${i}`),
    );
    expect(out).toEqual([]);
  });

  it("the page's safety core is the list stryker.config.mjs mutates", () => {
    const md = readFileSync(join(root, "docs", "ARCHITECTURE.md"), "utf8");
    const bullet = /- \*\*The safety core\*\*[\s\S]*?(?=\n- |\n\n)/.exec(md)?.[0] ?? "";
    const listed = [...bullet.matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]);
    const config = readFileSync(join(root, "stryker.config.mjs"), "utf8");
    const mutate = /mutate:\s*\[([\s\S]*?)\]/.exec(config)?.[1] ?? "";
    const mutated = [...mutate.matchAll(/"(src\/[^"]+\.ts)"/g)].map((m) => m[1]);
    expect(mutated.length).toBeGreaterThan(0);
    expect(listed).toEqual(mutated);
  });

  it("the import reader sees each form, so the checks above cannot pass by missing one", () => {
    expect(
      importsOf(
        `import { a } from "../x/a.js";\nimport type { B } from "../y/b.js";\nexport { c } from "./c.js";\nexport type {\n  D,\n} from "../z/d.js";\nconst e = await import("../w/e.js");\nimport { f } from "node:fs";`,
      ),
    ).toEqual(["../x/a.js", "../y/b.js", "./c.js", "../z/d.js", "../w/e.js"]);
  });
});
