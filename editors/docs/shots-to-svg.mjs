// Turns the screenshots the VS Code test records (HYDRA_TEST_FRAMES=DIR
// vscode-extension/test/vscode/run.sh: DIR/frame-NNN.jpg, each taken when the editor or the
// notifications changed) into an animated SVG: what a user sees in VS Code while Hydra repairs a
// program. The frames are the screenshots themselves, embedded; nothing is drawn over them.
//   node editors/docs/shots-to-svg.mjs DIR > editors/docs/repair-vscode.svg
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node shots-to-svg.mjs FRAMES_DIR > OUT.svg");
  process.exit(2);
}
const files = readdirSync(dir)
  .filter((f) => /^frame-\d+\.jpg$/.test(f))
  .sort();
if (files.length === 0) {
  console.error(`shots-to-svg: no frame-NNN.jpg in ${dir}`);
  process.exit(1);
}
// JPEG's size: the SOF0/SOF2 marker holds height and width.
function jpegSize(buf) {
  for (let i = 2; i < buf.length; ) {
    const marker = buf[i + 1];
    const len = buf.readUInt16BE(i + 2);
    if (marker === 0xc0 || marker === 0xc2) {
      return { height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
    }
    i += 2 + len;
  }
  throw new Error("not a JPEG with a frame header");
}
const frames = files.map((f) => readFileSync(join(dir, f)));
const { width, height } = jpegSize(frames[0]);
const hold = 1.4; // seconds per frame
const last = 4; // seconds for the final frame
const durations = frames.map((_, i) => (i === frames.length - 1 ? last : hold));
const total = durations.reduce((a, b) => a + b, 0);

let css = "";
let body = "";
let t = 0;
frames.forEach((buf, i) => {
  const a = ((t / total) * 100).toFixed(3);
  const b = (((t + durations[i]) / total) * 100).toFixed(3);
  t += durations[i];
  css += `@keyframes f${i}{0%{opacity:0}${a}%{opacity:1}${b}%{opacity:0}100%{opacity:0}}.f${i}{opacity:0;animation:f${i} ${total.toFixed(1)}s step-end infinite}\n`;
  body += `<image class="f${i}" width="${width}" height="${height}" href="data:image/jpeg;base64,${buf.toString("base64")}"/>\n`;
});
process.stdout.write(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<title>Hydra LSP in VS Code: Generate with Repair (recorded from the test in real VS Code; model: scripted stand-in, checker: real Clang)</title>
<style>
${css}</style>
${body}</svg>
`);
