// Turns the frames the Neovim test records (HYDRA_TEST_FRAMES=FILE, JSON lines of
// {ms, lines, status}) into an animated SVG of the buffer and its status line: what a user sees
// while Hydra repairs a program. Nothing is drawn that the recording does not hold.
//   node editors/docs/frames-to-svg.mjs frames.jsonl > editors/docs/repair.svg
//   node editors/docs/frames-to-svg.mjs frames.jsonl N     (only frame N, still: to look at it)
import { readFileSync } from "node:fs";

const file = process.argv[2];
const still = process.argv[3] === undefined ? -1 : Number(process.argv[3]);
if (!file) {
  console.error("usage: node frames-to-svg.mjs FRAMES.jsonl > OUT.svg");
  process.exit(2);
}
const raw = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
// Consecutive identical frames are one frame.
const frames = raw.filter((f, i) => i === 0 || JSON.stringify([f.lines, f.status]) !== JSON.stringify([raw[i - 1].lines, raw[i - 1].status]));

const cw = 8.4; // character width at font-size 14
const lh = 20;
const cols = 92;
const rows = Math.max(...frames.map((f) => f.lines.length)) + 1;
const width = Math.ceil(cols * cw + 60);
const height = 40 + rows * lh + 44;
const hold = 1.4; // seconds per frame
const last = 4; // seconds for the final frame
const durations = frames.map((_, i) => (i === frames.length - 1 ? last : hold));
const total = durations.reduce((a, b) => a + b, 0);

const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const statusColor = (s) => (/undeclared|error|rolled back/i.test(s) ? "#f38ba8" : /accepted/i.test(s) ? "#a6e3a1" : "#f9e2af");

let css = "";
let body = "";
let t = 0;
frames.forEach((f, i) => {
  const a = ((t / total) * 100).toFixed(3);
  const b = (((t + durations[i]) / total) * 100).toFixed(3);
  t += durations[i];
  if (still >= 0) {
    css += `.f${i}{opacity:${i === still ? 1 : 0}}\n`;
  } else css += `@keyframes f${i}{0%{opacity:0}${a}%{opacity:1}${b}%{opacity:0}100%{opacity:0}}.f${i}{opacity:0;animation:f${i} ${total}s step-end infinite}\n`;
  const prev = i > 0 ? frames[i - 1].lines : f.lines;
  let g = `<g class="f${i}">`;
  f.lines.forEach((line, n) => {
    const y = 40 + n * lh;
    const fresh = i > 0 && (n >= prev.length || prev[n] !== line) && line !== "";
    g += `<text x="14" y="${y}" class="ln">${n + 1}</text>`;
    g += `<text x="48" y="${y}" class="${fresh ? "new" : "code"}" xml:space="preserve">${esc(line)}</text>`;
  });
  const y = 40 + rows * lh + 12;
  g += `<text x="14" y="${y}" fill="${statusColor(f.status)}" xml:space="preserve">${esc(f.status.slice(0, cols + 4))}</text>`;
  g += `</g>`;
  body += g + "\n";
});

process.stdout.write(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">
<title>Hydra LSP in Neovim: generate with repair (recorded from the editor test; model: scripted stand-in, checker: real Clang)</title>
<style>
.code{fill:#cdd6f4}.new{fill:#89dceb}.ln{fill:#6c7086}
${css}</style>
<rect width="100%" height="100%" rx="8" fill="#1e1e2e"/>
<rect y="${40 + rows * lh - 8}" width="100%" height="32" fill="#313244"/>
<text x="${width - 14}" y="20" fill="#6c7086" text-anchor="end" font-size="12">sum.cpp — :lua require("hydra").code_action()</text>
${body}</svg>
`);
