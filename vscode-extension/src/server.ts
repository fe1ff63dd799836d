// Server: which `hydra` the extension starts. In order: the `hydra.path` setting (or the older
// `hydra.serverPath`), the server bundled in a platform VSIX (`server/bin/hydra` inside the
// extension, the release archive's layout: `make vsix`), then `hydra` on PATH. Each candidate is
// tried with `hydra --version`; the first that answers is used. When none does, the message
// names each one tried and why it failed. Imports no `vscode` (tested in Node against the real
// server).
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { ConfigReader } from "./settings";

/** A way to start the server that the extension tries. */
export interface ServerCandidate {
  /** Where it comes from. */
  kind: "setting" | "bundled" | "PATH";
  /** The executable: a path, or "hydra" to look up on PATH. */
  command: string;
  /** What the user is told about it: "hydra.path /opt/hydra/bin/hydra" and the like. */
  label: string;
}

/** A candidate that did not answer, and why. */
export interface FailedCandidate {
  candidate: ServerCandidate;
  reason: string;
}

/** The outcome of resolveServer: the server to start (if any) and the candidates that failed
 * before it. */
export interface ResolvedServer {
  chosen?: { candidate: ServerCandidate; version: string };
  failed: FailedCandidate[];
}

/** The bundled server's place inside the extension (the release archive's bin/). */
export function bundledServer(extensionPath: string): string {
  return path.join(extensionPath, "server", "bin", "hydra");
}

/** serverCandidates lists, in order, the servers to try: the setting when it is set, the bundled
 * server, `hydra` on PATH. */
export function serverCandidates(c: ConfigReader, extensionPath: string | undefined): ServerCandidate[] {
  const out: ServerCandidate[] = [];
  for (const key of ["path", "serverPath"]) {
    const v = c.get<string>(key);
    if (typeof v === "string" && v.trim() !== "") {
      out.push({ kind: "setting", command: v.trim(), label: `hydra.${key} ${v.trim()}` });
      break;
    }
  }
  if (extensionPath) {
    const b = bundledServer(extensionPath);
    out.push({ kind: "bundled", command: b, label: `the bundled server ${b}` });
  }
  out.push({ kind: "PATH", command: "hydra", label: "hydra on PATH" });
  return out;
}

/** probe runs `COMMAND --version` and returns the version it prints ("hydra 1.2.3" → "1.2.3"),
 * or why it could not. env is the environment to look PATH up in (the extension host's). */
export function probe(command: string, env: NodeJS.ProcessEnv, timeoutMs = 15000): Promise<{ version?: string; reason?: string }> {
  if (path.isAbsolute(command) || command.includes("/")) {
    let st: fs.Stats;
    try {
      st = fs.statSync(command);
    } catch {
      return Promise.resolve({ reason: "no such file" });
    }
    if (!st.isFile()) {
      return Promise.resolve({ reason: "not a file" });
    }
  }
  return new Promise((resolve) => {
    execFile(command, ["--version"], { env, timeout: timeoutMs, windowsHide: true }, (err, stdout, stderr) => {
      const m = /^hydra (\S+)/.exec(String(stdout));
      if (!err && m) {
        return resolve({ version: m[1] });
      }
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (code === "ENOENT") {
        return resolve({ reason: "not found" });
      }
      if (code === "EACCES") {
        return resolve({ reason: "not executable" });
      }
      const said = String(stderr).trim().split("\n")[0] || String(stdout).trim().split("\n")[0];
      if (err) {
        return resolve({ reason: `\`--version\` failed${said ? ": " + said : ` (${err.message})`}` });
      }
      return resolve({ reason: `not a hydra binary (\`--version\` printed ${JSON.stringify(said)})` });
    });
  });
}

/** makeExecutable gives the bundled server, its checker and TypeScript's compiler their execute
 * bits back when unpacking the VSIX lost them (they are the extension's own files). */
function makeExecutable(candidate: ServerCandidate): void {
  if (candidate.kind !== "bundled") {
    return;
  }
  const bin = path.dirname(candidate.command);
  const tsc = path.join(bin, "..", "third_party", "typescript", "node_modules", "@typescript", `typescript-linux-${process.arch === "arm64" ? "arm64" : "x64"}`, "lib", "tsc");
  for (const f of [candidate.command, path.join(bin, "hydra-clang-shim"), tsc]) {
    try {
      const st = fs.statSync(f);
      if (st.isFile() && (st.mode & 0o111) === 0) {
        fs.chmodSync(f, st.mode | 0o755);
      }
    } catch {
      // Absent: probe says so for the server; a missing shim is `hydra doctor`'s to report.
    }
  }
}

/** resolveServer tries the candidates in order and stops at the first that answers. */
export async function resolveServer(candidates: ServerCandidate[], env: NodeJS.ProcessEnv = process.env): Promise<ResolvedServer> {
  const failed: FailedCandidate[] = [];
  for (const candidate of candidates) {
    makeExecutable(candidate);
    const r = await probe(candidate.command, env);
    if (r.version !== undefined) {
      return { chosen: { candidate, version: r.version }, failed };
    }
    failed.push({ candidate, reason: r.reason ?? "no answer" });
  }
  return { failed };
}

/** tried lists failed candidates for a message: "hydra.path /x (no such file); hydra on PATH (not found)". */
export function tried(failed: FailedCandidate[]): string {
  return failed.map((f) => `${f.candidate.label} (${f.reason})`).join("; ");
}

/** noServerMessage is the error shown when no candidate answers. */
export function noServerMessage(r: ResolvedServer): string {
  return `Hydra: no working language server. Tried ${tried(r.failed)}. Set hydra.path to the hydra binary, install the extension's VSIX for your platform (it carries the server), or put hydra on PATH.`;
}

/** fallbackMessage is the warning shown when the hydra.path setting did not answer and a later
 * candidate is used instead; undefined when the setting was not set or worked. */
export function fallbackMessage(r: ResolvedServer): string | undefined {
  const setting = r.failed.find((f) => f.candidate.kind === "setting");
  if (!setting || !r.chosen) {
    return undefined;
  }
  return `Hydra: ${setting.candidate.label} does not work (${setting.reason}); using ${r.chosen.candidate.label} instead.`;
}

/** ownVersion is Hydra's own version in the initialize result's serverInfo.version: its first
 * word; the rest names the servers behind it ("0.1.0+e627e48 (with clangd 19.1.7)"). */
export function ownVersion(serverVersion: string | undefined): string {
  return (serverVersion ?? "").trim().split(/\s+/)[0] ?? "";
}

/** release is a version's release: the part before a "+" ("0.1.0+e627e48" → "0.1.0"). A server
 * built from a commit that is not its release's tag says the commit after the "+" (build
 * metadata in semantic versioning; scripts/version.sh). */
export function release(version: string | undefined): string {
  return ownVersion(version).split("+")[0];
}

/** versionMismatch is the warning shown when the server's release (serverInfo.version) is not
 * the extension's (package.json's version, the repository's file VERSION), naming both and what
 * to do; undefined when they match. server names the server that runs. */
export function versionMismatch(extensionVersion: string, serverVersion: string | undefined, server: string): string | undefined {
  if (release(serverVersion) === extensionVersion) {
    return undefined;
  }
  const theirs = ownVersion(serverVersion) || "of unknown version (no serverInfo.version)";
  return `Hydra: the extension is version ${extensionVersion}, but the server (${server}) is ${theirs}: update the extension or the server so that both are the same release (install the platform VSIX, which carries its own server, or set hydra.path to a server of version ${extensionVersion}).`;
}
