// Connection is the part of a JSON-RPC connection to `hydra lsp` that the extension's logic
// uses. vscode-languageclient's LanguageClient and vscode-jsonrpc's MessageConnection (the Node
// tests) both have it.
import type { ProgressType } from "vscode-languageserver-protocol";

/** Disposable releases a subscription. */
export interface Disposable {
  dispose(): void;
}

/** CancellationToken is the shape vscode and vscode-jsonrpc share. */
export interface CancellationToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): Disposable;
}

/** Connection sends requests to the server and follows work-done progress tokens. */
export interface Connection {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sendRequest<R>(method: string, params: any, token?: CancellationToken): Promise<R>;
  onProgress<P>(type: ProgressType<P>, token: string | number, handler: (params: P) => void): Disposable;
}
