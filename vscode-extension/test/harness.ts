// The test's side of a real `hydra lsp` session: finds bin/hydra, starts the SCRIPTED STAND-IN
// model (`hydra sim-server --script editors/testdata/script.json`, not a real model), starts the
// server with the command line the extension computes, and plays the editor over
// vscode-languageserver-protocol: documents, workspace/applyEdit, workspace/configuration
// (answered by the extension's settings logic), work-done progress.
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { pathToFileURL } from "node:url";
import {
  ApplyWorkspaceEditParams,
  ConfigurationParams,
  createProtocolConnection,
  ProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  TextDocumentContentChangeEvent,
  TextEdit,
} from "vscode-languageserver-protocol/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { noServerMessage, resolveServer, serverCandidates } from "../src/server";
import { configurationItems, currentSettings, initializationOptions, SERVER_ARGS } from "../src/settings";
import * as vscode from "vscode";

/** repoRoot walks up from here to the directory holding go.mod. */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, "go.mod"))) {
      return dir;
    }
    const up = path.dirname(dir);
    if (up === dir) {
      throw new Error("cannot find the repository root (go.mod) above " + __dirname);
    }
    dir = up;
  }
}

export const root = repoRoot();
export const testdata = path.join(root, "editors", "testdata");

/** hydraBin is $HYDRA_BIN or <repo>/bin/hydra; the tests fail clearly when it is missing. */
export function hydraBin(): string {
  const bin = process.env.HYDRA_BIN || path.join(root, "bin", "hydra");
  if (!fs.existsSync(bin)) {
    throw new Error(`${bin} is missing: run 'make build' at the repository root (or set HYDRA_BIN)`);
  }
  return bin;
}

/** StandIn is the scripted stand-in model process. */
export interface StandIn {
  url: string;
  stop(): Promise<void>;
}

