// Which server the extension starts (src/server.ts), against the real `hydra` (bin/hydra): the
// hydra.path setting, then the server bundled in the extension (a platform VSIX's server/bin/hydra,
// here a copy of bin/hydra and its checker in a temporary extension directory), then `hydra` on
// PATH; the one chosen is started as `hydra lsp` and answers initialize. When none works the
// message names each one tried and why.
import "./setup";
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { bundledServer, fallbackMessage, noServerMessage, resolveServer, serverCandidates, versionMismatch } from "../src/server";
import { hydraBin, root, Session } from "./harness";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const stub = require("vscode") as typeof import("./vscode-stub");

describe("the server the extension starts (real bin/hydra)", () => {
  let tmp: string;
  let ext: string; // an extension directory with a bundled server
  let bare: string; // one without
  let onPath: string; // a directory holding hydra, for PATH
  let emptyDir: string; // a PATH without hydra
  const wrong = "/nonexistent/dir/hydra";
  const config = () => ({ get: <T>(k: string) => stub.settings.hydra?.[k] as T | undefined });

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "hydra-vscode-server-"));
    ext = path.join(tmp, "ext");
    bare = path.join(tmp, "bare");
    onPath = path.join(tmp, "onpath");
    emptyDir = path.join(tmp, "empty");
    for (const d of [path.join(ext, "server", "bin"), bare, onPath, emptyDir]) {
      fs.mkdirSync(d, { recursive: true });
    }
    // Copied without execute bits, as an unpacker that drops them would leave them: the
    // extension gives them back.
    const bin = path.dirname(hydraBin());
    for (const f of ["hydra", "hydra-clang-shim"]) {
      fs.copyFileSync(path.join(bin, f), path.join(ext, "server", "bin", f));
      fs.chmodSync(path.join(ext, "server", "bin", f), 0o644);
    }
    fs.symlinkSync(hydraBin(), path.join(onPath, "hydra"));
  });
  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
    delete stub.settings.hydra;
  });

  const envWithPath = (dir: string) => ({ ...process.env, PATH: dir });

  it("a wrong hydra.path falls back to the bundled server, which runs, and says so", async () => {
    stub.settings.hydra = { path: wrong };
    const found = await resolveServer(serverCandidates(config(), ext), envWithPath(emptyDir));
    assert.equal(found.chosen?.candidate.kind, "bundled", JSON.stringify(found));
    assert.equal(found.chosen?.candidate.command, bundledServer(ext));
    assert.match(found.chosen!.version, /\S/);
    assert.equal(fs.statSync(bundledServer(ext)).mode & 0o111, 0o111, "the bundled server's execute bits were not given back");
    assert.deepEqual(found.failed.map((f) => [f.candidate.kind, f.reason]), [["setting", "no such file"]]);
    const warn = fallbackMessage(found);
    assert.ok(warn?.includes(`hydra.path ${wrong} does not work (no such file)`) && warn.includes(bundledServer(ext)), warn);
    const s = await Session.start(ext, envWithPath(emptyDir));
    try {
      assert.equal(s.command, bundledServer(ext));
      assert.equal(s.serverInfo?.name, "hydra");
      assert.equal(s.serverInfo?.version, found.chosen!.version);
    } finally {
      await s.stop();
    }
  });

  it("the bundled server comes before hydra on PATH", async () => {
    stub.settings.hydra = {};
    const found = await resolveServer(serverCandidates(config(), ext), envWithPath(onPath));
    assert.equal(found.chosen?.candidate.kind, "bundled");
    assert.deepEqual(found.failed, []);
  });

  it("hydra.path comes before the bundled server", async () => {
    stub.settings.hydra = { path: hydraBin() };
    const s = await Session.start(ext, envWithPath(emptyDir));
    try {
      assert.equal(s.command, hydraBin());
      assert.equal(s.serverInfo?.name, "hydra");
    } finally {
      await s.stop();
    }
  });

  it("without a setting or a bundled server: hydra on PATH", async () => {
    stub.settings.hydra = {};
    const s = await Session.start(bare, envWithPath(onPath));
    try {
      assert.equal(s.command, "hydra");
      assert.equal(s.serverInfo?.name, "hydra");
    } finally {
      await s.stop();
    }
  });

  it("when none works, the message names each one tried and why", async () => {
    stub.settings.hydra = { path: wrong };
    const found = await resolveServer(serverCandidates(config(), bare), envWithPath(emptyDir));
    assert.equal(found.chosen, undefined);
    const msg = noServerMessage(found);
    for (const want of [`hydra.path ${wrong} (no such file)`, `the bundled server ${bundledServer(bare)} (no such file)`, "hydra on PATH (not found)"]) {
      assert.ok(msg.includes(want), `${msg}\nlacks: ${want}`);
    }
    await assert.rejects(Session.start(bare, envWithPath(emptyDir)), /no working language server/);
  });

  it("a hydra.path that is not hydra, or fails, is named with what it did", async () => {
    for (const [bin, want] of [
      ["/bin/true", /not a hydra binary/],
      ["/bin/false", /`--version` failed/],
      [tmp, /not a file/],
    ] as const) {
      stub.settings.hydra = { path: bin };
      const found = await resolveServer(serverCandidates(config(), bare), envWithPath(emptyDir));
      assert.equal(found.failed[0].candidate.command, bin);
      assert.match(found.failed[0].reason, want);
    }
  });
});

// The version check the extension makes once the server has started (extension.ts): the
// server's serverInfo.version against package.json's version. bin/hydra (make build) is of the
// extension's release; bin/hydra-other-version is the same source built with another version
// (-X main.version=0.0.0-other: scripts/test-editors.sh and editors/testlib.sh build it).
describe("the server's version against the extension's (real servers)", () => {
  const extensionVersion = (JSON.parse(fs.readFileSync(path.join(root, "vscode-extension", "package.json"), "utf8")) as { version: string }).version;
  after(() => {
    delete stub.settings.hydra;
  });

  it("a server of the extension's release: no warning", async () => {
    stub.settings.hydra = { path: hydraBin() };
    const s = await Session.start(undefined, process.env);
    try {
      assert.match(s.serverInfo?.version ?? "", new RegExp(`^${extensionVersion.replace(/\./g, "\\.")}(\\+|\\s|$)`));
      assert.equal(versionMismatch(extensionVersion, s.serverInfo?.version, s.command), undefined);
    } finally {
      await s.stop();
    }
  });

  it("a server of another release: a warning naming both versions and what to do", async () => {
    const other = path.join(path.dirname(hydraBin()), "hydra-other-version");
    if (!fs.existsSync(other)) {
      // As editors/testlib.sh builds it (scripts/test-editors.sh does so before the editors run).
      execFileSync("go", ["build", "-ldflags", "-X main.version=0.0.0-other", "-o", other, "./cmd/hydra"], { cwd: root, stdio: "inherit" });
    }
    stub.settings.hydra = { path: other };
    const s = await Session.start(undefined, process.env);
    try {
      assert.equal(s.serverInfo?.version?.split(" ")[0], "0.0.0-other");
      const warn = versionMismatch(extensionVersion, s.serverInfo?.version, s.command);
      assert.ok(warn?.includes(`extension is version ${extensionVersion}`) && warn.includes("is 0.0.0-other:") && warn.includes("update the extension or the server"), warn);
    } finally {
      await s.stop();
    }
  });
});
