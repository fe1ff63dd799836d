// The VS Code extension: starts `hydra lsp` through vscode-languageclient for C, C++ and
// TypeScript files (settings.ts's LANGUAGES),
// adds "Hydra: Generate with Repair" and "Hydra: Cancel", bridges inline completions and routes
// the server's code action through the same progress notification. The logic lives in
// settings.ts, generate.ts and inline.ts (tested in Node against the real server); this file
// only wires it to VS Code.
import * as vscode from "vscode";
import { CancellationToken, LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";
import { CMD_GENERATE, GenerateArg, generateInEditor, generateWithProgress, runCancel } from "./generate";
import { provideInlineCompletions } from "./inline";
import { applyGenerationEdit, beginGeneration, endGeneration } from "./undo";
import {
  configurationItems,
  currentSettings,
  didChangeConfigurationParams,
  documentSelector,
  inlineCompletionEnabled,
  initializationOptions,
  SECTION,
  SERVER_ARGS,
} from "./settings";
import { fallbackMessage, noServerMessage, resolveServer, serverCandidates, versionMismatch } from "./server";

let client: LanguageClient | undefined;

/** withSettingsButton opens the hydra.path setting when the message's "Open Settings" is pressed. */
async function withSettingsButton(shown: Thenable<string | undefined>): Promise<void> {
  if ((await shown) === "Open Settings") {
    await vscode.commands.executeCommand("workbench.action.openSettings", "hydra.path");
  }
}

/** activate finds the server (server.ts), starts the client (on the first C, C++ or TypeScript file) and
 * registers the commands. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const found = await resolveServer(serverCandidates(config, context.extensionPath));
  if (!found.chosen) {
    void withSettingsButton(vscode.window.showErrorMessage(noServerMessage(found), "Open Settings"));
    registerCommands(context);
    return;
  }
  const fallback = fallbackMessage(found);
  const serverOptions: ServerOptions = { command: found.chosen.candidate.command, args: SERVER_ARGS, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    initializationOptions: () => initializationOptions(currentSettings()),
    middleware: {
      workspace: {
        // Answer the `hydra` section with the mapped settings (defaults left out).
        configuration: (params, token, next) => {
          const hydraOnly = params.items.every((i) => i.section === SECTION || i.section?.startsWith(SECTION + "."));
          return hydraOnly ? configurationItems(params.items, currentSettings()) : next(params, token);
        },
        // A generation's edits: one undo stop per generation (undo.ts).
        handleApplyEdit: (params, next) => applyGenerationEdit(params, (p) => next(p, CancellationToken.None)),
      },
      // The server's code action runs hydra.generate: give it the progress notification too.
      executeCommand: async (command, args, next) => {
        if (command === CMD_GENERATE && client && args.length > 0) {
          const c = client;
          const arg = args[0] as GenerateArg;
          return oneUndoStop(arg.uri, () => generateWithProgress(c, arg));
        }
        return next(command, args);
      },
      provideInlineCompletionItems: (document, position, ctx, token) => {
        if (!client || !inlineCompletionEnabled(vscode.workspace.getConfiguration(SECTION))) {
          return undefined;
        }
        return provideInlineCompletions(client, document, position, ctx, token);
      },
    },
  };
  client = new LanguageClient("hydra", "Hydra LSP", serverOptions, clientOptions);
  if (fallback) {
    client.outputChannel.appendLine(fallback);
    void withSettingsButton(vscode.window.showWarningMessage(fallback, "Open Settings"));
  }
  client.outputChannel.appendLine(`hydra ${found.chosen.version}: ${found.chosen.candidate.label}`);
  registerCommands(context);
  await client.start();
  // The server's version as it says in its initialize result, against the extension's own: a
  // server of another release may lack what this extension asks for (server.ts).
  const extensionVersion = String(context.extension.packageJSON.version);
  const serverVersion = client.initializeResult?.serverInfo?.version;
  client.outputChannel.appendLine(`server version ${serverVersion ?? "unknown"}, extension version ${extensionVersion}`);
  const mismatch = versionMismatch(extensionVersion, serverVersion, found.chosen.candidate.label);
  if (mismatch) {
    client.outputChannel.appendLine(mismatch);
    void withSettingsButton(vscode.window.showWarningMessage(mismatch, "Open Settings"));
  }
}

/** registerCommands registers the palette's commands and follows settings changes; without a
 * server (client unset) the commands say it is not running. */
function registerCommands(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerTextEditorCommand("hydra.generateWithRepair", (editor) => {
      if (!client) {
        void vscode.window.showErrorMessage("Hydra: the language server is not running");
        return;
      }
      const c = client;
      return oneUndoStop(editor.document.uri.toString(), () => generateInEditor(c, editor));
    }),
    vscode.commands.registerCommand("hydra.cancelGeneration", () => {
      const uri = vscode.window.activeTextEditor?.document.uri.toString();
      return client ? runCancel(client, uri) : undefined;
    }),
    // Settings changes reach the server as workspace/didChangeConfiguration, mapped as for
    // initialize (not languageclient's raw `synchronize`, which would send VS Code's defaults).
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION + ".path") || e.affectsConfiguration(SECTION + ".serverPath")) {
        void vscode.window.showInformationMessage("Hydra: reload the window to use the new server path");
      } else if (e.affectsConfiguration(SECTION) && client?.isRunning()) {
        void client.sendNotification("workspace/didChangeConfiguration", didChangeConfigurationParams(currentSettings()));
      }
    }),
  );
}

/** oneUndoStop runs a generation of uri as one undo step (undo.ts). */
async function oneUndoStop<T>(uri: string, run: () => Promise<T>): Promise<T> {
  beginGeneration(uri);
  try {
    return await run();
  } finally {
    await endGeneration(uri);
  }
}

/** deactivate stops the server. */
export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
