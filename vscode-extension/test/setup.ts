// Imported first by every test file: makes `require("vscode")` load the stub (vscode-stub.ts),
// since the real module exists only inside VS Code.
import Module from "node:module";
import * as path from "node:path";

const stub = path.join(__dirname, "vscode-stub.js");
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const m = Module as any;
const resolve = m._resolveFilename;
m._resolveFilename = function (request: string, ...rest: unknown[]) {
  if (request === "vscode") {
    return stub;
  }
  return resolve.call(this, request, ...rest);
};
