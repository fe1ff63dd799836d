-- hydra.nvim: Neovim client for Hydra LSP ("generate with repair" for C, C++ and TypeScript).
--
--   require("hydra").setup({ settings = { modelUrl = "http://127.0.0.1:8000/v1", model = "qwen" } })
--
-- setup() starts (or attaches to) `hydra lsp` for C, C++ and TypeScript (.ts, .tsx) buffers,
-- through nvim-lspconfig when it is installed and `lspconfig ~= false`, otherwise through the
-- built-in client: vim.lsp.start on Neovim 0.8+, vim.lsp.start_client + vim.lsp.buf_attach_client
-- on 0.7. It offers the server's
-- code action (kind "source.generate.hydra", also routed through this plugin when picked from
-- vim.lsp.buf.code_action()), :HydraGenerate (cursor or range), :HydraCancel, :HydraLog,
-- :HydraShowTrace (the picture of the last search, an SVG file the server drew in the user's
-- cache directory), ghost text from the server's inline completion (lua/hydra/inline.lua), and
-- shows the server's work-done progress on one line of the message area, cut to fit so that it
-- never asks for "Press ENTER" (and in require("hydra").status()).
local M = {}

--- version is the plugin's release (lua/hydra/version.lua, which checks the server's against it).
M.version = require("hydra.version").version

-- The LSP names the server and this plugin agree on.
M.CODE_ACTION_KIND = "source.generate.hydra"
M.CMD_GENERATE = "hydra.generate"
M.CMD_CANCEL = "hydra.cancel"
-- INLINE_TOKEN starts the work-done tokens of inline completion requests (their progress feeds
-- the "thinking" indicator, not the message area).
M.INLINE_TOKEN = "hydra.nvim-inline-"

local defaults = {
  -- cmd starts the server. nil: the server the README's build step installed
  -- (stdpath("data")/hydra/bin/hydra, lua/hydra/install.lua), else `hydra` on $PATH.
  cmd = nil,
  -- filetypes: the buffers the server attaches to. Neovim's filetype is the document's LSP
  -- languageId: "typescript" for .ts, "typescriptreact" for .tsx. Beside another TypeScript
  -- server (ts_ls, vtsls) Hydra is one more client of the buffer; both run.
  filetypes = { "c", "cpp", "typescript", "typescriptreact" },
  -- root_markers find the workspace root upwards from the buffer's file.
  root_markers = { "compile_commands.json", "compile_flags.txt", "tsconfig.json", ".git", "go.mod" },
  -- settings is the "hydra" configuration section: modelUrl, model, apiKeyEnv, policy,
  -- maxTokens, maxAttempts, clangFlags. It is sent as initializationOptions.hydra and answered
  -- to workspace/configuration.
  settings = {},
  -- lspconfig: true = through nvim-lspconfig, false = never, nil = when it is installed and
  -- Neovim is older than 0.11.
  lspconfig = nil,
  -- notify: how the end of a generation (one summary line) is reported: true = echoed on one
  -- line of the message area, cut to fit (kept in :messages; :HydraLog has it whole);
  -- "vim.notify" = through vim.notify, whole (for notification plugins); false = not at all.
  notify = true,
  -- progress: echo the server's progress messages, each replacing the last on one line.
  progress = true,
  -- hold_ms: how long a progress line that gives a reason (an error the checker found) stays
  -- before the next progress line replaces it.
  hold_ms = 1200,
  -- inline: ghost text from the server's inline completion in insert mode (lua/hydra/inline.lua):
  --   enabled   ask after a pause in typing (false: never)
  --   debounce  the pause, in ms (nil: delay_ms, its older name, when set, else 400)
  --   keymap    insert-mode keys, named as copilot.lua's and minuet-ai's (false: no mapping):
  --             accept, accept_word, accept_line, next, prev, dismiss (accept_key and
  --             dismiss_key, the older names of accept and dismiss, are still read)
  --   native    on Neovim 0.12+, use vim.lsp.inline_completion (nil = when present)
  inline = {
    enabled = true,
    debounce = nil,
    keymap = { accept = "<Tab>", accept_word = false, accept_line = false, next = "<M-]>", prev = "<M-[>", dismiss = "<C-]>" },
    native = nil,
  },
  -- trace_opener: how :HydraShowTrace opens the picture of a search (an SVG file): nil = the
  -- desktop's handler, vim.ui.open on Neovim 0.10+ (xdg-open, wslview, open…), `xdg-open`
  -- (`open` on macOS) before; a list of words = that command, the file's path added; a
  -- function(path).
  trace_opener = nil,
  -- on_attach(client, bufnr) is called after the plugin's own attach work.
  on_attach = nil,
  -- on_progress(bufnr, line) is called with each progress line of a generation (for statuslines).
  on_progress = nil,
}

