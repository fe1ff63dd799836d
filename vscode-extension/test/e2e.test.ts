// End-to-end tests of the extension's logic against the real `hydra lsp` (bin/hydra) with the
// real Clang checker and the SCRIPTED STAND-IN model (hydra sim-server --script, not a real
// model). Only the `vscode` module is a stub (vscode-stub.ts): the server is started with the
// command line the extension computes, initialized with its settings, and driven by its
// generate / cancel / inline completion code over vscode-languageserver-protocol.
import "./setup";
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as vscode from "vscode";
import { generateArg, generateWithProgress } from "../src/generate";
import { provideInlineCompletions } from "../src/inline";
import { currentSettings, didChangeConfigurationParams } from "../src/settings";
import { hydraBin, Session, StandIn, startStandIn, testdata } from "./harness";
// eslint-disable-next-line @typescript-eslint/no-require-imports
const stub = require("vscode") as typeof import("./vscode-stub");

const expected = fs.readFileSync(path.join(testdata, "sum.expected.cpp"), "utf8");
const prompt = fs.readFileSync(path.join(testdata, "sum.cpp"), "utf8");
// The text the stand-in's repaired answer inserts: expected minus the prompt (which ends in the
// blank line the cursor is on).
const generated = expected.slice(prompt.length - 1, expected.length - 1);
const cursor = { line: prompt.split("\n").length - 2, character: 0 };

