// One undo stop per generation in VS Code. The server streams a generation as many
// workspace/applyEdit requests (growth, and rollbacks that take rejected text out again); applied
// one by one they would be as many undo steps. While hydra.generate runs for a document shown in
// an editor, its edits are applied with TextEditor.edit and no undo stop between them, and one
// stop closes the group when the generation ends: a single undo takes the whole generation out,
// and never brings rolled-back text back (the group only ever holds what the server applied,
// which ends as the accepted text). Other edits go through vscode-languageclient as usual.
import * as vscode from "vscode";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult } from "vscode-languageserver-protocol";

/** The documents (URI strings) with a running generation, and how many of its edits were applied. */
const running = new Map<string, { edits: number }>();

function editorFor(uri: string): vscode.TextEditor | undefined {
  return vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri);
}

/** beginGeneration marks uri as generating: its next server edit opens one undo group. */
export function beginGeneration(uri: string): void {
  running.set(uri, { edits: 0 });
}

/** endGeneration closes the generation's undo group. */
export async function endGeneration(uri: string): Promise<void> {
  const g = running.get(uri);
  running.delete(uri);
  const editor = editorFor(uri);
  if (g && g.edits > 0 && editor) {
    await editor.edit(() => undefined, { undoStopBefore: false, undoStopAfter: true });
  }
}

/** applyGenerationEdit is middleware.workspace.handleApplyEdit: a generation's edit to a shown
 * document joins the generation's undo group; anything else goes to next. A versioned edit for
 * another version is refused, as vscode-languageclient does (the server sends it again). */
export function applyGenerationEdit<R>(
  params: ApplyWorkspaceEditParams,
  next: (p: ApplyWorkspaceEditParams) => R,
): R | Promise<ApplyWorkspaceEditResult> {
  const changes = params.edit.documentChanges;
  const dc = changes && changes.length === 1 && "textDocument" in changes[0] ? changes[0] : undefined;
  const g = dc ? running.get(dc.textDocument.uri) : undefined;
  const editor = dc ? editorFor(dc.textDocument.uri) : undefined;
  const plain = dc?.edits.every((e) => "newText" in e) ?? false;
  if (!dc || !g || !editor || !plain) {
    return next(params);
  }
  return applyJoined(editor, g, dc.textDocument.version, dc.edits as { range: Range; newText: string }[]);
}

type Range = { start: { line: number; character: number }; end: { line: number; character: number } };

/** applyJoined applies a generation's edit to its editor without an undo stop before it (but
 * the group's first). */
async function applyJoined(
  editor: vscode.TextEditor,
  g: { edits: number },
  version: number | null | undefined,
  edits: { range: Range; newText: string }[],
): Promise<ApplyWorkspaceEditResult> {
  if (version !== null && version !== undefined && editor.document.version !== version) {
    return { applied: false, failureReason: `version ${version} is not the document's ${editor.document.version}` };
  }
  const applied = await editor.edit(
    (b) => {
      for (const e of edits) {
        const r = e.range;
        b.replace(new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character), e.newText);
      }
    },
    { undoStopBefore: g.edits === 0, undoStopAfter: false },
  );
  if (applied) {
    g.edits++;
  }
  return { applied };
}
