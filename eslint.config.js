// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "**/*.gen.ts", "coverage/", ".syncbook/", "out/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", AbortController: "readonly", AbortSignal: "readonly", Buffer: "readonly", setInterval: "readonly", clearInterval: "readonly", performance: "readonly", structuredClone: "readonly", queueMicrotask: "readonly", setImmediate: "readonly", clearImmediate: "readonly", fetch: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // the CLI's loader (scripts/cli-loader.cjs) is CommonJS: it runs before any ESM loader
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable", __dirname: "readonly", __filename: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // src/ is bundled for the CLI and run from a V8 code cache, where import() of anything the
    // bundle does not contain fails on Node 20: such imports go through src/runtime-import.ts.
    files: ["src/**/*.ts"],
    ignores: ["src/runtime-import.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "ImportExpression[source.type!='Literal']", message: "Use runtimeImport() from src/runtime-import.ts for a module known only at run time." },
        {
          selector: "ImportExpression[source.value=/^(node:|undici|tsx|listr2|@inquirer\\/|@listr2\\/)/]",
          message: "Use runtimeImport() from src/runtime-import.ts for Node modules and packages kept outside the bundle.",
        },
      ],
    },
  },
);
