// Settings: the `hydra.*` VS Code settings → the server's "hydra" configuration section and the
// command line that starts it. Imports only `vscode` (stubbed in the Node tests).
import * as vscode from "vscode";

/** The "hydra" configuration section as the server reads it (initializationOptions.hydra,
 * workspace/configuration, workspace/didChangeConfiguration). Unset fields keep the server's
 * defaults. */
export interface HydraSettings {
  modelUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  policy?: string;
  maxTokens?: number;
  maxAttempts?: number;
  clangFlags?: string[];
  fim?: string;
  inlineMaxAttempts?: number;
  checkTimeout?: number;
  clangd?: boolean;
  clangdPath?: string;
}

/** The settings section this extension owns. */
export const SECTION = "hydra";

/** What a vscode.WorkspaceConfiguration offers that settingsFrom needs. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

/** settingsFrom maps a `hydra` WorkspaceConfiguration to the server's section, leaving out
 * empty strings, zeros and empty lists (they mean "the server's default"). */
export function settingsFrom(c: ConfigReader): HydraSettings {
  const s: HydraSettings = {};
  const str = (k: keyof HydraSettings & string) => {
    const v = c.get<string>(k);
    if (typeof v === "string" && v.trim() !== "") {
      (s as Record<string, unknown>)[k] = v.trim();
    }
  };
  const num = (k: keyof HydraSettings & string) => {
    const v = c.get<number>(k);
    if (typeof v === "number" && Number.isFinite(v) && v > 0) {
      (s as Record<string, unknown>)[k] = Math.floor(v);
    }
  };
  str("modelUrl");
  str("model");
  str("apiKeyEnv");
  str("policy");
  num("maxTokens");
  num("maxAttempts");
  str("fim");
  num("inlineMaxAttempts");
  // Seconds; 0 is meaningful (no limit), unset (null) leaves the server's default.
  const timeout = c.get<unknown>("checkTimeout");
  if (typeof timeout === "number" && Number.isFinite(timeout) && timeout >= 0) {
    s.checkTimeout = timeout;
  }
  // Only an explicit true turns clangd on; false is the default and leaves the server's.
  if (c.get<unknown>("clangd") === true) {
    s.clangd = true;
  }
  str("clangdPath");
  const flags = c.get<unknown>("clangFlags");
  if (Array.isArray(flags) && flags.length > 0) {
    s.clangFlags = flags.filter((f): f is string => typeof f === "string");
  }
  return s;
}

/** currentSettings reads the `hydra` section of the user's settings. */
export function currentSettings(scope?: vscode.ConfigurationScope): HydraSettings {
  return settingsFrom(vscode.workspace.getConfiguration(SECTION, scope));
}

/** forServer is the section as sent to the server: the settings, and clientShowsSummary (the
 * extension reports the end of a generation itself, so the server's window/showMessage would
 * be a second notification). */
export function forServer(s: HydraSettings): HydraSettings & { clientShowsSummary: true } {
  return { ...s, clientShowsSummary: true };
}

/** initializationOptions is what `initialize` carries: {"hydra": section}. */
export function initializationOptions(s: HydraSettings): { hydra: HydraSettings } {
  return { hydra: forServer(s) };
}

/** didChangeConfigurationParams is what a settings change pushes to the server
 * (workspace/didChangeConfiguration): the mapped section, so that VS Code's defaults (empty
 * strings, zeros) are not sent as values. */
export function didChangeConfigurationParams(s: HydraSettings): { settings: { hydra: HydraSettings } } {
  return { settings: { hydra: forServer(s) } };
}

/** configurationItems answers a workspace/configuration request: the `hydra` section for
 * items that ask for it (or for a key inside it, "hydra.model"), null for others. */
export function configurationItems(items: { section?: string }[], s: HydraSettings): unknown[] {
  return items.map((item) => {
    if (item.section === SECTION) {
      return forServer(s);
    }
    if (item.section?.startsWith(SECTION + ".")) {
      const v = (forServer(s) as unknown as Record<string, unknown>)[item.section.slice(SECTION.length + 1)];
      return v === undefined ? null : v;
    }
    return null;
  });
}

/** LANGUAGES are the VS Code language ids whose files the server serves: C and C++ (Clang) and
 * TypeScript (TypeScript's own compiler). package.json's activationEvents and the commands' `when`
 * clauses name the same (a test checks it). */
export const LANGUAGES = ["c", "cpp", "typescript", "typescriptreact"];

/** documentSelector is the language client's document selector: LANGUAGES' files on disk and
 * untitled ones. */
export function documentSelector(): { scheme: string; language: string }[] {
  return ["file", "untitled"].flatMap((scheme) => LANGUAGES.map((language) => ({ scheme, language })));
}

/** SERVER_ARGS are the arguments the server is started with (`hydra lsp`); which `hydra` runs is
 * server.ts's to decide. */
export const SERVER_ARGS = ["lsp"];

/** inlineCompletionEnabled reads hydra.inlineCompletion.enabled (default true). */
export function inlineCompletionEnabled(c: ConfigReader): boolean {
  return c.get<boolean>("inlineCompletion.enabled") !== false;
}
