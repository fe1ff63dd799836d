// Checks a packaged .vsix: it must hold the manifest, the compiled extension, its runtime
// dependency vscode-languageclient, and no tests, sources or dev tools.
//   node scripts/check-vsix.mjs hydra-lsp.vsix
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const yauzl = require("yauzl"); // a dependency of @vscode/vsce

const file = process.argv[2];
if (!file) {
  console.error("usage: node scripts/check-vsix.mjs FILE.vsix");
  process.exit(2);
}

const names = await new Promise((resolve, reject) => {
  yauzl.open(file, { lazyEntries: true }, (err, zip) => {
    if (err) return reject(err);
    const out = [];
    zip.on("entry", (e) => {
      out.push(e.fileName);
      zip.readEntry();
    });
    zip.on("end", () => resolve(out));
    zip.on("error", reject);
    zip.readEntry();
  });
});

const must = [
  "extension.vsixmanifest",
  "extension/package.json",
  "extension/out/src/extension.js",
  "extension/out/src/generate.js",
  "extension/out/src/inline.js",
  "extension/out/src/settings.js",
  "extension/node_modules/vscode-languageclient/package.json",
];
const mustNot = [/^extension\/out\/test\//, /^extension\/src\//, /\.ts$/, /node_modules\/(typescript|eslint|@vscode\/vsce)\//];
const problems = [];
for (const m of must) if (!names.includes(m)) problems.push(`missing ${m}`);
for (const n of names) for (const re of mustNot) if (re.test(n)) problems.push(`should not hold ${n}`);
if (problems.length > 0) {
  console.error(`${file}: ${problems.slice(0, 20).join("; ")}`);
  process.exit(1);
}
console.log(`ok - ${file}: ${names.length} files, manifest + out/src + vscode-languageclient, no tests or sources`);
