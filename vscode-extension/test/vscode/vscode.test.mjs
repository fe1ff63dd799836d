// The extension's tests in real VS Code: code-server (VS Code 1.139 in the browser) with the
// packaged hydra-lsp.vsix installed, driven through Debian's chromium, headless, by
// playwright-core, as a user would: keys, the command palette, the notification's buttons.
// The server is the real `hydra lsp`, the checker real Clang, the model the SCRIPTED STAND-IN
// (hydra sim-server --script editors/testdata/script.json; not a real model). run.sh beside this
// file starts all that and passes it in the environment:
//   HYDRA_VSCODE_URL   code-server's address         HYDRA_VSCODE_WS    the workspace folder
//   HYDRA_VSCODE_USER  VS Code's User folder          HYDRA_TESTDATA     editors/testdata
//   HYDRA_VSCODE_SHOTS where screenshots of failures go  HYDRA_VSCODE_TOOLS setup.sh's folder
//   HYDRA_TEST_FRAMES  (optional) a folder for the frames of the repair (editors/docs/shots-to-svg.mjs)
//   HYDRA_MODEL_URL    the stand-in's URL (only the settings give it to the server)
//   HYDRA_VSCODE_MARK  the file the workspace's own hydra.path script would leave (never run)
//   HYDRA_VSCODE_SERVER which server the extension must have started: setting (hydra.path is
//                      HYDRA_BIN), bundled (the platform VSIX's own), wrong-path (hydra.path does
//                      not exist: named in a warning, then the bundled one)
// Prints "ok - …" / "not ok - …" per check and "N passed, M failed"; exits 1 when one failed.
import { execFileSync } from "node:child_process";
import console from "node:console";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { setTimeout as sleep } from "node:timers/promises";
import { createRequire } from "node:module";

const env = (k) => {
  const v = process.env[k];
  if (!v) {
    throw new Error(`${k} is not set (run vscode-extension/test/vscode/run.sh)`);
  }
  return v;
};
// playwright-core comes from the tools' cache (setup.sh), not from the repository.
const { chromium } = createRequire(join(env("HYDRA_VSCODE_TOOLS"), "node_modules", "/"))("playwright-core");
const url = env("HYDRA_VSCODE_URL");
const ws = env("HYDRA_VSCODE_WS");
const userDir = env("HYDRA_VSCODE_USER");
const testdata = env("HYDRA_TESTDATA");
const shots = env("HYDRA_VSCODE_SHOTS");
const modelUrl = env("HYDRA_MODEL_URL");
const serverMode = process.env.HYDRA_VSCODE_SERVER || "setting";
const framesDir = process.env.HYDRA_TEST_FRAMES || "";
const expected = readFileSync(join(testdata, "sum.expected.cpp"), "utf8");
const slowPrompt = readFileSync(join(testdata, "slow.cpp"), "utf8");
const t0 = Date.now();
const stamp = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const note = (msg) => console.log(`  [${stamp()}] ${msg}`);

let page;
let passed = 0;
let failed = 0;

// HYDRA_VSCODE_ONLY=REGEXP runs only the checks whose names match (and the start), to debug one.
const only = process.env.HYDRA_VSCODE_ONLY ? new RegExp(process.env.HYDRA_VSCODE_ONLY, "i") : null;

/** check runs one named check; a failure takes a screenshot and the run goes on. */
async function check(name, fn) {
  if (only && passed + failed > 0 && !only.test(name)) {
    return;
  }
  console.log(`--- vscode: ${name}`);
  try {
    await fn();
    passed++;
    console.log(`ok - vscode: ${name}`);
  } catch (e) {
    failed++;
    const file = join(shots, `${name.replace(/[^a-z0-9]+/gi, "-")}.png`);
    await page?.screenshot({ path: file }).catch(() => {});
    console.log(`not ok - vscode: ${name}: ${e instanceof Error ? e.message : e}`);
    console.log(`  screenshot: ${file}`);
    // Leave no menu, widget or quick input open for the next check.
    for (let i = 0; i < 3; i++) {
      await page?.keyboard.press("Escape").catch(() => {});
    }
  }
}

function assert(cond, msg) {
  if (!cond) {
    throw new Error(msg);
  }
}

/** waitUntil polls fn until it returns something truthy, or fails after ms. */
async function waitUntil(what, fn, ms = 60000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) {
      return v;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    }
    await sleep(100);
  }
}

