// Inline completion: VS Code's inline completion provider bridged to the server's
// textDocument/inlineCompletion (LSP 3.18). Imports `vscode` (stubbed in the Node tests), never
// vscode-languageclient.
import * as vscode from "vscode";
import type { Connection } from "./connection";

/** LSP's InlineCompletionTriggerKind: Invoked = 1, Automatic = 2 (VS Code counts from 0). */
export function lspTriggerKind(kind: vscode.InlineCompletionTriggerKind): 1 | 2 {
  return kind === vscode.InlineCompletionTriggerKind.Invoke ? 1 : 2;
}

type LspPos = { line: number; character: number };
export type LspItem = {
  insertText: string | { kind: "snippet"; value: string };
  filterText?: string;
  range?: { start: LspPos; end: LspPos };
  command?: { title: string; command: string; arguments?: unknown[] };
};

/** forVSCode reshapes an item that VS Code would drop. VS Code moves an insertion that starts at
 * column 0 of a line below the first and ends with a line break to the end of the line above
 * (`reshapeMultiLineInsertion` in src/vs/editor/contrib/inlineCompletions/browser/model/
 * inlineSuggestionItem.ts), and then never shows it, because the cursor is not on that line
 * (`inlineCompletionIsVisible`). The server ends such an item on the cursor's line itself when
 * the line has a break of its own (docs/lsp.md, "It ends on the cursor's line"); what is left is
 * a blank last line without one. When the rest of the cursor's line is blank, the item ends
 * without its final line break instead, and replaces that blank rest, as if the user had typed
 * it there. lineText is the text of the item's line. */
export function forVSCode(it: LspItem, lineText: string | undefined): LspItem {
  const r = it.range;
  const text = it.insertText;
  if (typeof text !== "string" || !r || lineText === undefined) {
    return it;
  }
  const empty = r.start.line === r.end.line && r.start.character === r.end.character;
  const brk = text.endsWith("\r\n") ? 2 : text.endsWith("\n") ? 1 : 0;
  if (!empty || r.start.character !== 0 || r.start.line === 0 || brk === 0 || text.startsWith("\n") || text.startsWith("\r\n")) {
    return it;
  }
  if (lineText.trim() !== "") {
    return it;
  }
  const end = { line: r.start.line, character: lineText.length };
  return { ...it, insertText: text.slice(0, -brk), range: { start: r.start, end } };
}

/** toItem converts one LSP InlineCompletionItem to VS Code's. */
export function toItem(it: LspItem): vscode.InlineCompletionItem {
  const text = typeof it.insertText === "string" ? it.insertText : new vscode.SnippetString(it.insertText.value);
  const range = it.range
    ? new vscode.Range(it.range.start.line, it.range.start.character, it.range.end.line, it.range.end.character)
    : undefined;
  const item = new vscode.InlineCompletionItem(text, range, it.command);
  if (it.filterText !== undefined) {
    item.filterText = it.filterText;
  }
  return item;
}

/** What provideInlineCompletions reads of a document: its URI and, when it can, a line's text. */
export interface InlineDocument {
  uri: { toString(): string };
  lineAt?(line: number): { text: string };
  lineCount?: number;
}

/** provideInlineCompletions asks the server for inline completions at position and converts
 * them (a list or a bare array). Cancelling token cancels the request. */
export async function provideInlineCompletions(
  conn: Connection,
  document: InlineDocument,
  position: { line: number; character: number },
  context: { triggerKind: vscode.InlineCompletionTriggerKind },
  token?: vscode.CancellationToken,
): Promise<vscode.InlineCompletionItem[]> {
  const params = {
    textDocument: { uri: document.uri.toString() },
    position: { line: position.line, character: position.character },
    context: { triggerKind: lspTriggerKind(context.triggerKind) },
  };
  type Res = LspItem[] | { items: LspItem[] } | null;
  // No token argument at all when there is none: vscode-jsonrpc would take an undefined one for
  // a second parameter.
  const res = await (token ? conn.sendRequest<Res>("textDocument/inlineCompletion", params, token) : conn.sendRequest<Res>("textDocument/inlineCompletion", params));
  const items = Array.isArray(res) ? res : (res?.items ?? []);
  const lineText = (line: number) =>
    document.lineAt && (document.lineCount === undefined || line < document.lineCount) ? document.lineAt(line).text : undefined;
  return items.map((it) => toItem(forVSCode(it, it.range ? lineText(it.range.start.line) : undefined)));
}
