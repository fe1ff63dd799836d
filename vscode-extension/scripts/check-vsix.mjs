// Checks a packaged .vsix: it must hold the manifest, the compiled extension, its runtime
// dependency vscode-languageclient, and no tests, sources or dev tools. With --server (a platform
// VSIX, scripts/vsix.sh) it must also hold the server in the release archive's layout, the
// binaries executable (VS Code keeps the zip's modes when it unpacks), and a TargetPlatform;
// without, no server.
//   node scripts/check-vsix.mjs [--server] hydra-lsp.vsix
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const yauzl = require("yauzl"); // a dependency of @vscode/vsce

const withServer = process.argv[2] === "--server";
const file = process.argv[withServer ? 3 : 2];
if (!file) {
  console.error("usage: node scripts/check-vsix.mjs [--server] FILE.vsix");
  process.exit(2);
}

const modes = new Map();
let manifest = "";
const names = await new Promise((resolve, reject) => {
  yauzl.open(file, { lazyEntries: true }, (err, zip) => {
    if (err) return reject(err);
    const out = [];
    zip.on("entry", (e) => {
      out.push(e.fileName);
      modes.set(e.fileName, e.externalFileAttributes >>> 16);
      if (e.fileName === "extension.vsixmanifest") {
        zip.openReadStream(e, (err2, stream) => {
          if (err2) return reject(err2);
          const chunks = [];
          stream.on("data", (c) => chunks.push(c));
          stream.on("end", () => {
            manifest = Buffer.concat(chunks).toString("utf8");
            zip.readEntry();
          });
        });
        return;
      }
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
// No TypeScript sources: the extension's own (.ts) stay out; the bundled tsc's library
// declarations (server/…/lib/lib.*.d.ts), which it reads at run time, are the one exception.
const mustNot = [/^extension\/out\/test\//, /^extension\/src\//, /^(?!extension\/server\/third_party\/).*\.ts$/, /node_modules\/(typescript|eslint|@vscode\/vsce)\//];
const problems = [];
// TypeScript's native compiler (the TypeScript checker and language server), with the library
// declarations it reads and its Apache-2.0 licence.
const ts = `extension/server/third_party/typescript/node_modules/@typescript/typescript-${/TargetPlatform="linux-arm64"/.test(manifest) ? "linux-arm64" : "linux-x64"}`;
const server = ["extension/server/bin/hydra", "extension/server/bin/hydra-clang-shim", `${ts}/lib/tsc`];
if (withServer) {
  must.push(...server, "extension/server/lib/clang/19/include/stddef.h", "extension/server/INSTALL", `${ts}/lib/lib.d.ts`, `${ts}/LICENSE`);
  for (const b of server) if (names.includes(b) && (modes.get(b) & 0o111) !== 0o111) problems.push(`${b} is not executable (mode ${modes.get(b).toString(8)})`);
  if (!/TargetPlatform="linux-/.test(manifest)) problems.push("the manifest names no Linux TargetPlatform");
} else {
  mustNot.push(/^extension\/server\//);
}
for (const m of must) if (!names.includes(m)) problems.push(`missing ${m}`);
for (const n of names) for (const re of mustNot) if (re.test(n)) problems.push(`should not hold ${n}`);
if (problems.length > 0) {
  console.error(`${file}: ${problems.slice(0, 20).join("; ")}`);
  process.exit(1);
}
console.log(`ok - ${file}: ${names.length} files, manifest + out/src + vscode-languageclient${withServer ? " + server/ (executable hydra, shim and tsc, Clang's headers, tsc's lib.d.ts and LICENSE)" : ", no server/"}, no tests or sources`);