const quickInput = () => page.locator(".quick-input-widget input");
const toasts = () => page.locator(".notifications-toasts .notification-toast");
const toastTexts = async () => (await toasts().allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
const onDisk = (name) => readFileSync(join(ws, name), "utf8");

/** hydraLog is what VS Code wrote of the "Hydra LSP" output channel ("" before it exists): the
 * extension host logs each output channel to a file under the user data folder's logs/. */
function hydraLog() {
  const logs = join(userDir, "..", "logs");
  if (!existsSync(logs)) {
    return "";
  }
  const files = readdirSync(logs, { recursive: true }).filter((f) => String(f).endsWith("Hydra LSP.log"));
  return files.map((f) => readFileSync(join(logs, String(f)), "utf8")).join("\n");
}

/** clearToasts closes every notification (the palette's "Clear All Notifications"). */
async function clearToasts() {
  if ((await toasts().count()) > 0) {
    await palette("Notifications: Clear All Notifications");
    await waitUntil("the notifications to close", async () => (await toasts().count()) === 0, 10000);
  }
}

/** palette runs a command from the command palette (F1) by its label. */
async function palette(label) {
  await page.keyboard.press("F1");
  await quickInput().waitFor({ state: "visible" });
  await page.keyboard.type(label);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
  await row.waitFor({ timeout: 60000 });
  await page.keyboard.press("Enter");
}

/** open opens a workspace file with Quick Open (Ctrl+P), as a user does. */
async function open(name) {
  await page.keyboard.press("Control+P");
  await quickInput().waitFor({ state: "visible" });
  await page.keyboard.type(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 60000 });
  await page.keyboard.press("Enter");
  await page.locator(".tab.active", { hasText: name }).waitFor({ timeout: 60000 });
  await page.locator(".monaco-editor.focused").waitFor({ timeout: 60000 });
}

/** quickFixMenu opens the Quick Fix menu (Ctrl+.) in the focused editor and waits for a row
 * holding title. A user whose press was lost (the menu did not open, or opened on "No code
 * actions available" while focus was still coming back from a quick input) presses again: so
 * does this, up to three times, noting what it saw each time the row was missing. */
async function quickFixMenu(title) {
  const item = page.locator(".action-widget .monaco-list-row", { hasText: title });
  const seen = [];
  for (let i = 0; i < 3; i++) {
    await page.locator(".monaco-editor.focused").waitFor({ timeout: 30000 });
    await page.keyboard.press("Control+.");
    try {
      await item.waitFor({ timeout: 15000 });
      if (seen.length > 0) {
        note(`Ctrl+. pressed ${i + 1} times; before: ${JSON.stringify(seen)}`);
      }
      return;
    } catch {
      const rows = await page.locator(".action-widget .monaco-list-row").allInnerTexts().catch(() => []);
      const msg = await page.locator(".monaco-editor-overlaymessage").allInnerTexts().catch(() => []);
      seen.push({ rows, message: msg });
      await page.keyboard.press("Escape");
    }
  }
  throw new Error(`Ctrl+. pressed 3 times and no "${title}" in the menu: ${JSON.stringify(seen)}`);
}

/** goto puts the cursor at line:col (1-based, as the status bar shows it) with Ctrl+G. */
async function goto(line, col) {
  await page.keyboard.press("Control+G");
  await quickInput().waitFor({ state: "visible" });
  await page.keyboard.type(`${line}:${col}`);
  await page.keyboard.press("Enter");
  await page.locator(".statusbar", { hasText: `Ln ${line}, Col ${col}` }).waitFor({ timeout: 30000 });
}

/** save writes the active editor to disk (Ctrl+S) and returns the file as it is on disk once it
 * equals want (or, without want, once it changed), or after 15 s. */
async function save(name, want) {
  const before = onDisk(name);
  await page.keyboard.press("Control+S");
  const end = Date.now() + 15000;
  let got = before;
  while (Date.now() < end) {
    got = onDisk(name);
    if (want === undefined ? got !== before : got === want) {
      break;
    }
    await sleep(100);
  }
  return got;
}

/** ghostText returns the ghost text shown in the active editor, blanks squeezed ("" when none):
 * the spans of its first line (.ghost-text-decoration) and of the lines below (.ghost-text). */
async function ghostText() {
  const parts = await page.locator(".monaco-editor.focused .ghost-text-decoration, .monaco-editor.focused .ghost-text").allInnerTexts();
  return parts.join("").replace(/[\s\u00a0]+/g, " ").trim();
}

