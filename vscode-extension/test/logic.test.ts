// Unit tests of the extension's logic that needs no server: settings → configuration, command
// arguments, progress lines, inline completion conversion. `vscode` is the stub (setup.ts).
import "./setup";
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import * as vscode from "vscode";
import { generateArg, progressLine, summary } from "../src/generate";
import { forVSCode, lspTriggerKind, toItem } from "../src/inline";
import { serverCandidates } from "../src/server";
import { configurationItems, documentSelector, inlineCompletionEnabled, LANGUAGES, settingsFrom } from "../src/settings";

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
        fim: "qwen",
        inlineMaxAttempts: 3,
        clangd: true,
        clangdPath: "/usr/bin/clangd-19",
      },
      want: {
        modelUrl: "http://127.0.0.1:8000/v1",
        model: "qwen2.5-coder-32b",
        apiKeyEnv: "OPENAI_API_KEY",
        policy: "tokpol",
        maxTokens: 2048,
        maxAttempts: 6,
        clangFlags: ["-std=c++20", "-Iinclude"],
        fim: "qwen",
        inlineMaxAttempts: 3,
        clangd: true,
        clangdPath: "/usr/bin/clangd-19",
      },
    },
    {
      name: "VS Code's defaults (empty strings, zeros, empty lists) are left out",
      values: { modelUrl: "", model: "  ", maxTokens: 0, maxAttempts: 0, clangFlags: [], policy: "", fim: "", inlineMaxAttempts: 0, clangd: false, clangdPath: "" },
      want: {},
    },
    {
      name: "strings are trimmed, numbers floored, non-strings dropped from clangFlags",
      values: { model: " m ", maxTokens: 100.7, clangFlags: ["-O2", 3, null] },
      want: { model: "m", maxTokens: 100, clangFlags: ["-O2"] },
    },
    { name: "negative numbers mean the default", values: { maxTokens: -5 }, want: {} },
    { name: "checkTimeout 0 (no limit) is sent", values: { checkTimeout: 0 }, want: { checkTimeout: 0 } },
    { name: "checkTimeout keeps fractions", values: { checkTimeout: 2.5 }, want: { checkTimeout: 2.5 } },
    { name: "checkTimeout unset or negative is the server's default", values: { checkTimeout: null, maxTokens: 1 }, want: { maxTokens: 1 } },
    { name: "a negative checkTimeout is left out", values: { checkTimeout: -1 }, want: {} },
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
      [{ ...s, clientShowsSummary: true }, "m", null, null, null],
    );
  });
});

describe("serverCandidates", () => {
  const commands = (values: Record<string, unknown>, ext?: string) => serverCandidates(reader(values), ext).map((c) => [c.kind, c.command]);
  it("without settings: the bundled server, then hydra on PATH", () => {
    assert.deepEqual(commands({}, "/ext"), [
      ["bundled", "/ext/server/bin/hydra"],
      ["PATH", "hydra"],
    ]);
  });
  it("hydra.path first, trimmed", () => {
    assert.deepEqual(commands({ path: " /opt/hydra/bin/hydra " }, "/ext"), [
      ["setting", "/opt/hydra/bin/hydra"],
      ["bundled", "/ext/server/bin/hydra"],
      ["PATH", "hydra"],
    ]);
  });
  it("the older hydra.serverPath when hydra.path is empty, hydra.path when both are set", () => {
    assert.deepEqual(commands({ path: "", serverPath: "/old/hydra" })[0], ["setting", "/old/hydra"]);
    assert.deepEqual(commands({ path: "/new/hydra", serverPath: "/old/hydra" })[0], ["setting", "/new/hydra"]);
  });
});

