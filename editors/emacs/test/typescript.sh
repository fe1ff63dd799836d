# shellcheck shell=bash
# The TypeScript case of editors/emacs/test/run.sh (sourced by it; it uses run.sh's tui_case,
# tui_end and text_of). The checker is TypeScript's own compiler (tsc 7 from
# third_party/typescript, which the server finds beside bin/hydra), the model the scripted
# stand-in (editors/testdata/script.json's longest.ts rules):
#   tui-typescript: longest.ts in Emacs in a terminal, set up by the README's snippets (the main
#             one and the TypeScript one; typescript.el says which mode opens .ts on each
#             Emacs): eglot starts hydra lsp for the buffer; M-x hydra-generate at the end of
#             the signature's line. The stand-in's first answer declares `let best = "";`
#             (line 3) and assigns it a number on line 4: a type error whose root is the line
#             before. The stand-in answers the same until a retry starts right after the
#             signature (line 3, the root) with the checker's feedback; then its answer is
#             right. So the generation succeeds only when the server rolls back to the root.
#             The edits stream in (the buffer grows line by line while it runs), the buffer is
#             longest.expected.ts, and one C-/ removes the whole generation.

case_tui_typescript() {
  cp "$HYDRA_TESTDATA"/longest.ts "$WORKDIR"/
  HYDRA_TEST_TYPESCRIPT=1 tui_case tui-typescript longest.ts
  local before first last
  before="$(jq .text "$STATE")"
  first="$(wc -l <"$HYDRA_TESTDATA/longest.ts")"
  last="$(wc -l <"$HYDRA_TESTDATA/longest.expected.ts")"
  tcheck "longest.ts opens in a TypeScript mode (typescript-ts-mode on Emacs 29+)" \
    '.major_mode == "typescript-ts-mode" or .major_mode == "typescript-mode"' '.major_mode'
  tcheck "eglot manages the buffer with hydra lsp" '.attached' '.'
  tui_keys 'M-<' C-n C-e
  tui_keys M-x
  tui_type 'hydra-generate'
  tui_keys Enter
  tui_wait_done
  tcheck "the generation succeeds" '.ok' '.'
  tcheck "the buffer is longest.expected.ts" ".text == $(text_of "$HYDRA_TESTDATA/longest.expected.ts")" '.text'
  tcheck "the edits streamed in: the buffer had line counts between the first and the last while it ran" \
    "[.streamed_line_counts[] | select(. > $first and . < $last)] | length > 0" '.streamed_line_counts'
  tcheck "the summary says it was accepted" '.message | test("accepted")' '.message'
  tui_keys C-/
  tui_wait_json "$STATE" ".text == $before" 5
  tcheck "one C-/ undoes the whole generation" ".text == $before" '.text'
  tui_end tui-typescript
}
