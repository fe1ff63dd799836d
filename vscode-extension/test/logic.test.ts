// Unit tests of the extension's logic that needs no server: settings → configuration, command
// arguments, progress lines, inline completion conversion. `vscode` is the stub (setup.ts).
import "./setup";
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import * as vscode from "vscode";
import { generateArg, progressLine, summary } from "../src/generate";
import { lspTriggerKind, toItem } from "../src/inline";
import { configurationItems, inlineCompletionEnabled, serverCommand, settingsFrom } from "../src/settings";

const reader = (values: Record<string, unknown>) => ({
  get: <T>(k: string) => values[k] as T | undefined,
});

describe("settingsFrom", () => {
  const cases: { name: string; values: Record<string, unknown>; want: object }[] = [
    { name: "empty settings leave every server default", values: {}, want: {} },
    {
      name: "every setting is passed under its server name",
      values: {
        modelUrl: "http://127.0.0.1:8000/v1",
        model: "qwen2.5-coder-32b",
        apiKeyEnv: "OPENAI_API_KEY",
        policy: "tokpol",
        maxTokens: 2048,
        maxAttempts: 6,
        clangFlags: ["-std=c++20", "-Iinclude"],
      },
      want: {
        modelUrl: "http://127.0.0.1:8000/v1",
        model: "qwen2.5-coder-32b",
        apiKeyEnv: "OPENAI_API_KEY",
        policy: "tokpol",
        maxTokens: 2048,
        maxAttempts: 6,
        clangFlags: ["-std=c++20", "-Iinclude"],
      },
    },
    {
      name: "VS Code's defaults (empty strings, zeros, empty lists) are left out",
      values: { modelUrl: "", model: "  ", maxTokens: 0, maxAttempts: 0, clangFlags: [], policy: "" },
      want: {},
    },
    {
      name: "strings are trimmed, numbers floored, non-strings dropped from clangFlags",
      values: { model: " m ", maxTokens: 100.7, clangFlags: ["-O2", 3, null] },
      want: { model: "m", maxTokens: 100, clangFlags: ["-O2"] },
    },
    { name: "negative numbers mean the default", values: { maxTokens: -5 }, want: {} },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(settingsFrom(reader(c.values)), c.want));
  }
});

describe("configurationItems", () => {
  const s = { model: "m", maxAttempts: 3 };
  it("answers the hydra section, keys inside it and null for other sections", () => {
    assert.deepEqual(
      configurationItems([{ section: "hydra" }, { section: "hydra.model" }, { section: "hydra.policy" }, { section: "clangd" }, {}], s),
      [s, "m", null, null, null],
    );
  });
});

describe("serverCommand", () => {
  it("runs `hydra lsp` from $PATH by default", () => {
    assert.deepEqual(serverCommand(reader({})), { command: "hydra", args: ["lsp"] });
  });
  it("runs hydra.serverPath when set", () => {
    assert.deepEqual(serverCommand(reader({ serverPath: " /opt/hydra/bin/hydra " })), { command: "/opt/hydra/bin/hydra", args: ["lsp"] });
  });
  it("inline completion is on unless turned off", () => {
    assert.equal(inlineCompletionEnabled(reader({})), true);
    assert.equal(inlineCompletionEnabled(reader({ "inlineCompletion.enabled": false })), false);
  });
});

describe("generateArg", () => {
  const uri = "file:///w/a.cpp";
  it("an empty selection is a position", () => {
    const p = { line: 4, character: 2 };
    assert.deepEqual(generateArg(uri, { start: p, end: p }), { uri, position: { line: 4, character: 2 } });
  });
  it("a selection is a range", () => {
    assert.deepEqual(generateArg(uri, { start: { line: 1, character: 0 }, end: { line: 3, character: 5 } }), {
      uri,
      range: { start: { line: 1, character: 0 }, end: { line: 3, character: 5 } },
    });
  });
});

describe("progressLine and summary", () => {
  const cases = [
    { v: { kind: "begin", title: "Hydra", message: "generating", percentage: 0 }, want: "Hydra generating (0%)" },
    { v: { kind: "report", message: "attempt 2: rolled back to line 5", percentage: 40 }, want: "attempt 2: rolled back to line 5 (40%)" },
    { v: { kind: "report" }, want: "" },
    { v: { kind: "end", message: "accepted" }, want: "accepted done" },
  ] as const;
  for (const c of cases) {
    it(`${c.v.kind} → ${JSON.stringify(c.want)}`, () => assert.equal(progressLine(c.v), c.want));
  }
  it("summarises a finished and a stopped generation", () => {
    assert.equal(summary({ ok: true, text: "", attempts: 2, outputTokens: 31, reason: "accepted" }), "Hydra: done: 2 attempt(s), 31 output tokens");
    assert.equal(summary({ ok: false, text: "", attempts: 1, outputTokens: 3, reason: "cancelled" }), "Hydra: stopped: cancelled");
    assert.equal(
      summary({ ok: false, text: "", attempts: 1, outputTokens: 0, reason: "error", message: "model server unavailable" }),
      "Hydra: stopped: error: model server unavailable",
    );
  });
});

describe("inline completion conversion", () => {
  it("maps VS Code's trigger kinds to LSP's", () => {
    assert.equal(lspTriggerKind(vscode.InlineCompletionTriggerKind.Invoke), 1);
    assert.equal(lspTriggerKind(vscode.InlineCompletionTriggerKind.Automatic), 2);
  });
  it("converts text, snippet, range and command", () => {
    const a = toItem({ insertText: "x;\n" });
    assert.equal(a.insertText, "x;\n");
    assert.equal(a.range, undefined);
    const b = toItem({
      insertText: { kind: "snippet", value: "return ${1:x};" },
      range: { start: { line: 1, character: 2 }, end: { line: 1, character: 4 } },
      command: { title: "t", command: "c" },
      filterText: "ret",
    });
    assert.ok(b.insertText instanceof vscode.SnippetString);
    assert.equal((b.insertText as vscode.SnippetString).value, "return ${1:x};");
    assert.deepEqual([b.range!.start.line, b.range!.start.character, b.range!.end.line, b.range!.end.character], [1, 2, 1, 4]);
    assert.deepEqual(b.command, { title: "t", command: "c" });
    assert.equal(b.filterText, "ret");
  });
});