M.config = vim.deepcopy(defaults)

-- State per buffer, readable by statuslines and tests:
--   M.state[bufnr] = { running = bool, progress = "…", last = result table, error = "…",
--                      progress_log = { "…", … } }
M.state = {}
-- last_trace is the path of the newest picture of a search (any buffer's), or nil.
M.last_trace = nil

local next_token = 0

--- fit cuts msg (one line) to the width the message area has left (v:echospace), so that
--- echoing it never scrolls the message area or asks for "Press ENTER".
--- A cut line ends with tail (e.g. " :HydraLog", where it is whole).
function M.fit(msg, tail)
  msg = tostring(msg):gsub("%s*\n%s*", " ")
  tail = "…" .. (tail or "")
  local width = vim.v.echospace
  if type(width) ~= "number" or width <= 0 then
    width = vim.o.columns - 12
  end
  if vim.fn.strdisplaywidth(msg) <= width then
    return msg
  end
  local room = width - vim.fn.strdisplaywidth(tail)
  local n = math.max(room, 0)
  local out = vim.fn.strcharpart(msg, 0, n)
  while n > 0 and vim.fn.strdisplaywidth(out) > room do
    n = n - 1
    out = vim.fn.strcharpart(msg, 0, n)
  end
  return out .. tail
end

local hl_of = {
  [vim.log.levels.ERROR] = "ErrorMsg",
  [vim.log.levels.WARN] = "WarningMsg",
}

-- echo shows one line in the message area, fitted. history = false lines (progress) replace each
-- other and are coalesced: only the newest waiting one is drawn. A history line cut to fit ends
-- with tail (default " :HydraLog").
local waiting_echo
local function echo(msg, hl, history, tail)
  if history then
    waiting_echo = nil
    vim.api.nvim_echo({ { M.fit(msg, tail or " :HydraLog"), hl or "None" } }, true, {})
    return
  end
  local first = waiting_echo == nil
  waiting_echo = { msg, hl }
  if first then
    vim.schedule(function()
      local w = waiting_echo
      waiting_echo = nil
      -- Not over a command line being typed, nor while Neovim waits in a prompt (the code-action
      -- menu's inputlist, input()): a line drawn under a menu scrolls it up into a hit-enter
      -- prompt. Statuslines still get it through status().
      local mode = vim.api.nvim_get_mode()
      if w and mode.mode:sub(1, 1) ~= "c" and not mode.blocking then
        -- A menu just closed (the code action's inputlist) leaves its lines scrolled up in the
        -- message area, the cursor after the typed number: a line echoed there would wrap into
        -- a hit-enter prompt. Redrawing first clears them, as `:redraw | echo` does.
        vim.cmd("redraw")
        vim.api.nvim_echo({ { M.fit(w[1]), w[2] or "None" } }, false, {})
      end
    end)
  end
end

-- notify reports msg as the notify option says; tail is what a line cut to fit ends with.
local function notify(msg, level, tail)
  local how = M.config.notify
  if how == "vim.notify" then
    vim.notify("Hydra: " .. msg, level or vim.log.levels.INFO)
  elseif how then
    echo("Hydra: " .. msg, hl_of[level], true, tail)
  end
end

local function bufstate(bufnr)
  local s = M.state[bufnr]
  if not s then
    s = { running = false, progress_log = {} }
    M.state[bufnr] = s
  end
  return s
end

-- request sends an LSP request through client: a method call (client:request) from Neovim 0.11,
-- where the 0.7–0.10 field call (client.request) is deprecated.
local has_011 = vim.fn.has("nvim-0.11") == 1
local function request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

M._request = request

--- _cancel_request cancels request id of client ($/cancelRequest): the server stops its search
--- and model stream.
function M._cancel_request(client, id)
  if has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

local function get_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr, name = "hydra" })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if c.name == "hydra" then
      table.insert(out, c)
    end
  end
  return out
end

--- client returns the hydra client attached to bufnr (current buffer when nil), or nil.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return get_clients(bufnr)[1]
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.findfile(marker, dir .. ";")
    if found == "" then
      found = vim.fn.finddir(marker, dir .. ";")
    end
    if found ~= "" then
      -- A marker directory (.git) gives ":p:h" = the directory itself with a trailing "/".
      local root = vim.fn.fnamemodify(found, ":p:h"):gsub("/%.git/?$", ""):gsub("(.)/$", "%1")
      return root
    end
  end
  return dir
end

-- show_progress echoes a progress line. A line that gives a reason ("attempt 1: line 6: use of
-- undeclared identifier …") stays hold_ms before later lines replace it; those wait, and only the
-- newest of them is shown when the hold ends.
local held_until, held_line = 0, nil
local function show_progress(line)
  local now = vim.loop.now()
  if now < held_until then
    if not held_line then
      vim.defer_fn(function()
        local l = held_line
        held_line = nil
        if l then
          echo(l, "Comment", false)
        end
      end, held_until - now)
    end
    held_line = line
    return
  end
  held_line = nil
  echo(line, "Comment", false)
  if line:match("attempt %d+: ") and (M.config.hold_ms or 0) > 0 then
    held_until = now + M.config.hold_ms
  end
end

-- progress_default hands a $/progress message to Neovim's own handler (which feeds
-- LspProgressUpdate on 0.7 and LspProgress / client.progress on 0.10+, for statuslines).
local function progress_default(err, result, ctx, config)
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

-- clangd_titles maps "client_id:token" of clangd's progress (clangd behind Hydra: the server
-- starts its titles with "clangd", e.g. "clangd: indexing") to that title.
local clangd_titles = {}

