// @ts-check
import { builtinModules } from "node:module";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: ["dist/", "node_modules/", "**/*.gen.ts", "coverage/", ".syncbook/", "out/", "reports/", ".stryker-tmp/"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        Buffer: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        performance: "readonly",
        structuredClone: "readonly",
        queueMicrotask: "readonly",
        setImmediate: "readonly",
        clearImmediate: "readonly",
        fetch: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  {
    // tests read arbitrary JSON answers and journal lines: `any` there is the point, not a leak
    files: ["test/**/*.ts", "bench/**", "scripts/**"],
    rules: {
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/unbound-method": "off",
      // fakes implement async interfaces without awaiting anything
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // the CLI's loader (scripts/cli-loader.cjs) is CommonJS: it runs before any ESM loader
    files: ["**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", __dirname: "readonly", __filename: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // src/ and the built-in plugins are bundled for the CLI, which runs in a vm script where
    // import() of anything outside the bundle fails: such imports go through src/runtime-import.ts.
    // (scripts/bundle.mjs refuses to build a bundle with one left; this says so earlier.)
    files: ["src/**/*.ts", "plugins/**/*.ts"],
    ignores: ["src/runtime-import.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportExpression[source.type!='Literal']",
          message: "Use runtimeImport() from src/runtime-import.ts for a module known only at run time.",
        },
        {
          selector: `ImportExpression[source.value=/^(node:|(${[...builtinModules.filter((m) => !m.includes("/")), "undici", "tsx", "listr2", "mongodb"].join("|")})(\\/|$)|@inquirer\\/|@listr2\\/)/]`,
          message:
            "Use runtimeImport() from src/runtime-import.ts for Node modules and packages kept outside the bundle.",
        },
      ],
    },
  },
  // plain JavaScript (scripts, benchmarks, the CJS loader) is outside the TypeScript project
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
