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
type LspItem = {
  insertText: string | { kind: "snippet"; value: string };
  filterText?: string;
  range?: { start: LspPos; end: LspPos };
  command?: { title: string; command: string; arguments?: unknown[] };
};

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

/** provideInlineCompletions asks the server for inline completions at position and converts
 * them (a list or a bare array). Cancelling token cancels the request. */
export async function provideInlineCompletions(
  conn: Connection,
  document: { uri: { toString(): string } },
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
  return items.map(toItem);
}