function compiles(text) {
  const dir = join(shots, "cc");
  mkdirSync(dir, { recursive: true });
  const f = join(dir, "a.cpp");
  writeFileSync(f, text);
  try {
    execFileSync(process.env.HYDRA_CLANG || "clang-19", ["-fsyntax-only", "-std=c++17", f], { stdio: "pipe" });
    return "";
  } catch (e) {
    return String(e.stderr ?? e);
  }
}

/** Frames of the repair for the README's animation: the editor and the notification, whenever
 * what they show changed. */
let frameNo = 0;
let lastFrame = "";
let recordFrames = framesDir !== "";
async function frame() {
  if (!recordFrames) {
    return;
  }
  const sig = (await page.locator(".monaco-editor.focused .view-lines").innerText()) + (await toastTexts()).join("|");
  if (sig === lastFrame) {
    return;
  }
  lastFrame = sig;
  mkdirSync(framesDir, { recursive: true });
  const file = join(framesDir, `frame-${String(frameNo++).padStart(3, "0")}.jpg`);
  // The editor and the notifications (the right of the window), small enough for the README.
  await page.screenshot({ path: file, type: "jpeg", quality: 70, clip: { x: 328, y: 36, width: 770, height: 572 } });
  writeFileSync(`${file}.json`, JSON.stringify({ ms: Date.now() - t0, toasts: await toastTexts() }));
}

/** progressOpen says whether a progress notification (one with a Cancel button) is shown. */
const progressOpen = async () => (await page.locator(".notification-toast .monaco-button", { hasText: "Cancel" }).count()) > 0;

/** generateAndWait runs a generation through `start` and waits for its end notification; it
 * returns every notification text seen meanwhile, the end's, and the notifications shown once
 * the progress notification has closed. */
async function generateAndWait(start, endPattern) {
  await clearToasts();
  const seen = new Set();
  const look = async () => {
    await frame();
    const texts = await toastTexts();
    texts.forEach((t) => seen.add(t));
    return texts;
  };
  await start();
  const end = await waitUntil(`a notification matching ${endPattern}`, async () => (await look()).find((t) => endPattern.test(t)), 120000);
  await waitUntil("the progress notification to close", async () => !(await progressOpen()), 15000);
  const last = await look();
  return { seen: [...seen], end, last };
}

/** setSetting changes a user setting in the Settings editor, as a user does. */
/**
 * setSetting sets a setting in the Settings editor as a user does. A machine-scoped one (the
 * model URL: a workspace must not choose where code and keys go) lives, in code-server, in the
 * remote machine's settings (<user-data-dir>/Machine/settings.json), the Remote tab.
 */
async function setSetting(id, value, { machine = false } = {}) {
  await palette(machine ? "Preferences: Open Remote Settings" : "Preferences: Open User Settings");
  await page.locator(".settings-editor").waitFor();
  await sleep(500);
  await page.keyboard.type(id);
  await page.locator(".settings-editor", { hasText: "1 Setting Found" }).waitFor({ timeout: 15000 });
  const input = page.locator(".settings-editor .setting-item-contents input:visible").first();
  await input.waitFor({ timeout: 15000 });
  await input.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.type(value);
  await page.keyboard.press("Tab");
  const file = machine ? join(userDir, "..", "Machine", "settings.json") : join(userDir, "settings.json");
  await waitUntil(`${file} to hold ${value}`, () => existsSync(file) && readFileSync(file, "utf8").includes(value), 15000);
  // The Settings editor opens over the workbench (a modal in VS Code 1.139): Escape closes it.
  for (let i = 0; i < 3 && (await page.locator(".settings-editor").isVisible()); i++) {
    await page.keyboard.press("Escape");
    await sleep(300);
  }
}