-- clangd_progress says whether a $/progress value is clangd's, and shows it as clangd's
-- ("clangd: indexing 4/32 (12%)") when no generation of the client runs: it is never a
-- generation's progress, never in :HydraLog, and never drawn over Hydra's own progress line.
local function clangd_progress(client_id, token, val)
  local key = tostring(client_id) .. ":" .. tostring(token)
  if val.kind == "begin" and type(val.title) == "string" and val.title:lower():sub(1, 6) == "clangd" then
    clangd_titles[key] = val.title
  end
  local title = clangd_titles[key]
  if not title then
    return false
  end
  if val.kind == "end" then
    clangd_titles[key] = nil
  end
  local busy = false
  for _, s in pairs(M.state) do
    busy = busy or (s.running and s.client_id == client_id)
  end
  if M.config.progress and not busy and val.kind ~= "end" then
    local line = title
    if val.message then
      line = line .. " " .. val.message
    end
    if val.percentage then
      line = line .. string.format(" (%d%%)", val.percentage)
    end
    echo(line, "Comment", false)
  end
  return true
end

-- progress_handler shows $/progress for our client, then hands the message to the default handler
-- (which feeds LspProgressUpdate on 0.7 and LspProgress / client.progress on 0.10+). The end of a
-- generation is not echoed here: finish() reports it once.
local function progress_handler(err, result, ctx, config)
  local val = result and result.value
  if type(val) == "table" and type(result.token) == "string" and result.token:sub(1, #M.INLINE_TOKEN) == M.INLINE_TOKEN then
    require("hydra.inline").on_progress(result.token, val)
    return
  end
  if type(val) == "table" and ctx and clangd_progress(ctx.client_id, result.token, val) then
    return progress_default(err, result, ctx, config)
  end
  if type(val) == "table" then
    local parts = {}
    if val.kind == "begin" and val.title then
      table.insert(parts, val.title)
    end
    if val.message then
      table.insert(parts, val.message)
    end
    if val.percentage then
      table.insert(parts, string.format("(%d%%)", val.percentage))
    end
    local line = table.concat(parts, " ")
    -- The generation this progress belongs to: the one whose token it carries, else (a token
    -- the server made up) every running generation of this client.
    local owned = false
    for _, s in pairs(M.state) do
      owned = owned or (s.running and s.token == result.token)
    end
    local mine = false
    for bufnr, s in pairs(M.state) do
      if s.running and s.client_id == ctx.client_id and (s.token == result.token or not owned) then
        mine = true
        if line ~= "" then
          s.progress = line
          table.insert(s.progress_log, line)
          if #s.progress_log > 200 then
            table.remove(s.progress_log, 1)
          end
          if M.config.on_progress then
            M.config.on_progress(bufnr, line)
          end
        end
      end
    end
    if M.config.progress and mine and line ~= "" and val.kind ~= "end" then
      show_progress(line:lower():sub(1, 5) == "hydra" and line or ("Hydra: " .. line))
    end
  end
  return progress_default(err, result, ctx, config)
end

-- recent_summaries are the last results' one-line messages, so that the server's
-- window/showMessage repeating one is not shown a second time.
local recent_summaries = {}

-- show_message_handler takes the server's window/showMessage. A generation's summary is reported
-- once, by finish(): a message that comes while a generation of the client runs may be it, so it
-- is shown a moment later unless the generation ended with it meanwhile. Others are echoed on one
-- line (whole in :messages when they fit, and in :HydraLog).
local function show_message_handler(_, params, ctx)
  if type(params) ~= "table" or type(params.message) ~= "string" then
    return vim.NIL
  end
  local msg = params.message
  local text = msg:lower():sub(1, 7) == "hydra: " and msg:sub(8) or msg
  local level = ({ vim.log.levels.ERROR, vim.log.levels.WARN })[params.type]
  local function show()
    if not recent_summaries[msg] then
      notify(text, level)
    end
  end
  for _, s in pairs(M.state) do
    if s.running and s.client_id == ctx.client_id then
      s.server_message = msg
      vim.defer_fn(show, 500)
      return vim.NIL
    end
  end
  show()
  return vim.NIL
end

-- first_edit_start is the earliest start, { row, byte col } (0-based), of the edits a
-- WorkspaceEdit makes in buffer b, or nil.
local function first_edit_start(edit, b)
  local edits = {}
  for uri, list in pairs(edit.changes or {}) do
    if vim.uri_to_bufnr(uri) == b then
      vim.list_extend(edits, list)
    end
  end
  for _, dc in ipairs(edit.documentChanges or {}) do
    if dc.textDocument and vim.uri_to_bufnr(dc.textDocument.uri) == b then
      vim.list_extend(edits, dc.edits or {})
    end
  end
  local first
  for _, e in ipairs(edits) do
    local row = e.range.start.line
    local line = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ""
    local ok, col = pcall(vim.str_byteindex, line, e.range.start.character, true)
    col = ok and col or #line
    if not first or row < first[1] or (row == first[1] and col < first[2]) then
      first = { row, col }
    end
  end
  return first
end

-- apply_edit_handler applies the server's workspace/applyEdit as Neovim does, and makes one undo
-- step of each generation: an edit of a running generation joins the undo block of its previous
-- edit (:undojoin) when nothing else changed the buffer in between. So one `u` removes the whole
-- generation, and undo never brings back text that was rolled back.
local function apply_edit_handler(err, params, ctx, config)
  local bufs = {}
  local edit = type(params) == "table" and params.edit or {}
  for uri in pairs(edit.changes or {}) do
    table.insert(bufs, vim.uri_to_bufnr(uri))
  end
  for _, dc in ipairs(edit.documentChanges or {}) do
    if dc.textDocument then
      table.insert(bufs, vim.uri_to_bufnr(dc.textDocument.uri))
    end
  end
  local function seq(b)
    return vim.api.nvim_buf_call(b, function()
      return vim.fn.undotree().seq_cur
    end)
  end
  for _, b in ipairs(bufs) do
    local s = M.state[b]
    if s and s.running and s.undo_seq and vim.api.nvim_buf_is_loaded(b) and seq(b) == s.undo_seq then
      vim.api.nvim_buf_call(b, function()
        pcall(vim.cmd, "undojoin")
      end)
    end
  end
  -- Cursors before every edit of the generation stay where they are (Neovim's set_text moves a
  -- cursor on the edited line to the end of the new text).
  local keep = {}
  for _, b in ipairs(bufs) do
    local s = M.state[b]
    local first = s and s.running and first_edit_start(edit, b)
    if first then
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_buf(w) == b then
          local c = vim.api.nvim_win_get_cursor(w)
          if c[1] - 1 < first[1] or (c[1] - 1 == first[1] and c[2] < first[2]) then
            table.insert(keep, { w, c })
          end
        end
      end
    end
  end
  local res = vim.lsp.handlers["workspace/applyEdit"](err, params, ctx, config)
  for _, k in ipairs(keep) do
    if vim.api.nvim_win_is_valid(k[1]) then
      pcall(vim.api.nvim_win_set_cursor, k[1], k[2])
    end
  end
  for _, b in ipairs(bufs) do
    local s = M.state[b]
    if s and s.running and vim.api.nvim_buf_is_loaded(b) then
      s.undo_seq = seq(b)
    end
  end
  return res
end

M.handlers = {
  ["$/progress"] = progress_handler,
  ["window/showMessage"] = show_message_handler,
  ["workspace/applyEdit"] = apply_edit_handler,
}

-- settings_section is the "hydra" configuration section sent to the server: the user's settings,
-- and clientShowsSummary (this plugin reports a generation's end itself, so the server sends no
-- window/showMessage for it).
local function settings_section()
  return { hydra = vim.tbl_extend("keep", vim.deepcopy(M.config.settings or {}), { clientShowsSummary = true }) }
end

-- on_attach sets up ghost text in the buffer, then calls the user's on_attach.
local function on_attach(client, b)
  require("hydra.inline").attach(b)
  -- Completion on the project's symbols comes from clangd behind Hydra: <C-x><C-o> asks the
  -- server, unless the user set 'omnifunc' themselves (C's ftplugin sets ccomplete#Complete,
  -- which knows only tags).
  local caps = client.server_capabilities or {}
  local ft = vim.bo[b].filetype
  local omni = vim.bo[b].omnifunc
  if caps.completionProvider and (ft == "c" or ft == "cpp") and (omni == "" or omni == "ccomplete#Complete") then
    vim.bo[b].omnifunc = "v:lua.vim.lsp.omnifunc"
  end
  if M.config.on_attach then
    M.config.on_attach(client, b)
  end
end

--- on_attach is what the plugin does when the server attaches to buffer b (ghost text, omnifunc,
--- the user's on_attach); lsp/hydra.lua gives it to vim.lsp.config.
M.on_attach = on_attach

--- on_init records the server's version and warns once when it is not the plugin's
--- (lua/hydra/version.lua); lsp/hydra.lua gives it to vim.lsp.config.
M.on_init = function(client, result)
  require("hydra.version").on_init(client, result)
end

--- settings_section returns the "hydra" configuration section the server is sent (the settings
--- option, and clientShowsSummary).
M.settings_section = settings_section

local function client_config(bufnr)
  local settings = settings_section()
  return {
    name = "hydra",
    cmd = M.config.cmd,
    root_dir = root_dir(bufnr),
    init_options = settings,
    settings = settings,
    handlers = M.handlers,
    capabilities = vim.lsp.protocol.make_client_capabilities(),
    on_init = M.on_init,
    on_attach = on_attach,
  }
end

-- attach_07 is Neovim 0.7's way: one client per root directory, attached buffer by buffer.
local clients_by_root = {}
local function attach_07(bufnr)
  local cfg = client_config(bufnr)
  local id = clients_by_root[cfg.root_dir]
  if id and not vim.lsp.get_client_by_id(id) then
    id = nil
  end
  if not id then
    id = vim.lsp.start_client(cfg)
    if not id then
      notify("cannot start " .. table.concat(cfg.cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[cfg.root_dir] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- attach starts or reuses `hydra lsp` for bufnr (current buffer when nil) and returns the client id.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local existing = M.client(bufnr)
  if existing then
    return existing.id
  end
  if vim.lsp.start then
    return vim.lsp.start(client_config(bufnr), { bufnr = bufnr })
  end
  return attach_07(bufnr)
end

local function setup_lspconfig()
  local ok, lspconfig = pcall(require, "lspconfig")
  if not ok then
    return false
  end
  local configs = require("lspconfig.configs")
  if not configs.hydra then
    configs.hydra = {
      default_config = {
        cmd = M.config.cmd,
        filetypes = M.config.filetypes,
        root_dir = function(fname)
          return lspconfig.util.root_pattern(unpack(M.config.root_markers))(fname)
            or vim.fn.fnamemodify(fname, ":p:h")
        end,
        single_file_support = true,
      },
      docs = { description = "Hydra LSP: generate C/C++ and TypeScript with a language model and a live compiler checking it." },
    }
  end
  local settings = settings_section()
  lspconfig.hydra.setup({
    init_options = settings,
    settings = settings,
    handlers = M.handlers,
    on_init = M.on_init,
    on_attach = on_attach,
  })
  return true
end

--- summary is the one line that reports how a generation ended: the server's own summary
--- ("accepted 4 lines; 19 tokens, 2 attempts, 0.6 s; …"), else one made from the result.
local function summary(result)
  local msg = type(result.message) == "string" and result.message or ""
  msg = msg:gsub("^[Hh]ydra: ", "")
  if result.ok then
    if msg == "" then
      msg = string.format("done: %d attempt(s), %d output tokens", result.attempts or 0, result.outputTokens or 0)
    end
    return msg
  end
  if msg ~= "" then
    return msg
  end
  return "stopped: " .. tostring(result.reason or "unknown reason")
end

-- TRACE_HINT is how the summary offers the picture of the search.
local TRACE_HINT = ":HydraShowTrace"

-- finish reports the end of a generation in bufnr: one summary line, which offers the picture of
-- the search (:HydraShowTrace) when the server drew one.
local function finish(bufnr, err, result, on_done)
  local s = bufstate(bufnr)
  s.running = false
  s.undo_seq = nil
  s.last = result
  s.error = err and (err.message or vim.inspect(err)) or nil
  local line, level
  if err then
    line, level = "generation failed: " .. s.error, vim.log.levels.ERROR
  elseif type(result) == "table" then
    line = summary(result)
    if type(result.message) == "string" then
      recent_summaries[result.message] = true
    end
    if not result.ok then
      level = vim.log.levels.WARN
    end
  end
  s.summary = line
  local trace = type(result) == "table" and type(result.trace) == "string" and result.trace or nil
  if trace then
    M.last_trace = trace
  end
  if line then
    table.insert(s.progress_log, line)
    if trace then
      table.insert(s.progress_log, "the search, drawn: " .. trace .. " (" .. TRACE_HINT .. " opens it)")
    end
    -- Progress lines still waiting (held) would replace the summary: drop them.
    held_line, held_until = nil, 0
    if trace then
      -- Cut to fit, the offer stays: "…; 2 attempts, 0.4 s; fi… :HydraLog, :HydraShowTrace".
      notify(line .. "; " .. TRACE_HINT .. " shows the search", level, " :HydraLog, " .. TRACE_HINT)
    else
      notify(line, level)
    end
  end
  if on_done then
    on_done(err, result)
  end
end

-- execute runs a hydra.generate command (as the server's code action gave it, or built here) and
-- calls on_done(err, result) when generation ends. The server streams edits as workspace/applyEdit.
local function execute(client, bufnr, command, on_done)
  local s = bufstate(bufnr)
  if s.running then
    notify("a generation is already running in this buffer (:HydraCancel stops it)", vim.log.levels.WARN)
    return false
  end
  next_token = next_token + 1
  s.token = string.format("hydra.nvim-%d", next_token)
  require("hydra.inline").clear(bufnr, true)
  s.running = true
  s.client_id = client.id
  s.progress = "starting"
  s.progress_log = {}
  s.last, s.error, s.summary, s.server_message, s.undo_seq = nil, nil, nil, nil, nil
  local params = {
    command = command.command,
    arguments = command.arguments,
    workDoneToken = s.token,
  }
  local ok = request(client, "workspace/executeCommand", params, function(err, result)
    finish(bufnr, err, result, on_done)
  end, bufnr)
  if not ok then
    s.running = false
    notify("the server is not running", vim.log.levels.ERROR)
    return false
  end
  return true
end

--- current_client returns the current buffer and its hydra client; the client is nil, and the
--- user told so, when none is attached.
local function current_client()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify("no hydra server attached to this buffer (is `hydra` on $PATH?)", vim.log.levels.ERROR)
  end
  return bufnr, client
end

local function position_args(bufnr, client, range)
  local uri = vim.uri_from_bufnr(bufnr)
  if range then
    local p = vim.lsp.util.make_given_range_params(range[1], range[2], bufnr, client.offset_encoding)
    return { uri = uri, range = p.range }
  end
  local p = vim.lsp.util.make_position_params(0, client.offset_encoding)
  return { uri = uri, position = p.position }
end

--- generate runs hydra.generate at the cursor, or over range = {{row, col}, {row, col}} (rows
--- 1-based, cols 0-based, as nvim_buf_get_mark gives them). opts.on_done(err, result) is called at
--- the end. Returns true when the request was sent.
function M.generate(opts)
  opts = opts or {}
  local bufnr, client = current_client()
  if not client then
    return false
  end
  local arg = position_args(bufnr, client, opts.range)
  return execute(client, bufnr, { command = M.CMD_GENERATE, arguments = { arg } }, opts.on_done)
end

--- code_action asks the server for its "source.generate.hydra" code action at the cursor (or
--- opts.range) and runs it; opts.on_done(err, result) is called when generation ends.
function M.code_action(opts)
  opts = opts or {}
  local bufnr, client = current_client()
  if not client then
    return false
  end
  local params
  if opts.range then
    params = vim.lsp.util.make_given_range_params(opts.range[1], opts.range[2], bufnr, client.offset_encoding)
  else
    params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  end
  params.context = { diagnostics = {}, only = { M.CODE_ACTION_KIND }, triggerKind = 1 }
  request(client, "textDocument/codeAction", params, function(err, actions)
    if err then
      finish(bufnr, err, nil, opts.on_done)
      return
    end
    local chosen
    for _, a in ipairs(actions or {}) do
      local kind = a.kind or ""
      if kind == M.CODE_ACTION_KIND or kind:sub(1, #M.CODE_ACTION_KIND + 1) == M.CODE_ACTION_KIND .. "." then
        chosen = a
        break
      end
      if not a.kind and a.command == M.CMD_GENERATE then
        chosen = a -- a bare Command
        break
      end
    end
    if not chosen then
      finish(bufnr, { message = "the server offered no " .. M.CODE_ACTION_KIND .. " action here" }, nil, opts.on_done)
      return
    end
    if chosen.edit then
      vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
    end
    local cmd = chosen.command
    if type(cmd) == "string" then
      cmd = chosen -- a bare Command: { title, command, arguments }
    end
    if not cmd then
      finish(bufnr, nil, { ok = true, reason = "edit applied" }, opts.on_done)
      return
    end
    execute(client, bufnr, cmd, opts.on_done)
  end, bufnr)
  return true
end

--- cancel stops the generation running in the current buffer (all of the server's when all=true).
function M.cancel(opts)
  opts = opts or {}
  local bufnr, client = current_client()
  if not client then
    return false
  end
  local args = opts.all and {} or { { uri = vim.uri_from_bufnr(bufnr) } }
  request(client, "workspace/executeCommand", { command = M.CMD_CANCEL, arguments = args }, function(err)
    if err then
      notify("cancel failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end, bufnr)
  return true
end

--- update_settings merges settings (the "hydra" section: modelUrl, model, …) into the
--- configuration and tells every running hydra client (workspace/didChangeConfiguration; the
--- server's workspace/configuration requests get the new values too).
function M.update_settings(settings)
  M.config.settings = vim.tbl_deep_extend("force", M.config.settings or {}, settings or {})
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ name = "hydra" }) or vim.lsp.get_active_clients()
  for _, client in ipairs(all) do
    if client.name == "hydra" then
      local section = settings_section()
      -- Neovim 0.10+ answers workspace/configuration from client.settings; 0.7–0.9 from
      -- client.config.settings. Set both, so the server's pulls see the new values too.
      client.config.settings = section
      if client.settings ~= nil then
        client.settings = section
      end
      if has_011 then
        client:notify("workspace/didChangeConfiguration", { settings = section })
      else
        client.notify("workspace/didChangeConfiguration", { settings = section })
      end
    end
  end
end

--- status is a one-line summary for statuslines ("" when idle and nothing happened).
function M.status(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = M.state[bufnr]
  local thinking = require("hydra.inline").thinking(bufnr)
  if thinking then
    return "Hydra: " .. thinking
  end
  if not s then
    return ""
  end
  if s.running then
    return "Hydra: " .. (s.progress or "running")
  end
  if s.error then
    return "Hydra: failed"
  end
  if s.last then
    return s.last.ok and "Hydra: done" or ("Hydra: " .. tostring(s.last.reason or "stopped"))
  end
  return ""
end

--- log opens the current buffer's last generation log (every progress line, whole, then the
--- summary) in a scratch window: the place to read reasons cut short in the message area.
function M.log(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = M.state[bufnr] or {}
  local lines = vim.deepcopy(s.progress_log or {})
  table.insert(lines, 1, require("hydra.version").line())
  if s.server_message and not vim.tbl_contains(lines, s.server_message) then
    table.insert(lines, s.server_message)
  end
  if #lines == 1 then
    table.insert(lines, "no Hydra generation in this buffer yet")
  end
  vim.cmd("botright new")
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype = "nofile"
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  vim.api.nvim_buf_set_lines(b, 0, -1, false, vim.tbl_map(function(l)
    return (l:gsub("\n", " "))
  end, lines))
  vim.bo[b].modifiable = false
  vim.wo.wrap = true
  vim.api.nvim_win_set_height(0, math.min(#lines + 1, 12))
  return b
end

-- open_file opens path with the configured trace_opener; returns true, or false and why not.
local function open_file(path)
  local opener = M.config.trace_opener
  if type(opener) == "function" then
    local ok, e = pcall(opener, path)
    return ok, not ok and ("trace_opener failed: " .. tostring(e)) or nil
  end
  if opener == nil and vim.ui.open then
    local obj, e = vim.ui.open(path)
    return obj ~= nil, e and ("cannot open the picture: " .. e)
  end
  local cmd = opener or { vim.fn.has("mac") == 1 and "open" or "xdg-open" }
  cmd = type(cmd) == "string" and { cmd } or vim.deepcopy(cmd)
  table.insert(cmd, path)
  if vim.fn.executable(cmd[1]) ~= 1 then
    return false, "no " .. cmd[1] .. " to open the picture: set trace_opener"
  end
  -- Detached: the viewer stays open after Neovim exits.
  if vim.fn.jobstart(cmd, { detach = true }) <= 0 then
    return false, "cannot run " .. cmd[1] .. " to open the picture"
  end
  return true
end

--- show_trace opens the picture of the search of the buffer's last generation (else the newest
--- of any buffer) with the trace_opener option. Returns the file's path, or nil when there is
--- none (the user is told).
function M.show_trace(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = M.state[bufnr]
  local path = s and s.last and type(s.last.trace) == "string" and s.last.trace or M.last_trace
  if not path then
    notify("no picture of a search yet: :HydraGenerate draws one", vim.log.levels.WARN)
    return nil
  end
  if vim.fn.filereadable(path) ~= 1 then
    notify("the picture " .. path .. " is gone (the server keeps the newest 50)", vim.log.levels.WARN)
    return nil
  end
  local ok, e = open_file(path)
  if not ok then
    notify(tostring(e), vim.log.levels.ERROR)
    return nil
  end
  notify("opened " .. vim.fn.fnamemodify(path, ":~"))
  return path
end

local function define_commands()
  vim.api.nvim_create_user_command("HydraGenerate", function(o)
    local range
    if o.range and o.range > 0 then
      local last = vim.api.nvim_buf_get_lines(0, o.line2 - 1, o.line2, false)[1] or ""
      range = { { o.line1, 0 }, { o.line2, #last } }
    end
    M.generate({ range = range })
  end, { range = true, desc = "Hydra: generate with repair at the cursor (or over the range)" })
  vim.api.nvim_create_user_command("HydraCancel", function(o)
    M.cancel({ all = o.bang })
  end, { bang = true, desc = "Hydra: cancel the generation in this buffer (! = all)" })
  vim.api.nvim_create_user_command("HydraLog", function()
    M.log()
  end, { desc = "Hydra: the last generation's progress and summary, whole" })
  vim.api.nvim_create_user_command("HydraShowTrace", function()
    M.show_trace()
  end, { desc = "Hydra: open the picture of the last generation's search (SVG)" })
end

--- prepare configures the plugin (see `defaults` above for the options) and defines its commands,
--- without starting a server: setup() below, or Neovim 0.11's vim.lsp.enable("hydra") with
--- lsp/hydra.lua, starts it.
function M.prepare(opts)
  M.prepared = true
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  M.config.cmd = M.config.cmd or require("hydra.install").cmd()
  define_commands()
  -- Route the built-in code action menu (vim.lsp.buf.code_action) through this plugin, so a
  -- picked Hydra action gets progress and an end-of-generation report too.
  vim.lsp.commands[M.CMD_GENERATE] = function(command, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if client then
      execute(client, ctx.bufnr or vim.api.nvim_get_current_buf(), command)
    end
  end
end

--- setup configures the plugin (prepare) and starts or attaches the server for the buffers of
--- the filetypes option (C, C++, TypeScript).
function M.setup(opts)
  M.prepare(opts)
  -- nvim-lspconfig when asked for, or by default when it is installed on Neovim < 0.11 (from 0.11
  -- the built-in vim.lsp.start path below is what lspconfig itself builds on).
  local use_lspconfig = M.config.lspconfig
  if use_lspconfig == nil then
    use_lspconfig = not has_011
  end
  if use_lspconfig and setup_lspconfig() then
    return
  end
  local group = vim.api.nvim_create_augroup("hydra_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.config.filetypes,
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
  -- Buffers already open when setup runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.tbl_contains(M.config.filetypes, vim.bo[b].filetype) then
      M.attach(b)
    end
  end
end

return M
