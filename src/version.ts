/** syncbook's version: `--version`, and the record of every run (run.started, the report). test/cli checks it against package.json. */
export const SYNCBOOK_VERSION = "0.1.0";