const browser = await chromium.launch({
  executablePath: process.env.HYDRA_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  page = await browser.newPage({ viewport: { width: 1100, height: 640 } });
  await check("VS Code starts with the extension", async () => {
    await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`);
    await page.locator(".explorer-folders-view .monaco-list-row", { hasText: "sum.cpp" }).first().waitFor({ timeout: 120000 });
    note("workbench ready");
    await open("gen.cpp");
    // The extension activates on C++ and starts `hydra lsp`, whose output channel VS Code logs.
    await waitUntil("the Hydra LSP output channel", () => hydraLog() !== "", 60000);
  });

  await check(`the extension started the server it should (${serverMode})`, async () => {
    const line = await waitUntil("the server's line in the Hydra LSP output", () => /hydra \S+: (hydra\.path |the bundled server |hydra on PATH).*$/m.exec(hydraLog())?.[0] ?? "", 30000);
    note(line);
    // The workspace's .vscode/settings.json names a script of its own as hydra.path (run.sh).
    const mark = process.env.HYDRA_VSCODE_MARK;
    assert(!line.includes(join(ws, "tools")), `started the workspace's own hydra.path: ${line}`);
    assert(mark && !existsSync(mark), `the workspace's hydra.path script was run (${mark})`);
    // The server's version (serverInfo) is logged beside the extension's. bin/hydra and a
    // platform VSIX's server are of the extension's release: no version warning. A server built
    // with another version (other-version): one warning naming both.
    const versions = await waitUntil("the server's version in the Hydra LSP output", () => /server version \S+.*, extension version \S+$/m.exec(hydraLog())?.[0] ?? "", 30000);
    note(versions);
    const mismatch = "update the extension or the server";
    if (serverMode === "other-version") {
      assert(versions.startsWith("server version 0.0.0-other"), `the output's version line: ${versions}`);
      const toast = await waitUntil("the version warning", async () => (await toastTexts()).find((t) => t.includes(mismatch)) ?? "", 15000);
      note(toast);
      assert(/extension is version \S+, but the server .* is 0\.0\.0-other/.test(toast), `the warning names both versions: ${toast}`);
      assert(hydraLog().split(mismatch).length === 2, `the output has the warning once:\n${hydraLog()}`);
      return;
    }
    assert(!hydraLog().includes(mismatch), `a version warning with a server of the extension's release:\n${hydraLog()}`);
    if (serverMode === "setting") {
      assert(line.includes(`hydra.path ${process.env.HYDRA_BIN}`), `started ${line}, want hydra.path ${process.env.HYDRA_BIN}`);
      return;
    }
    assert(/the bundled server \S*\/extensions\/\S*\/server\/bin\/hydra/.test(line), `started ${line}, want the bundled server`);
    if (serverMode === "wrong-path") {
      const want = "hydra.path /nonexistent/dir/hydra does not work (no such file)";
      assert(hydraLog().includes(want), `the output lacks "${want}"`);
      await waitUntil("the warning naming hydra.path", async () => (await toastTexts()).some((t) => t.includes(want)), 15000);
    }
  });

  await check("palette: Hydra: Generate with Repair at line 5, column 1 repairs the program", async () => {
    await open("gen.cpp");
    await goto(5, 1);
    await frame();
    const r = await generateAndWait(() => palette("Hydra: Generate with Repair"), /accepted/);
    note(`notifications: ${JSON.stringify(r.seen)}`);
    const got = await save("gen.cpp", expected);
    assert(got === expected, `gen.cpp is ${JSON.stringify(got)}, want sum.expected.cpp`);
    const cc = compiles(got);
    assert(cc === "", `clang-19 rejects it: ${cc}`);
    // Progress was shown: the checker's rejection of the stand-in's first answer among it.
    assert(r.seen.some((t) => /attempt/.test(t)), `no progress in the notifications: ${JSON.stringify(r.seen)}`);
    // One notification at the end (the server's summary), and no doubled "Hydra:" prefix.
    assert(r.last.length === 1, `${r.last.length} notifications at the end, want 1: ${JSON.stringify(r.last)}`);
    const doubled = r.seen.filter((t) => /hydra:\s*hydra:/i.test(t));
    assert(doubled.length === 0, `doubled prefix: ${JSON.stringify(doubled)}`);
  });
  // The frames are of the first generation only.
  recordFrames = false;

  await check("Source Action…: the source.generate.hydra action repairs the program", async () => {
    await open("action.cpp");
    await goto(5, 1);
    await generateAndWait(async () => {
      await palette("Source Action...");
      const item = page.locator(".action-widget .monaco-list-row", { hasText: "Generate with repair (Hydra)" });
      await item.waitFor({ timeout: 30000 });
      await item.click();
    }, /accepted/);
    const got = await save("action.cpp", expected);
    assert(got === expected, `action.cpp is ${JSON.stringify(got)}`);
  });

  await check("TypeScript: a type error rooted on an earlier line is repaired by tsc; the edits stream in; one Ctrl+Z undoes it", async () => {
    // longest.ts: the stand-in's first answer declares `let best = "";` (line 3) and assigns it a
    // number on line 4. It answers the same until a retry starts right after the signature (the
    // root) with the checker's feedback: only a rollback to the root repairs it.
    const prompt = readFileSync(join(testdata, "longest.ts"), "utf8");
    const want = readFileSync(join(testdata, "longest.expected.ts"), "utf8");
    await open("longest.ts");
    await goto(3, 1);
    // The editor's line count at every render while the generation runs (edits are applied
    // one by one: counts between the first and the last show that they streamed in).
    await page.evaluate(() => {
      const lines = globalThis.document.querySelector(".monaco-editor.focused .view-lines");
      globalThis.hydraLineCounts = [];
      new globalThis.MutationObserver(() => globalThis.hydraLineCounts.push(lines.querySelectorAll(".view-line").length)).observe(lines, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    const r = await generateAndWait(() => palette("Hydra: Generate with Repair"), /accepted .*\d+ attempts/);
    note(`notifications: ${JSON.stringify(r.seen)}`);
    // The checker made the model repair: the summary counts the attempts.
    const attempts = Number(/(\d+) attempts/.exec(r.end)?.[1] ?? 0);
    assert(attempts >= 2, `the summary ${JSON.stringify(r.end)} does not count 2 or more attempts`);
    assert(r.seen.some((t) => /attempt/.test(t)), `no progress in the notifications: ${JSON.stringify(r.seen)}`);
    const counts = await page.evaluate(() => globalThis.hydraLineCounts);
    const [first, last] = [prompt.split("\n").length, want.split("\n").length];
    assert(counts.some((n) => n > first && n < last), `the editor never had between ${first} and ${last} lines while it ran: ${JSON.stringify(counts)}`);
    const got = await save("longest.ts", want);
    assert(got === want, `longest.ts is ${JSON.stringify(got)}, want longest.expected.ts`);
    await page.keyboard.press("Control+Z");
    const undone = await save("longest.ts", prompt);
    assert(undone === prompt, `after one Ctrl+Z longest.ts is ${JSON.stringify(undone)}, want the prompt back`);
  });

  await check("a project with compile_commands.json: its flags find the header; the code after the cursor stays", async () => {
    // proj/src/stats.cpp finds "sumlib.h" only through the database's -Iinclude.
    await open("stats.cpp");
    await goto(4, 1);
    const r = await generateAndWait(() => palette("Hydra: Generate with Repair"), /accepted/);
    note(`notifications: ${JSON.stringify(r.seen)}`);
    const got = await save("proj/src/stats.cpp");
    const want =
      '#include "sumlib.h"\n\nint sum(const std::vector<int>& v) {\n' +
      "  int total = 0;\n  for (int x : v) total += x;\n  return total;\n}\n\nint twice(int x) { return 2 * x; }\n";
    assert(got === want, `stats.cpp is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    // The project's own command (its flags, from the database) accepts the file.
    try {
      execFileSync(process.env.HYDRA_CLANG || "clang-19", ["-fsyntax-only", "-std=gnu++17", "-Iinclude", "src/stats.cpp"], { cwd: join(ws, "proj"), stdio: "pipe" });
    } catch (e) {
      throw new Error(`the project's command rejects it: ${String(e.stderr ?? e)}`);
    }
    assert(/compile_commands\.json/.test(hydraLog()), "the server's log does not say the flags came from compile_commands.json");
  });

  await check("a project's overload error: Clang's notes reach the model, which repairs it, and VS Code's Problems when no attempt compiles", async () => {
    // proj/src/shapes.cpp calls overloads its header declares; the stand-in's first answer
    // passes a string. Only a repair prompt that carries Clang's note ("candidate function not
    // viable: no known conversion from 'const char[2]' to 'double'") gets the right call.
    await open("shapes.cpp");
    await goto(5, 1);
    const r = await generateAndWait(() => palette("Hydra: Generate with Repair"), /accepted \d+ lines|no accepted program/);
    note(`notifications: ${JSON.stringify(r.seen)}`);
    assert(/accepted .*2 attempts/.test(r.end) && !/no accepted/.test(r.end), `the summary ${JSON.stringify(r.end)}: the repair prompted with the notes should be accepted on the second attempt`);
    const fixed = await save("proj/src/shapes.cpp");
    assert(fixed.includes("double unit_square(void) {\n  return area(1.0, 1.0);\n}\n"), `shapes.cpp is ${JSON.stringify(fixed)}`);
    // best_or_zero: every answer passes a string to pick, so no attempt compiles; the error's
    // notes go with its diagnostic, which VS Code's Problems view shows beneath it.
    await goto(fixed.split("\n").indexOf("int best_or_zero(int a, int b) {") + 2, 1);
    const r2 = await generateAndWait(() => palette("Hydra: Generate with Repair"), /accepted \d+ lines|no accepted program/);
    assert(/no accepted program/.test(r2.end), `the summary ${JSON.stringify(r2.end)}: no attempt should compile`);
    await palette("Focus on Problems View");
    const panel = page.locator(".markers-panel");
    const text = await waitUntil("Clang's note in the Problems view", async () => {
      const t = (await panel.innerText().catch(() => "")).replace(/\s+/g, " ");
      return /no matching function for call to 'pick'/.test(t) && /candidate function not viable/.test(t) && t;
    }, 30000);
    note(`Problems: ${text.slice(0, 400)}`);
    assert(/geom\.h/.test(text), `the note does not name the header where the candidate is: ${text.slice(0, 400)}`);
    await palette("Toggle Panel Visibility");
    await waitUntil("the panel to close", async () => !(await panel.isVisible().catch(() => false)), 15000);
  });

  await check("Quick Fix (Ctrl+.) offers the action as a refactoring; the lightbulb shows on a selection", async () => {
    await open("bulb.cpp");
    await goto(5, 1);
    await quickFixMenu("Generate with repair (Hydra)");
    await page.keyboard.press("Escape");
    // No lightbulb on a line of code without a selection…
    await goto(1, 3);
    await sleep(1500);
    const bulb = page.locator(".monaco-editor.focused .lightBulbWidget");
    assert(!(await bulb.isVisible().catch(() => false)), "a lightbulb on line 1 without a selection: every cursor position would get one");
    // …but one on a selection (generate from the selection).
    await page.keyboard.press("Shift+End");
    await waitUntil("the lightbulb on a selection", () => bulb.isVisible().catch(() => false), 15000);
    await page.keyboard.press("Escape");
  });

  await check("Hydra: Cancel from the palette stops a running generation", async () => {
    await open("cancel1.cpp");
    const line = slowPrompt.split("\n").length - 1;
    await goto(line, 1);
    const r = await generateAndWait(async () => {
      await palette("Hydra: Generate with Repair");
      await waitUntil("the generation's progress", async () => (await toastTexts()).some((t) => /attempt|writing|starting/i.test(t)), 60000);
      await palette("Hydra: Cancel");
    }, /cancelled/);
    note(`notifications: ${JSON.stringify(r.last)}`);
    const got = await save("cancel1.cpp", slowPrompt);
    assert(got.startsWith(slowPrompt.slice(0, -1)), `the text before the cursor changed: ${JSON.stringify(got.slice(0, 200))}`);
  });

  await check("Cancel on the progress notification stops a running generation", async () => {
    await open("cancel2.cpp");
    const line = slowPrompt.split("\n").length - 1;
    await goto(line, 1);
    await generateAndWait(async () => {
      await palette("Hydra: Generate with Repair");
      const button = page.locator(".notification-toast .monaco-button", { hasText: "Cancel" });
      await button.first().waitFor({ timeout: 60000 });
      await button.first().click();
    }, /cancelled/);
    const got = await save("cancel2.cpp", slowPrompt);
    assert(got.startsWith(slowPrompt.slice(0, -1)), `the text before the cursor changed: ${JSON.stringify(got.slice(0, 200))}`);
  });

  await check("ghost text at the start of an empty line (line 5, column 1); typing dismisses it; Tab accepts it", async () => {
    await open("ghost.cpp");
    await goto(5, 1);
    await palette("Trigger Inline Suggestion");
    const ghost = await waitUntil("ghost text", async () => ((await ghostText()).includes("return total;") ? ghostText() : ""), 90000);
    note(`ghost text: ${JSON.stringify(ghost)}`);
    assert(ghost.includes("int total = 0;") && ghost.includes("total += x;"), `ghost text ${JSON.stringify(ghost)} is not the repaired body`);
    assert(!ghost.includes("totl"), "the ghost text holds the stand-in's error: it was not repaired");
    assert((await page.locator(".tab.active.dirty").count()) === 0, "ghost text must not edit the document");
    // Typing a character the suggestion does not continue with dismisses it.
    await page.keyboard.type("x");
    await waitUntil("the ghost text to go", async () => !(await ghostText()).includes("total += x"), 5000);
    await page.keyboard.press("Backspace");
    // Again, and Tab accepts it.
    await palette("Trigger Inline Suggestion");
    await waitUntil("ghost text again", async () => (await ghostText()).includes("return total;"), 90000);
    await page.keyboard.press("Tab");
    const got = await save("ghost.cpp", expected.slice(0, -1));
    // The generated text fills the empty line (its own line break ends it).
    assert(got === expected.slice(0, -1), `after Tab ghost.cpp is ${JSON.stringify(got)}, want ${JSON.stringify(expected.slice(0, -1))}`);
    const cc = compiles(got);
    assert(cc === "", `clang-19 rejects it: ${cc}`);
  });

  await check("ghost text mid-body, by itself at the end of a line just typed; Tab accepts it", async () => {
    await open("body.cpp");
    await goto(5, 1);
    await page.keyboard.type("  int total = 0;");
    const ghost = await waitUntil("ghost text after typing", async () => ((await ghostText()).includes("return total;") ? ghostText() : ""), 90000);
    note(`ghost text: ${JSON.stringify(ghost)}`);
    assert(ghost.includes("for (int x : v) total += x;"), `ghost text ${JSON.stringify(ghost)}`);
    await page.keyboard.press("Tab");
    // Nothing follows the cursor on its line: the line's own break ends the accepted text, so
    // no blank line is left after it.
    const got = await save("body.cpp", expected.slice(0, -1));
    assert(got === expected.slice(0, -1), `body.cpp is ${JSON.stringify(got)}, want ${JSON.stringify(expected.slice(0, -1))}`);
  });

  await check("settings reach the running server (hydra.modelUrl)", async () => {
    // The only way the server learnt the stand-in's URL is the settings: the environment of
    // code-server has none. A dead URL must now make generation fail, and naming the stand-in
    // again must make it work.
    await setSetting("hydra.modelUrl", "http://127.0.0.1:9/v1", { machine: true });
    await open("settings.cpp");
    await goto(5, 1);
    // The server names the URL it tries (it waits for a model server that may be loading, and
    // says so in the progress): then Cancel.
    const bad = await generateAndWait(async () => {
      await palette("Hydra: Generate with Repair");
      const named = await waitUntil("a notification naming a model URL", async () => (await toastTexts()).find((t) => /http:\/\/127\.0\.0\.1:\d+/.test(t)), 60000);
      note(`with a dead model URL: ${named}`);
      assert(/127\.0\.0\.1:9\b/.test(named), `the server did not use the changed URL: ${named}`);
      if (await progressOpen()) {
        await page.locator(".notification-toast .monaco-button", { hasText: "Cancel" }).first().click();
      }
    }, /cancelled|unavailable|failed/);
    note(`then: ${bad.end}`);
    assert((await page.locator(".tab.active.dirty").count()) === 0, "a failed generation must leave the document as it was");
    await setSetting("hydra.modelUrl", modelUrl, { machine: true });
    await open("settings.cpp");
    await goto(5, 1);
    await generateAndWait(() => palette("Hydra: Generate with Repair"), /accepted/);
    const got = await save("settings.cpp", expected);
    assert(got === expected, `settings.cpp is ${JSON.stringify(got)}`);
  });

  await check("the server's log reaches the output channel at its level, not as [error]", async () => {
    const text = await waitUntil("the warm start's line in the Hydra LSP output", () => (/checkpointed/.test(hydraLog()) ? hydraLog() : ""), 30000);
    const lines = text.split("\n").filter((l) => /warm start: .*checkpointed/.test(l));
    assert(lines.length > 0 && lines.every((l) => /\[info\]/.test(l)), `the warm start's lines: ${JSON.stringify(lines)}, want [info]`);
    const errors = text.split("\n").filter((l) => /\[error\]/.test(l));
    assert(errors.length === 0, `[error] lines in a run without errors: ${JSON.stringify(errors.slice(0, 5))}`);
  });

  if (framesDir) {
    console.log(`frames of the repair: ${framesDir} (${frameNo} frames)`);
  }
} finally {
  await browser.close();
}
console.log(`vscode: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
