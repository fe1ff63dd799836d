// Turns a terminal test's screen recording into an animated SVG: every distinct screen the editor
// showed (tmux capture-pane -e: text, colours, the cursor), in order. Nothing is drawn that the
// recording does not hold. The recording comes from the editors' terminal tests:
//   HYDRA_TUI_RECORD=/tmp/rec editors/nvim/test/run.sh tui-ghost
//   node editors/docs/screens-to-svg.mjs /tmp/rec/nvim-tui-ghost.screens > editors/docs/ghost-text.svg
//   node editors/docs/screens-to-svg.mjs FILE N     (only frame N, still: to look at it)
// The recording: each screen's lines, then "----- CURSOR_X CURSOR_Y UNIX_TIME".
import { readFileSync } from "node:fs";

const file = process.argv[2];
const still = process.argv[3] === undefined ? -1 : Number(process.argv[3]);
if (!file) {
  console.error("usage: node screens-to-svg.mjs SCREENS > OUT.svg");
  process.exit(2);
}

// --- the recording -----------------------------------------------------------------------------
const frames = [];
let lines = [];
for (const line of readFileSync(file, "utf8").split("\n")) {
  const m = /^----- (\d+) (\d+) [\d.]+$/.exec(line);
  if (!m) {
    lines.push(line);
    continue;
  }
  frames.push({ lines, cx: Number(m[1]), cy: Number(m[2]) });
  lines = [];
}
// Blank screens (before the editor drew) and the ones from the test typing ":qa!" on (or the
// editor gone: tmux's "Pane is dead") are left out.
const plain = (l) => l.replace(/\x1b\[[0-9;]*m/g, "");
const quit = frames.findIndex((f) => f.lines.some((l) => /^:qa!|^Pane is dead/.test(plain(l))));
const shown = (quit >= 0 ? frames.slice(0, quit) : frames).filter((f) => f.lines.some((l) => plain(l).trim() !== ""));

// --- colours: the 16 ANSI ones, then xterm's 256-colour cube and greys ----------------------------
const base = ["#1e1e2e", "#f38ba8", "#a6e3a1", "#f9e2af", "#89b4fa", "#f5c2e7", "#94e2d5", "#bac2de",
  "#585b70", "#f38ba8", "#a6e3a1", "#f9e2af", "#89b4fa", "#f5c2e7", "#94e2d5", "#a6adc8"];
const colour = (n) => {
  if (n < 16) return base[n];
  if (n >= 232) {
    const v = (8 + (n - 232) * 10).toString(16).padStart(2, "0");
    return `#${v}${v}${v}`;
  }
  const c = n - 16;
  const step = (x) => (x === 0 ? 0 : 55 + x * 40).toString(16).padStart(2, "0");
  return `#${step(Math.floor(c / 36))}${step(Math.floor(c / 6) % 6)}${step(c % 6)}`;
};
const FG = "#cdd6f4";
const BG = "#1e1e2e";

// runs parses one line's SGR escapes into runs of { text, fg, bg, bold } (reverse applied).
// The state carries over from line to line, as in the terminal's own output.
let sgr = { fg: null, bg: null, bold: false, rev: false };
function runs(line) {
  const out = [];
  const re = /\x1b\[([0-9;]*)m/g;
  let at = 0;
  const push = (text) => {
    if (!text) return;
    let fg = sgr.fg ?? FG;
    let bg = sgr.bg;
    if (sgr.rev) [fg, bg] = [bg ?? BG, fg];
    out.push({ text, fg, bg, bold: sgr.bold });
  };
  for (let m; (m = re.exec(line)); ) {
    push(line.slice(at, m.index));
    at = re.lastIndex;
    const p = m[1] === "" ? [0] : m[1].split(";").map(Number);
    for (let i = 0; i < p.length; i++) {
      const v = p[i];
      if (v === 0) sgr = { fg: null, bg: null, bold: false, rev: false };
      else if (v === 1) sgr.bold = true;
      else if (v === 22) sgr.bold = false;
      else if (v === 7) sgr.rev = true;
      else if (v === 27) sgr.rev = false;
      else if (v >= 30 && v <= 37) sgr.fg = base[v - 30];
      else if (v >= 90 && v <= 97) sgr.fg = base[v - 90 + 8];
      else if (v === 39) sgr.fg = null;
      else if (v >= 40 && v <= 47) sgr.bg = base[v - 40];
      else if (v >= 100 && v <= 107) sgr.bg = base[v - 100 + 8];
      else if (v === 49) sgr.bg = null;
      else if ((v === 38 || v === 48) && p[i + 1] === 5) {
        sgr[v === 38 ? "fg" : "bg"] = colour(p[i + 2]);
        i += 2;
      } else if ((v === 38 || v === 48) && p[i + 1] === 2) {
        sgr[v === 38 ? "fg" : "bg"] = `rgb(${p[i + 2]},${p[i + 3]},${p[i + 4]})`;
        i += 4;
      }
    }
  }
  push(line.slice(at));
  return out;
}

// --- the SVG -------------------------------------------------------------------------------------
const cw = 8.4; // character width at font-size 14
const lh = 19;
const cols = 80;
const rows = Math.max(...shown.map((f) => f.lines.length));
const width = Math.ceil(cols * cw + 24);
const height = rows * lh + 24;
const hold = 1.2; // seconds per frame
const last = 4; // seconds for the final frame
const durations = shown.map((_, i) => (i === shown.length - 1 ? last : hold));
const total = durations.reduce((a, b) => a + b, 0);
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
// The test's temporary directory says nothing to a reader.
const tidy = (s) => s.replace(/\/tmp\/hydra-[a-z]+-test\.[A-Za-z0-9]+\//g, "");

let css = "";
let body = "";
let t = 0;
shown.forEach((f, i) => {
  const a = ((t / total) * 100).toFixed(3);
  const b = (((t + durations[i]) / total) * 100).toFixed(3);
  t += durations[i];
  if (still >= 0) css += `.f${i}{opacity:${i === still ? 1 : 0}}\n`;
  else css += `@keyframes f${i}{0%{opacity:0}${a}%{opacity:1}${b}%{opacity:0}100%{opacity:0}}.f${i}{opacity:0;animation:f${i} ${total}s step-end infinite}\n`;
  sgr = { fg: null, bg: null, bold: false, rev: false };
  let g = `<g class="f${i}">`;
  f.lines.forEach((line, n) => {
    const y = 12 + n * lh;
    let x = 0;
    let text = "";
    for (const r of runs(tidy(line))) {
      const len = [...r.text].length;
      if (r.bg) g += `<rect x="${(12 + x * cw).toFixed(1)}" y="${y}" width="${(len * cw).toFixed(1)}" height="${lh}" fill="${r.bg}"/>`;
      text += `<tspan x="${(12 + x * cw).toFixed(1)}" fill="${r.fg}"${r.bold ? ' font-weight="bold"' : ""}>${esc(r.text)}</tspan>`;
      x += len;
    }
    if (text) g += `<text y="${y + 14}" xml:space="preserve">${text}</text>`;
  });
  g += `<rect x="${(12 + f.cx * cw).toFixed(1)}" y="${12 + f.cy * lh}" width="${cw}" height="${lh}" fill="${FG}" opacity="0.55"/>`;
  body += g + "</g>\n";
});

process.stdout.write(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">
<title>Hydra LSP ghost text in Neovim at 80x24 (recorded from the terminal test; model: scripted stand-in, checker: real Clang)</title>
<style>
${css}</style>
<rect width="100%" height="100%" rx="8" fill="${BG}"/>
${body}</svg>
`);
