-- The user's config for the terminal tests (editors/nvim/test/run.sh, "tui-*" cases): Neovim runs
-- in tmux at 80x24 with cmdheight=1, the test types into it as a person would, and this file only
-- sets the plugin up with the README's snippet, as written, and reports what the editor is doing:
--
--   nvim -u editors/nvim/test/tui.lua FILE
--
-- Every 30 ms it writes $HYDRA_TEST_STATE (JSON): the mode, whether a hit-enter or more prompt
-- ("r", "rm") was ever seen, the buffer's lines, the cursor, the generation's state, the buffer's
-- line counts while it ran, and the ghost text's state. It asserts nothing: run.sh does, from this file and the screen.
local this = debug.getinfo(1, "S").source:sub(2)
vim.opt.swapfile = false
vim.cmd("filetype plugin indent on")
vim.cmd("syntax on")
vim.opt.expandtab = true
vim.opt.shiftwidth = 2

-- The README's lazy.nvim spec for the plugin, as written (readme_spec.lua): its config() runs as
-- lazy.nvim runs it. Its server is `hydra` on PATH: run.sh puts bin/hydra's directory first and
-- gives Neovim an empty data directory (no server installed there).
local spec, plugin = dofile(vim.fn.fnamemodify(this, ":p:h") .. "/readme_spec.lua")(os.getenv("HYDRA_MODEL_URL"))
local server = vim.split(os.getenv("HYDRA_TEST_CMD"), " ", { trimempty = true })[1]
vim.env.PATH = vim.fn.fnamemodify(server, ":h") .. ":" .. vim.env.PATH
spec.config(plugin)

local hydra = require("hydra")
if os.getenv("HYDRA_TEST_INLINE") == "0" then
  hydra.config.inline.enabled = false
end
-- The clangd setting (README: "clangd behind Hydra"), before the file's buffer attaches.
if os.getenv("HYDRA_TEST_CLANGD") == "1" then
  hydra.config.settings.clangd = true
end

local state_file = os.getenv("HYDRA_TEST_STATE")
local seen = { prompt = false, modes = {}, thinking = false, running = false, counts = {} }
local inline = require("hydra.inline")

-- Every change to a file's buffer while a generation runs records the buffer's line count then
-- (streamed_line_counts): a generation whose edits stream in leaves counts between the first and
-- the last.
vim.api.nvim_create_autocmd("BufReadPost", {
  callback = function(ev)
    vim.api.nvim_buf_attach(ev.buf, false, {
      on_lines = function(_, b)
        if (hydra.state[b] or {}).running then
          seen.counts[vim.api.nvim_buf_line_count(b)] = true
        end
      end,
    })
  end,
})

local function write_state()
  local mode = vim.api.nvim_get_mode().mode
  seen.modes[mode] = true
  if mode == "r" or mode == "rm" then
    seen.prompt = true
  end
  local b = vim.api.nvim_get_current_buf()
  local s = hydra.state[b] or {}
  seen.running = seen.running or s.running == true
  if inline.thinking(b) then
    seen.thinking = true
  end
  local c = hydra.client(b)
  local state = {
    mode = mode,
    prompt_seen = seen.prompt,
    modes_seen = vim.tbl_keys(seen.modes),
    attached = c ~= nil,
    lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
    cursor = vim.api.nvim_win_get_cursor(0),
    running = s.running == true,
    ran = seen.running,
    done = s.last ~= nil or s.error ~= nil,
    last = s.last or vim.NIL,
    summary = s.summary or vim.NIL,
    ghost = inline.ghost(b) or vim.NIL,
    thinking = inline.thinking(b) or vim.NIL,
    thinking_seen = seen.thinking,
    stats = inline.stats,
    undo_seq = vim.fn.undotree().seq_cur,
    streamed_line_counts = vim.tbl_keys(seen.counts),
    progress_log = s.progress_log or {},
    omnifunc = vim.bo[b].omnifunc,
  }
  local tmp = state_file .. ".tmp"
  local f = io.open(tmp, "w")
  if f then
    f:write(vim.fn.json_encode(state))
    f:close()
    os.rename(tmp, state_file)
  end
end

if state_file and state_file ~= "" then
  local timer = vim.loop.new_timer()
  timer:start(30, 30, vim.schedule_wrap(write_state))
end
