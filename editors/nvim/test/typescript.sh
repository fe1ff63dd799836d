# shellcheck shell=bash
# The TypeScript case of editors/nvim/test/run.sh (sourced by it; it uses run.sh's tui_case,
# tui_end, lines_of and no_prompt). The checker is TypeScript's own compiler (tsc 7 from
# third_party/typescript, which the server finds beside bin/hydra), the model the scripted
# stand-in (editors/testdata/script.json's longest.ts rules):
#   tui-typescript: longest.ts in Neovim in a terminal, with the README's set-up: the buffer's
#             filetype is typescript and the server attaches; :HydraGenerate on the signature's
#             line. The stand-in's first answer declares `let best = "";` (line 3) and assigns it
#             a number on line 4: a type error whose root is the line before. The stand-in
#             answers the same until a retry starts right after the signature (line 3, the
#             root) with the checker's feedback; then its answer is right. So the generation
#             succeeds only when the server rolls back to the root. The edits stream in (the
#             buffer grows line by line while it runs), the buffer is longest.expected.ts, and
#             one `u` removes the whole generation.

case_tui_typescript() {
  cp "$HYDRA_TESTDATA"/longest.ts "$WORKDIR"/
  tui_case tui-typescript longest.ts
  local expected before
  expected="$(lines_of "$HYDRA_TESTDATA/longest.expected.ts")"
  before="$(lines_of "$HYDRA_TESTDATA/longest.ts")"
  tcheck "the .ts file's buffer has the server attached" '.attached' '.'
  tui_keys G
  tui_type ':HydraGenerate'
  tui_keys Enter
  tui_wait_done
  tcheck "the generation succeeds" '.last.ok == true' '.last'
  tcheck "the checker made the model repair (attempts >= 2)" '.last.attempts >= 2' '.last'
  tcheck "the checker rejected line 4: Type 'number' is not assignable to type 'string'" \
    '[.progress_log[] | select(test("^attempt 1: line 4: Type .number. is not assignable to type .string."))] | length == 1' '.progress_log'
  tcheck "a later attempt started from the error's root, line 3" \
    '[.progress_log[] | select(test("^attempt ([2-9]|[1-9][0-9]+) from line 3$"))] | length > 0' '.progress_log'
  tcheck "the body goes after the signature line: the buffer is longest.expected.ts" ".lines == $expected" '.lines'
  tcheck "the edits streamed in: the buffer had line counts between the first and the last while it ran" \
    "[.streamed_line_counts[] | select(. > ($before | length) and . < ($expected | length))] | length > 0" \
    '.streamed_line_counts'
  no_prompt
  tui_keys u
  tui_wait_json "$STATE" ".lines == $before" 5
  tcheck "one \`u\` removes the whole generation (and nothing else)" ".lines == $before" '.lines'
  tui_end tui-typescript
}
