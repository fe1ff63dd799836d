// A STUB of the `vscode` module for the Node tests: VS Code itself cannot run here, so the few
// pieces of its API the extension's logic touches are recorded here instead. Everything else in
// the tests is real: the `hydra lsp` binary, the Clang checker, the JSON-RPC transport.
/* eslint-disable @typescript-eslint/no-explicit-any */

type Listener = () => void;

/** A cancellation token the test can fire (the notification's Cancel button). */
export class CancellationTokenSource {
  private listeners: Listener[] = [];
  private cancelled = false;
  readonly token = {
    get isCancellationRequested(): boolean {
      return false;
    },
    onCancellationRequested: (l: Listener) => {
      this.listeners.push(l);
      return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
    },
  };
  constructor() {
    Object.defineProperty(this.token, "isCancellationRequested", { get: () => this.cancelled });
  }
  cancel(): void {
    if (!this.cancelled) {
      this.cancelled = true;
      this.listeners.forEach((l) => l());
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export enum InlineCompletionTriggerKind {
  Invoke = 0,
  Automatic = 1,
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(sl: number, sc: number, el: number, ec: number) {
    this.start = new Position(sl, sc);
    this.end = new Position(el, ec);
  }
}

export class SnippetString {
  constructor(readonly value: string) {}
}

export class InlineCompletionItem {
  filterText?: string;
  constructor(
    public insertText: string | SnippetString,
    public range?: Range,
    public command?: any,
  ) {}
}

/** What the stub recorded: notifications with progress, and messages shown. */
export const recorded = {
  progress: [] as { options: any; reports: { message?: string; increment?: number }[]; cancel: CancellationTokenSource }[],
  messages: [] as { level: "info" | "warning" | "error"; text: string }[],
  reset(): void {
    this.progress = [];
    this.messages = [];
  },
};

/** The user's settings, by section: settings["hydra"]["modelUrl"]. */
export const settings: Record<string, Record<string, unknown>> = {};

export const workspace = {
  getConfiguration(section?: string) {
    const values = (section && settings[section]) || {};
    return {
      get<T>(key: string, def?: T): T | undefined {
        return key in values ? (values[key] as T) : def;
      },
      has: (key: string) => key in values,
    };
  },
};

export const window = {
  withProgress<R>(options: any, task: (progress: { report(v: any): void }, token: any) => Thenable<R>): Thenable<R> {
    const entry = { options, reports: [] as any[], cancel: new CancellationTokenSource() };
    recorded.progress.push(entry);
    return task({ report: (v: any) => entry.reports.push(v) }, entry.cancel.token);
  },
  showInformationMessage(text: string) {
    recorded.messages.push({ level: "info", text });
    return Promise.resolve(undefined);
  },
  showWarningMessage(text: string) {
    recorded.messages.push({ level: "warning", text });
    return Promise.resolve(undefined);
  },
  showErrorMessage(text: string) {
    recorded.messages.push({ level: "error", text });
    return Promise.resolve(undefined);
  },
};