describe("inlineCompletionEnabled", () => {
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

describe("progressLine", () => {
  // The notification is titled "Hydra": the server's own "Hydra: " / "hydra: " prefixes are
  // dropped, so that no line reads "Hydra: Hydra: …".
  const cases = [
    { v: { kind: "begin", title: "Hydra: generate with repair", message: "starting" }, want: "generate with repair: starting" },
    { v: { kind: "begin", title: "Hydra", message: "generating", percentage: 0 }, want: "Hydra: generating (0%)" },
    { v: { kind: "report", message: "attempt 2: rolled back to line 5", percentage: 40 }, want: "attempt 2: rolled back to line 5 (40%)" },
    { v: { kind: "report", message: "Hydra: attempt 1 from line 5" }, want: "attempt 1 from line 5" },
    { v: { kind: "report" }, want: "" },
    { v: { kind: "end", message: "hydra: accepted 4 lines; 19 tokens" }, want: "accepted 4 lines; 19 tokens" },
    { v: { kind: "end" }, want: "done" },
  ] as const;
  for (const c of cases) {
    it(`${c.v.kind} → ${JSON.stringify(c.want)}`, () => assert.equal(progressLine(c.v), c.want));
  }
});

describe("summary", () => {
  it("is the server's summary line, with one 'Hydra: ' in front", () => {
    assert.equal(
      summary({ ok: true, text: "", attempts: 2, outputTokens: 19, reason: "accepted", message: "hydra: accepted 4 lines; 19 tokens, 2 attempts, 0.4 s" }),
      "Hydra: accepted 4 lines; 19 tokens, 2 attempts, 0.4 s",
    );
  });
  it("without the server's line: the counts, or the reason", () => {
    assert.equal(summary({ ok: true, text: "", attempts: 2, outputTokens: 31, reason: "accepted" }), "Hydra: done: 2 attempt(s), 31 output tokens");
    assert.equal(summary({ ok: false, text: "", attempts: 1, outputTokens: 3, reason: "cancelled" }), "Hydra: stopped: cancelled");
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
  describe("forVSCode: an item VS Code would move to the line above and hide", () => {
    const at = (line: number, character: number) => ({ start: { line, character }, end: { line, character } });
    const body = "  int total = 0;\n  return total;\n}\n";
    it("at the start of an empty line: the final line break goes, the line's own break ends it", () => {
      assert.deepEqual(forVSCode({ insertText: body, range: at(4, 0) }, ""), {
        insertText: "  int total = 0;\n  return total;\n}",
        range: { start: { line: 4, character: 0 }, end: { line: 4, character: 0 } },
      });
    });
    it("at the start of a blank line: the blanks are replaced too (no trailing spaces after '}')", () => {
      assert.deepEqual(forVSCode({ insertText: body, range: at(4, 0) }, "    ").range, {
        start: { line: 4, character: 0 },
        end: { line: 4, character: 4 },
      });
    });
    it("CRLF line breaks are dropped whole", () => {
      assert.equal(forVSCode({ insertText: "a;\r\nb;\r\n", range: at(2, 0) }, "").insertText, "a;\r\nb;");
    });
    const kept: { name: string; insertText: string; range: ReturnType<typeof at>; line: string | undefined }[] = [
      { name: "mid-line", insertText: body, range: at(4, 2), line: "  " },
      { name: "a line with text", insertText: body, range: at(4, 0), line: "foo();" },
      { name: "the first line", insertText: body, range: at(0, 0), line: "" },
      { name: "no final line break", insertText: "x;\ny;", range: at(4, 0), line: "" },
      { name: "a leading line break", insertText: "\nx;\n", range: at(4, 0), line: "" },
      { name: "an unknown line", insertText: body, range: at(4, 0), line: undefined },
    ];
    for (const k of kept) {
      it(`is left alone: ${k.name}`, () => {
        const it0 = { insertText: k.insertText, range: k.range };
        assert.deepEqual(forVSCode(it0, k.line), it0);
      });
    }
  });
});

describe("the languages served", () => {
  // package.json, as VS Code reads it (out/test/ → the extension's root).
  const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
    activationEvents: string[];
    contributes: { menus: { commandPalette: { command: string; when: string }[] } };
  };
  it("are C, C++ and TypeScript (.ts and .tsx), with the LSP's language ids", () => {
    assert.deepEqual(LANGUAGES, ["c", "cpp", "typescript", "typescriptreact"]);
  });
  it("activate the extension (package.json's activationEvents)", () => {
    assert.deepEqual(pkg.activationEvents, LANGUAGES.map((l) => `onLanguage:${l}`));
  });
  it("show the commands in the palette (their when clauses)", () => {
    for (const m of pkg.contributes.menus.commandPalette) {
      assert.equal(m.when, LANGUAGES.map((l) => `editorLangId == ${l}`).join(" || "), m.command);
    }
  });
  it("are what the client sends to the server, on disk and untitled", () => {
    const sel = documentSelector();
    for (const language of LANGUAGES) {
      for (const scheme of ["file", "untitled"]) {
        assert.ok(sel.some((d) => d.language === language && d.scheme === scheme), `${scheme} ${language}`);
      }
    }
    assert.equal(sel.length, 2 * LANGUAGES.length);
  });
});
