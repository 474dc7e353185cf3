// Runs web/src modules that are pure TypeScript (no DOM, no React) under node for the Python tests:
// each is transpiled to CommonJS with the web's own TypeScript, then the calls read from stdin
// (a JSON list of {op, args}) are answered on stdout as a JSON list, in order.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");

const web = path.resolve(__dirname, "..", "..", "web");
const ts = require(path.join(web, "node_modules", "typescript"));
const out = fs.mkdtempSync(path.join(os.tmpdir(), "overseer-ts-"));
for (const name of ["diff", "hunks"]) {
  const source = fs.readFileSync(path.join(web, "src", `${name}.ts`), "utf8");
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  fs.writeFileSync(path.join(out, `${name}.js`), outputText);
}
const hunks = require(path.join(out, "hunks.js"));
fs.rmSync(out, { recursive: true, force: true });

const OPS = {
  hunks: (before, after) => hunks.fileHunks(before, after),
  apply: (before, after, chosen) => hunks.applyHunks(hunks.fileHunks(before, after), new Set(chosen)),
  shown: (before, after) => hunks.shownHunks(hunks.fileHunks(before, after)),
  editBetween: (before, result) => hunks.editBetween(before, result),
  chosenArguments: (tool, args, file, chosen) => {
    const review = hunks.reviewOf(tool, args, file);
    return review && { count: review.hunks.count, args: hunks.chosenArguments(review, args, new Set(chosen)) };
  },
};

const calls = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(calls.map(({ op, args }) => OPS[op](...args))));