function exited(p: ChildProcess, ms: number): Promise<boolean> {
  if (p.exitCode !== null || p.signalCode !== null) {
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.once("exit", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** startStandIn starts `hydra sim-server --script editors/testdata/script.json`. */
export async function startStandIn(): Promise<StandIn> {
  const p = spawn(hydraBin(), ["sim-server", "--script", path.join(testdata, "script.json"), "--addr", "127.0.0.1:0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  p.stderr!.on("data", (d) => (stderr += d));
  const first = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: p.stdout! });
    rl.once("line", (l) => resolve(l.trim()));
    p.once("exit", (code) => reject(new Error(`hydra sim-server exited (${code}): ${stderr}`)));
  });
  return {
    url: first,
    async stop() {
      p.kill("SIGTERM");
      if (!(await exited(p, 5000))) {
        p.kill("SIGKILL");
      }
    },
  };
}

/** Session is an initialized `hydra lsp` with the documents the test opened. */
export class Session {
  readonly docs = new Map<string, TextDocument>();
  readonly appliedEdits: ApplyWorkspaceEditParams[] = [];
  readonly configurationRequests: ConfigurationParams[] = [];
  /** What the extension's code answered to each workspace/configuration request. */
  readonly configurationAnswers: unknown[][] = [];
  /** The server's window/showMessage notifications (the languageclient shows each one). */
  readonly shownMessages: { type: number; message: string }[] = [];
  /** The server's window/logMessage notifications (the languageclient logs each at its level). */
  readonly loggedMessages: { type: number; message: string }[] = [];
  stderr = "";
  /** What the server said it is in its initialize result. */
  serverInfo?: { name: string; version?: string };
  private constructor(
    readonly conn: ProtocolConnection,
    readonly proc: ChildProcess,
    readonly dir: string,
    /** The executable that was started. */
    readonly command: string,
  ) {}

  /** start runs the server the extension would find (server.ts: hydra.path, the server bundled
   * in extensionPath, PATH in env) and initializes it with the extension's initializationOptions. */
  static async start(extensionPath?: string, env: NodeJS.ProcessEnv = process.env): Promise<Session> {
    const found = await resolveServer(serverCandidates(vscode.workspace.getConfiguration("hydra"), extensionPath), env);
    if (!found.chosen) {
      throw new Error(noServerMessage(found));
    }
    const cmd = { command: found.chosen.candidate.command, args: SERVER_ARGS };
    // HYDRA_MODEL_WAIT: a model server that is not there is waited for 2 s, not the default
    // minute (as in editors/testlib.sh); the settings test points the server at such a port.
    const proc = spawn(cmd.command, cmd.args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...env, HYDRA_MODEL_WAIT: env.HYDRA_MODEL_WAIT ?? "2s" },
    });
    const conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hydra-vscode-test-"));
    fs.writeFileSync(path.join(dir, "compile_flags.txt"), "-std=c++17\n");
    const s = new Session(conn, proc, dir, cmd.command);
    proc.stderr!.on("data", (d) => (s.stderr = (s.stderr + d).slice(-20000)));
    conn.onRequest("workspace/configuration", (params: ConfigurationParams) => {
      s.configurationRequests.push(params);
      const answer = configurationItems(params.items, currentSettings());
      s.configurationAnswers.push(answer);
      return answer;
    });
    conn.onRequest("window/workDoneProgress/create", () => null);
    conn.onRequest("workspace/applyEdit", (params: ApplyWorkspaceEditParams) => {
      s.appliedEdits.push(params);
      return s.applyEdit(params);
    });
    conn.onNotification("window/logMessage", (p: { type: number; message: string }) => void s.loggedMessages.push(p));
    conn.onNotification("window/showMessage", (p: { type: number; message: string }) => void s.shownMessages.push(p));
    conn.onNotification("textDocument/publishDiagnostics", () => {});
    conn.listen();
    const rootUri = pathToFileURL(dir).toString();
    const init: { serverInfo?: { name: string; version?: string } } = await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: "test" }],
      initializationOptions: initializationOptions(currentSettings()),
      capabilities: {
        workspace: { applyEdit: true, configuration: true, workspaceEdit: { documentChanges: true } },
        window: { workDoneProgress: true },
        textDocument: {
          synchronization: { dynamicRegistration: false },
          inlineCompletion: { dynamicRegistration: false },
          codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["source"] } } },
        },
      },
    });
    s.serverInfo = init.serverInfo;
    await conn.sendNotification("initialized", {});
    return s;
  }

  /** open copies a test file into the work directory and opens it; returns its URI. */
  async open(name: string, as = name): Promise<string> {
    const file = path.join(this.dir, as);
    fs.copyFileSync(path.join(testdata, name), file);
    const uri = pathToFileURL(file).toString();
    const doc = TextDocument.create(uri, "cpp", 1, fs.readFileSync(file, "utf8"));
    this.docs.set(uri, doc);
    await this.conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "cpp", version: 1, text: doc.getText() },
    });
    return uri;
  }

  text(uri: string): string {
    return this.docs.get(uri)!.getText();
  }

  /** applyEdit does what VS Code does with workspace/applyEdit: applies the edits to the open
   * document and tells the server with an incremental didChange. */
  private async applyEdit(params: ApplyWorkspaceEditParams): Promise<{ applied: boolean; failureReason?: string }> {
    const perDoc: [string, TextEdit[], number | null | undefined][] = [];
    for (const [uri, edits] of Object.entries(params.edit.changes ?? {})) {
      perDoc.push([uri, edits, undefined]);
    }
    for (const dc of params.edit.documentChanges ?? []) {
      if (!("textDocument" in dc)) {
        return { applied: false, failureReason: "resource operations are not supported by the test client" };
      }
      perDoc.push([dc.textDocument.uri, dc.edits as TextEdit[], dc.textDocument.version]);
    }
    for (const [uri, edits, version] of perDoc) {
      const doc = this.docs.get(uri);
      if (!doc) {
        return { applied: false, failureReason: `${uri} is not open` };
      }
      if (typeof version === "number" && version !== doc.version) {
        return { applied: false, failureReason: `version ${version} != ${doc.version}` };
      }
      // Later edits first, so that the ranges of earlier ones stay valid.
      const sorted = [...edits].sort((a, b) => doc.offsetAt(b.range.start) - doc.offsetAt(a.range.start));
      const changes: TextDocumentContentChangeEvent[] = sorted.map((e) => ({ range: e.range, text: e.newText }));
      const next = TextDocument.update(doc, changes, doc.version + 1);
      this.docs.set(uri, next);
      await this.conn.sendNotification("textDocument/didChange", {
        textDocument: { uri, version: next.version },
        contentChanges: changes,
      });
    }
    return { applied: true };
  }

  /** stop shuts the server down (shutdown, exit) and waits for the process to end. */
  async stop(): Promise<void> {
    try {
      await Promise.race([this.conn.sendRequest("shutdown"), new Promise((r) => setTimeout(r, 5000))]);
      await this.conn.sendNotification("exit");
    } catch {
      // The process may be gone already.
    }
    if (!(await exited(this.proc, 10000))) {
      this.proc.kill("SIGKILL");
      await exited(this.proc, 5000);
    }
    this.conn.dispose();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