function compiles(text: string): { ok: boolean; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hydra-vscode-cc-"));
  const f = path.join(dir, "a.cpp");
  fs.writeFileSync(f, text);
  try {
    execFileSync(process.env.HYDRA_CLANG || "clang-19", ["-fsyntax-only", "-std=c++17", f], { stdio: "pipe" });
    return { ok: true, out: "" };
  } catch (e) {
    return { ok: false, out: String((e as { stderr?: Buffer }).stderr ?? e) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("the extension against the real hydra lsp (model: scripted stand-in)", () => {
  let standIn: StandIn;
  let s: Session;

  before(async () => {
    standIn = await startStandIn();
    stub.settings.hydra = {
      path: hydraBin(),
      modelUrl: standIn.url,
      model: "scripted-stand-in",
      maxAttempts: 8,
      maxTokens: 0, // VS Code's default for an unset number: must be left out, not sent as 0
      clangFlags: ["-std=c++17"],
    };
    s = await Session.start();
  });

  after(async () => {
    await s?.stop();
    await standIn?.stop();
  });

  it("Generate with Repair: the checker makes the model repair, the document compiles", async () => {
    stub.recorded.reset();
    s.shownMessages.length = 0;
    const uri = await s.open("sum.cpp");
    const r = await generateWithProgress(s.conn, generateArg(uri, { start: cursor, end: cursor }));
    assert.ok(r, `no result; messages: ${JSON.stringify(stub.recorded.messages)}\nserver: ${s.stderr}`);
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.ok(r.attempts >= 2, `attempts ${r.attempts}: the faulty first answer should have been repaired`);
    assert.equal(s.text(uri), expected);
    const c = compiles(s.text(uri));
    assert.ok(c.ok, c.out);
    assert.ok(s.appliedEdits.length > 0, "the server should stream its edits as workspace/applyEdit");
    // Progress in the notification area, and the end reported.
    assert.equal(stub.recorded.progress.length, 1);
    assert.equal(stub.recorded.progress[0].options.location, vscode.ProgressLocation.Notification);
    assert.equal(stub.recorded.progress[0].options.cancellable, true);
    assert.ok(stub.recorded.progress[0].reports.length > 0, "the server's work-done progress should be shown");
    // One notification at the end: the extension's, with the server's summary line; the server
    // sends no window/showMessage (clientShowsSummary). No line repeats the "Hydra" title.
    assert.equal(stub.recorded.messages.length, 1, JSON.stringify(stub.recorded.messages));
    assert.equal(stub.recorded.messages[0].level, "info");
    assert.match(stub.recorded.messages[0].text, /^Hydra: accepted \d+ lines/);
    assert.deepEqual(s.shownMessages, [], "the server should leave the summary to the extension");
    for (const line of stub.recorded.progress[0].reports.map((x) => x.message ?? "")) {
      assert.doesNotMatch(line, /^hydra:/i, "a progress line repeats the title");
    }
  });

  it("inline completion returns the repaired continuation", async () => {
    const uri = await s.open("sum.cpp", "inline.cpp");
    const items = await provideInlineCompletions(s.conn, { uri: { toString: () => uri } }, cursor, {
      triggerKind: vscode.InlineCompletionTriggerKind.Invoke,
    });
    assert.ok(items.length > 0, "no inline completion items");
    // The cursor is at the start of an empty line that has its own break: the server's item ends
    // without its final line break (the line's own ends it), so accepting it gives the same
    // program as Generate with Repair, less one blank line.
    assert.equal(items[0].insertText, generated.slice(0, -1));
    assert.equal(s.text(uri), prompt, "an inline completion must not edit the document");
    // With the document's lines, as VS Code passes it: the item stays so (forVSCode has nothing
    // to drop; VS Code would hide an item ending with a break there).
    const lines = prompt.split("\n");
    const doc = { uri: { toString: () => uri }, lineAt: (l: number) => ({ text: lines[l] }), lineCount: lines.length };
    const shaped = await provideInlineCompletions(s.conn, doc, cursor, { triggerKind: vscode.InlineCompletionTriggerKind.Invoke });
    assert.equal(shaped[0]?.insertText, generated.slice(0, -1));
    const r = shaped[0].range!;
    assert.deepEqual([r.start.line, r.start.character, r.end.line, r.end.character], [cursor.line, 0, cursor.line, 0]);
  });

  it("a settings change reaches the running server (workspace/didChangeConfiguration)", async () => {
    const good = stub.settings.hydra.modelUrl;
    try {
      // Point the server at a port where no model listens: the next generation must fail.
      stub.settings.hydra = { ...stub.settings.hydra, modelUrl: "http://127.0.0.1:9/v1" };
      await s.conn.sendNotification("workspace/didChangeConfiguration", didChangeConfigurationParams(currentSettings()));
      stub.recorded.reset();
      s.shownMessages.length = 0;
      const uri = await s.open("sum.cpp", "unreachable.cpp");
      const r = await generateWithProgress(s.conn, generateArg(uri, { start: cursor, end: cursor }));
      assert.ok(r === undefined || r.ok === false, `generation should fail without a model: ${JSON.stringify(r)}`);
      // The server names the model URL it tried: the one the changed setting gave it.
      assert.match(r?.message ?? JSON.stringify(stub.recorded.messages), /127\.0\.0\.1:9\b/);
      assert.equal(stub.recorded.messages.at(-1)?.level, "warning", JSON.stringify(stub.recorded.messages));
      assert.equal(s.text(uri), prompt, "a failed generation must leave the document as it was");
      // The server also pulls the section (workspace/configuration); the extension's answer is
      // the mapped settings: the changed URL, and no maxTokens (VS Code's 0 = the default).
      assert.ok(s.configurationAnswers.length > 0, "the server should have asked for workspace/configuration");
      assert.deepEqual(s.configurationAnswers.at(-1), [{ modelUrl: "http://127.0.0.1:9/v1", model: "scripted-stand-in", maxAttempts: 8, clangFlags: ["-std=c++17"], clientShowsSummary: true }]);
    } finally {
      stub.settings.hydra = { ...stub.settings.hydra, modelUrl: good };
      await s.conn.sendNotification("workspace/didChangeConfiguration", didChangeConfigurationParams(currentSettings()));
    }
    // And back: the restored settings generate again.
    const uri = await s.open("sum.cpp", "restored.cpp");
    const r = await generateWithProgress(s.conn, generateArg(uri, { start: cursor, end: cursor }));
    assert.equal(r?.ok, true, JSON.stringify(r));
    assert.equal(s.text(uri), expected);
  });

  it("Cancel (the notification's Cancel button) stops a running generation", async () => {
    stub.recorded.reset();
    s.shownMessages.length = 0;
    const uri = await s.open("slow.cpp");
    const slowPrompt = s.text(uri);
    const pos = { line: slowPrompt.split("\n").length - 2, character: 0 };
    const running = generateWithProgress(s.conn, generateArg(uri, { start: pos, end: pos }));
    // Press Cancel once the server reported progress (or after 2 s at the latest).
    for (let i = 0; i < 40 && (stub.recorded.progress[0]?.reports.length ?? 0) === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    stub.recorded.progress[0].cancel.cancel();
    const r = await running;
    assert.ok(r, `no result: ${JSON.stringify(stub.recorded.messages)}`);
    assert.equal(r.ok, false, JSON.stringify(r));
    assert.match(r.reason, /cancel/i);
    assert.ok(s.text(uri).startsWith(slowPrompt.slice(0, -1)), "the text before the cursor must be intact");
    assert.equal(stub.recorded.messages.at(-1)?.level, "warning", JSON.stringify(stub.recorded.messages));
  });
});
