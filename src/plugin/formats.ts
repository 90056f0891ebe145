/**
 * The string formats plugin option schemas may use, for ajv at run time (options.ts) and for the
 * validators of the built-in plugins compiled at build time (scripts/gen-plugin-validators.mjs).
 */
export const OPTION_FORMATS = {
  uri: { type: "string", validate: (s: string): boolean => URL.canParse(s) },
  url: { type: "string", validate: (s: string): boolean => URL.canParse(s) },
} as const;

/** The options ajv is given, at run time and at build time alike (one behaviour). */
export const OPTION_AJV_OPTIONS = {
  allErrors: true,
  verbose: true,
  strict: false,
  allowUnionTypes: true,
  useDefaults: true,
  logger: false,
  meta: false,
  validateSchema: false,
} as const;
