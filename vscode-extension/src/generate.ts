// Generate and cancel: the palette commands and the server's code action → hydra.generate /
// hydra.cancel requests, with the server's work-done progress shown in a notification.
// Imports `vscode` (stubbed in the Node tests) and the LSP protocol types, never
// vscode-languageclient, so that the Node tests can run it against the real `hydra lsp`.
import * as vscode from "vscode";
import { ProgressType, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from "vscode-languageserver-protocol";
import type { Connection, Disposable } from "./connection";

/** The server's commands (executeCommandProvider). */
export const CMD_GENERATE = "hydra.generate";
export const CMD_CANCEL = "hydra.cancel";

/** hydra.generate's one argument: a position, or a range (a selection to replace). */
export interface GenerateArg {
  uri: string;
  position?: { line: number; character: number };
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** What hydra.generate returns when generation ends. */
export interface GenerateResult {
  ok: boolean;
  text: string;
  attempts: number;
  outputTokens: number;
  reason: string;
  /** message explains a failure (e.g. the model server could not be reached), when given. */
  message?: string;
  /** trace is the SVG picture of the search; showTrace the server command that opens it. */
  trace?: string;
  showTrace?: { title: string; command: string; arguments?: unknown[] };
}

type Pos = { line: number; character: number };

/** generateArg builds hydra.generate's argument from a document URI and a selection: a position
 * when the selection is empty, else the range. */
export function generateArg(uri: string, selection: { start: Pos; end: Pos }): GenerateArg {
  const start = { line: selection.start.line, character: selection.start.character };
  const end = { line: selection.end.line, character: selection.end.character };
  if (start.line === end.line && start.character === end.character) {
    return { uri, position: start };
  }
  return { uri, range: { start, end } };
}

type WorkDone = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;
const workDone = new ProgressType<WorkDone>();

/** withoutPrefix drops a leading "Hydra: " (any case): the notification's title already says
 * Hydra, and the server prefixes its titles and summaries with it. */
function withoutPrefix(s: string): string {
  return s.replace(/^hydra:\s*/i, "");
}

/** progressLine formats one work-done progress value for the notification (titled "Hydra"). */
export function progressLine(v: WorkDone): string {
  const parts: string[] = [];
  if (v.kind === "begin" && v.title) {
    parts.push(withoutPrefix(v.title));
  }
  if (v.message) {
    parts.push(withoutPrefix(v.message));
  }
  let line = parts.join(": ");
  if (v.kind !== "end" && typeof v.percentage === "number") {
    line += ` (${v.percentage}%)`;
  }
  if (v.kind === "end" && line === "") {
    line = "done";
  }
  return line.trim();
}

let tokens = 0;

/** runGenerate sends hydra.generate with a fresh work-done token and resolves with the result
 * when generation ends. Each progress line goes to report; when cancel fires, hydra.cancel is
 * sent for the document (the request then ends with ok=false). */
export async function runGenerate(
  conn: Connection,
  arg: GenerateArg,
  report: (line: string, percentage?: number) => void,
  cancel?: vscode.CancellationToken,
): Promise<GenerateResult> {
  const token = `hydra.vscode-${++tokens}`;
  const subs: Disposable[] = [
    conn.onProgress(workDone, token, (v) => {
      const line = progressLine(v);
      if (line !== "") {
        report(line, v.kind === "end" ? 100 : v.percentage);
      }
    }),
  ];
  if (cancel) {
    subs.push(cancel.onCancellationRequested(() => void runCancel(conn, arg.uri)));
  }
  try {
    const result = await conn.sendRequest<GenerateResult | null>("workspace/executeCommand", {
      command: CMD_GENERATE,
      arguments: [arg],
      workDoneToken: token,
    });
    if (!result || typeof result !== "object" || typeof result.ok !== "boolean") {
      throw new Error(`hydra.generate returned ${JSON.stringify(result)}, not a result`);
    }
    return result;
  } finally {
    subs.forEach((d) => d.dispose());
  }
}

/** runCancel sends hydra.cancel for one document (uri) or, without one, for all. */
export async function runCancel(conn: Connection, uri?: string): Promise<void> {
  await conn.sendRequest("workspace/executeCommand", {
    command: CMD_CANCEL,
    arguments: uri ? [{ uri }] : [],
  });
}

/** summary is the one message at the end of a generation: the server's own summary line
 * (result.message), whose window/showMessage the extension turns off (clientShowsSummary), so
 * that VS Code shows one notification, not two. */
export function summary(r: GenerateResult): string {
  if (r.message) {
    return `Hydra: ${withoutPrefix(r.message)}`;
  }
  if (r.ok) {
    return `Hydra: done: ${r.attempts} attempt(s), ${r.outputTokens} output tokens`;
  }
  return `Hydra: stopped: ${r.reason || "unknown reason"}`;
}

/** generateWithProgress runs hydra.generate for arg inside a cancellable notification (titled
 * "Hydra") that shows the server's progress, and reports the end in one notification. */
export async function generateWithProgress(conn: Connection, arg: GenerateArg): Promise<GenerateResult | undefined> {
  let last = 0;
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Hydra", cancellable: true },
      (progress, token) =>
        runGenerate(
          conn,
          arg,
          (message, percentage) => {
            const increment = typeof percentage === "number" && percentage > last ? percentage - last : undefined;
            if (increment !== undefined) {
              last = percentage as number;
            }
            progress.report({ message, increment });
          },
          token,
        ),
    );
    // The summary offers the picture of the search: the server's hydra.showTrace asks VS Code to
    // show it (window/showDocument).
    const show = result.showTrace;
    const items = show ? [show.title] : [];
    const shown = result.ok
      ? vscode.window.showInformationMessage(summary(result), ...items)
      : vscode.window.showWarningMessage(summary(result), ...items);
    void Promise.resolve(shown).then((choice) => {
      if (show && choice === show.title) {
        void conn.sendRequest("workspace/executeCommand", { command: show.command, arguments: show.arguments ?? [] });
      }
    });
    return result;
  } catch (e) {
    void vscode.window.showErrorMessage(`Hydra: generation failed: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

/** generateInEditor is "Hydra: Generate with Repair": at the cursor, or over the selection. */
export function generateInEditor(conn: Connection, editor: vscode.TextEditor): Promise<GenerateResult | undefined> {
  return generateWithProgress(conn, generateArg(editor.document.uri.toString(), editor.selection));
}
