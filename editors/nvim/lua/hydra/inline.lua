-- hydra.nvim ghost text: the server's textDocument/inlineCompletion, asked for after a pause in
-- insert mode, as copilot.vim does.
--
-- Neovim 0.7–0.11: the first line of the completion is extmark virtual text at the cursor, the
-- rest virt_lines below it. The keys are named as copilot.lua's and minuet-ai's
-- (inline.keymap): accept (Tab) inserts it, accept_word and accept_line insert its next word or
-- line and leave the rest shown, next and prev show the server's other completions (asking for
-- one when none is shown), dismiss hides it. Typing, moving or leaving insert mode dismisses it and
-- cancels a request still running ($/cancelRequest: the server stops its search and model
-- stream). A "thinking" mark (end-of-line virtual text, and status()) shows while the server
-- works. The request goes out after inline.debounce ms without typing; none is made in a comment
-- or a string.
-- Neovim 0.12+: vim.lsp.inline_completion does the asking and the showing; the keys call its
-- get() (a word or a line of the item for accept_word / accept_line) and select().
local M = {}

local ns = vim.api.nvim_create_namespace("hydra_inline")
local has_010 = vim.fn.has("nvim-0.10") == 1

-- state per buffer: seq (pause timer generation), req = { client_id, id, token } in flight,
-- thinking (text of the mark), item = { text, row, col, tick } shown, accepted_tick.
local st = {}

--- stats counts what happened, for tests and :checkhealth-like curiosity.
M.stats = { requests = 0, cancelled = 0, shown = 0, accepted = 0, skipped_comment_or_string = 0 }

local counter = 0

local function hydra()
  return require("hydra")
end

local function cfg()
  return hydra().config.inline or {}
end

local function bstate(b)
  st[b] = st[b] or { seq = 0 }
  return st[b]
end

local function native()
  return vim.lsp.inline_completion ~= nil and cfg().native ~= false
end

--- keymap returns the ghost-text keys: inline.keymap, with the older inline.accept_key and
--- inline.dismiss_key (when set) for accept and dismiss.
function M.keymap()
  local c = cfg()
  local k = vim.deepcopy(c.keymap or {})
  if c.accept_key ~= nil then
    k.accept = c.accept_key
  end
  if c.dismiss_key ~= nil then
    k.dismiss = c.dismiss_key
  end
  return k
end

--- debounce returns the pause in typing, in ms, after which ghost text is asked for:
--- inline.debounce, or the older inline.delay_ms.
function M.debounce()
  local c = cfg()
  return c.debounce or c.delay_ms or 400
end

--- part returns the start of text that accept_word ("word": leading blanks and punctuation, then
--- a word) or accept_line ("line": up to and including the first line break after the first
--- character) inserts; all of text for nil.
function M.part(text, what)
  if what == "word" then
    local _, e = text:find("^%s*%p*[^%s%p]*")
    return text:sub(1, math.max(e or 0, 1))
  elseif what == "line" then
    local nl = text:find("\n", 2, true)
    return nl and text:sub(1, nl) or text
  end
  return text
end

local function termcodes(keys)
  return vim.api.nvim_replace_termcodes(keys, true, false, true)
end

-- fallback returns what a key does when there is no ghost text: the insert-mode mapping it had
-- before this plugin mapped it (nvim-cmp's Tab, say), else the key itself.
local function fallback(b, key)
  local old = vim.api.nvim_buf_call(b, function()
    return vim.fn.maparg(key, "i", false, true)
  end)
  if type(old) ~= "table" or (old.rhs == nil and old.callback == nil) then
    return function()
      vim.api.nvim_feedkeys(termcodes(key), "ni", false)
    end
  end
  local mode = old.noremap == 1 and "n" or "m"
  return function()
    local keys
    if old.callback then
      keys = old.callback()
      if old.expr ~= 1 then
        return
      end
    elseif old.expr == 1 then
      keys = vim.api.nvim_eval(old.rhs)
    else
      keys = old.rhs
    end
    if type(keys) == "string" and keys ~= "" then
      vim.api.nvim_feedkeys(old.expr == 1 and old.replace_keycodes == 0 and keys or termcodes(keys), mode .. "i", false)
    end
  end
end

--- clear removes the ghost text and the thinking mark of buffer b; with cancel, a request still
--- running is cancelled too.
function M.clear(b, cancel)
  local s = st[b]
  if not s then
    return
  end
  s.seq = s.seq + 1 -- a pause timer still waiting does nothing
  if cancel and s.req then
    local c = vim.lsp.get_client_by_id(s.req.client_id)
    if c then
      pcall(hydra()._cancel_request, c, s.req.id)
      M.stats.cancelled = M.stats.cancelled + 1
    end
    s.req = nil
  end
  if not s.req then
    s.thinking = nil
  end
  s.item = nil
  if vim.api.nvim_buf_is_valid(b) then
    vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  end
end

--- thinking returns the thinking mark's text while a request of buffer b runs, else nil.
function M.thinking(b)
  local s = st[b]
  return s and s.req and s.thinking or nil
end

--- ghost returns the ghost text shown in buffer b (the text the accept key inserts), or nil.
function M.ghost(b)
  local s = st[(b == nil or b == 0) and vim.api.nvim_get_current_buf() or b]
  return s and s.item and s.item.text or nil
end

local function show_thinking(b, row)
  local s = st[b]
  vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  if s and s.thinking then
    local text = " ⋯ Hydra: " .. s.thinking
    if vim.fn.strchars(text) > 40 then
      text = vim.fn.strcharpart(text, 0, 39) .. "…"
    end
    pcall(vim.api.nvim_buf_set_extmark, b, ns, row, 0, { virt_text = { { text, "Comment" } }, virt_text_pos = "eol" })
  end
end

--- on_progress takes the work-done progress of an inline request: its message becomes the
--- thinking mark.
function M.on_progress(token, value)
  for b, s in pairs(st) do
    if s.req and s.req.token == token and type(value) == "table" and value.kind ~= "end" then
      s.thinking = value.message or s.thinking
      if vim.api.nvim_buf_is_valid(b) then
        show_thinking(b, s.req.row)
      end
    end
  end
end

-- in_comment_or_string says whether (row, col) (0-based, col a byte index: the cursor) is inside
-- a comment or a string literal: from tree-sitter when it highlights the buffer, else from a
-- small scan of C/C++ lexical structure over the lines before it (in TypeScript buffers, also of
-- template literals, `…`, which may span lines; their ${…} counts as part of the string).
local function in_comment_or_string(b, row, col)
  if vim.treesitter.get_captures_at_pos and vim.treesitter.highlighter and vim.treesitter.highlighter.active[b] then
    local ok, caps = pcall(vim.treesitter.get_captures_at_pos, b, row, math.max(col - 1, 0))
    if ok then
      for _, c in ipairs(caps) do
        if c.capture:match("comment") or c.capture:match("string") or c.capture:match("character") then
          return true
        end
      end
      return false
    end
  end
  local first = math.max(row - 400, 0)
  local lines = vim.api.nvim_buf_get_lines(b, first, row + 1, false)
  local in_block = false
  local templates = vim.bo[b].filetype:match("^typescript") ~= nil
  local quote -- a template literal's "`" stays open across lines; other quotes end with theirs
  for i, line in ipairs(lines) do
    local limit = i == #lines and col or #line
    local line_comment = false
    if quote ~= "`" then
      quote = nil
    end
    local j = 1
    while j <= limit do
      local c, two = line:sub(j, j), line:sub(j, j + 1)
      if in_block then
        if two == "*/" and j + 1 <= limit then
          in_block = false
          j = j + 1
        end
      elseif quote then
        if c == "\\" then
          j = j + 1
        elseif c == quote then
          quote = nil
        end
      elseif two == "//" then
        line_comment = true
        break
      elseif two == "/*" then
        in_block = true
        j = j + 1
      elseif c == '"' or (c == "'" and not line:sub(j - 1, j - 1):match("%w")) or (c == "`" and templates) then
        quote = c
      end
      j = j + 1
    end
    if i == #lines then
      return in_block or line_comment or quote ~= nil
    end
  end
  return false
end
M._in_comment_or_string = in_comment_or_string

local function item_text(item)
  local t = item.insertText
  if type(t) == "table" then
    t = t.value
  end
  return type(t) == "string" and t or nil
end

local draw

-- show puts item's text as ghost text at (row, col) of buffer b.
local function show(b, row, col, item)
  local text = item_text(item)
  if not text then
    return
  end
  local line = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ""
  local r = item.range
  if r and r.start and r.start.line == row then
    -- What the user typed since the range's start is already in the buffer.
    local ok, start = pcall(vim.str_byteindex, line, r.start.character, true)
    start = ok and start or col
    if start < col then
      local typed = line:sub(start + 1, col)
      if text:sub(1, #typed) ~= typed then
        return
      end
      text = text:sub(#typed + 1)
    end
  end
  local after = line:sub(col + 1)
  -- At the end of a line, the line break is there already.
  if after == "" and text:sub(-1) == "\n" then
    text = text:sub(1, -2)
  end
  if text == "" then
    return
  end
  draw(b, row, col, text)
end

-- draw shows text as ghost text at (row, col) of buffer b and remembers it as the item the keys
-- act on.
draw = function(b, row, col, text)
  local line = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ""
  local after = line:sub(col + 1)
  local hl = cfg().hl or "Comment"
  local lines = vim.split((text:gsub("\t", "    ")), "\n", { plain = true })
  local opts = { virt_text = { { lines[1], hl } }, hl_mode = "combine", priority = 200 }
  if after == "" then
    opts.virt_text_pos = "overlay" -- nothing to cover at the end of the line
  elseif has_010 then
    opts.virt_text_pos = "inline"
  else
    opts.virt_text_pos = "eol"
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      table.insert(opts.virt_lines, { { lines[i], hl } })
    end
  end
  vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(b, ns, row, col, opts)
  bstate(b).item = { text = text, row = row, col = col, tick = vim.api.nvim_buf_get_changedtick(b) }
  M.stats.shown = M.stats.shown + 1
end

--- request asks the server for an inline completion at the cursor of buffer b (the current
--- buffer, in insert mode), unless the cursor is in a comment or a string.
function M.request(b)
  b = (b == nil or b == 0) and vim.api.nvim_get_current_buf() or b
  if vim.api.nvim_get_current_buf() ~= b or not vim.api.nvim_get_mode().mode:match("^i") then
    return false
  end
  local client = hydra().client(b)
  if not client then
    return false
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  if in_comment_or_string(b, row, col) then
    M.stats.skipped_comment_or_string = M.stats.skipped_comment_or_string + 1
    return false
  end
  M.clear(b, true)
  local s = bstate(b)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 2 } -- Automatic
  counter = counter + 1
  local token = hydra().INLINE_TOKEN .. counter
  params.workDoneToken = token
  local tick = vim.api.nvim_buf_get_changedtick(b)
  local ok, id
  ok, id = hydra()._request(client, "textDocument/inlineCompletion", params, function(err, result)
    if not s.req or s.req.id ~= id then
      return -- cancelled or replaced
    end
    s.req, s.thinking = nil, nil
    vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
    if err or type(result) ~= "table" then
      return
    end
    local now = vim.api.nvim_win_get_cursor(0)
    if vim.api.nvim_get_current_buf() ~= b or vim.api.nvim_buf_get_changedtick(b) ~= tick
      or now[1] - 1 ~= row or now[2] ~= col or not vim.api.nvim_get_mode().mode:match("^i") then
      return
    end
    local items = result.items or result
    if type(items) == "table" and items[1] then
      s.items, s.index = items, 1
      show(b, row, col, items[1])
    end
  end, b)
  if not ok then
    return false
  end
  M.stats.requests = M.stats.requests + 1
  s.req = { client_id = client.id, id = id, token = token, row = row }
  s.thinking = "thinking"
  show_thinking(b, row)
  return true
end

-- current returns buffer b's state and the ghost text shown there while the buffer and the
-- cursor are as when it was shown; else it clears what is left and returns nil.
local function current(b)
  local s = st[b]
  local it = s and s.item
  if not it then
    return nil
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  if vim.api.nvim_buf_get_changedtick(b) ~= it.tick or cursor[1] - 1 ~= it.row or cursor[2] ~= it.col then
    M.clear(b, true)
    return nil
  end
  return s, it
end

--- accept inserts the ghost text shown in buffer b and puts the cursor after it; false when none
--- is shown. what = "word" or "line" inserts only its next word or line (M.part), and the rest
--- stays shown after the cursor.
function M.accept(b, what)
  b = (b == nil or b == 0) and vim.api.nvim_get_current_buf() or b
  local s, it = current(b)
  if not s then
    return false
  end
  local text = M.part(it.text, what)
  local rest = it.text:sub(#text + 1)
  M.clear(b, true)
  local lines = vim.split(text, "\n", { plain = true })
  vim.api.nvim_buf_set_text(b, it.row, it.col, it.row, it.col, lines)
  local last_row = it.row + #lines - 1
  local last_col = #lines == 1 and it.col + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(0, { last_row + 1, last_col })
  s.accepted_tick = vim.api.nvim_buf_get_changedtick(b)
  M.stats.accepted = M.stats.accepted + 1
  if rest ~= "" then
    s.items, s.index = { { insertText = rest } }, 1
    draw(b, last_row, last_col, rest)
  end
  return true
end

--- cycle shows the server's next (step 1) or previous (step -1) completion in buffer b; with none
--- shown it asks for one now. False when there is nothing to do.
function M.cycle(b, step)
  b = (b == nil or b == 0) and vim.api.nvim_get_current_buf() or b
  local s, it = current(b)
  if not s then
    return M.request(b)
  end
  local n = s.items and #s.items or 0
  if n < 2 then
    return true -- the one completion there is stays shown
  end
  s.index = (s.index - 1 + step) % n + 1
  show(b, it.row, it.col, s.items[s.index])
  return true
end

--- dismiss hides the ghost text of buffer b and cancels a request still running; false when
--- there was neither.
function M.dismiss(b)
  b = (b == nil or b == 0) and vim.api.nvim_get_current_buf() or b
  local s = st[b]
  if not s or not (s.item or s.req) then
    return false
  end
  M.clear(b, true)
  return true
end

-- typed runs after every change in insert mode: the ghost text goes, a running request is
-- cancelled, and a new one is asked for after the pause.
local function typed(b)
  local s = bstate(b)
  if vim.api.nvim_buf_get_changedtick(b) == s.accepted_tick then
    return -- the accepted text itself (the rest of a partial accept stays shown)
  end
  M.clear(b, true)
  if cfg().enabled == false then
    return
  end
  local my = s.seq
  vim.defer_fn(function()
    if s.seq == my and vim.api.nvim_buf_is_valid(b) then
      M.request(b)
    end
  end, M.debounce())
end

-- without_final_break returns, for vim.lsp.inline_completion.get's on_accept (Neovim 0.12+), a
-- function that drops the item's final line break when nothing follows the item on its line: the
-- line's own break ends the text there, as the ghost text of 0.7–0.11 above does. Inserted as it
-- is (0.12's Completor:accept sets the text over the item's range), it left a blank line after
-- the accepted code.
local function without_final_break(b, what)
  return function(item)
    local text = item.insert_text
    if what and type(text) == "string" then
      item.insert_text = M.part(text, what)
      return item
    end
    if type(text) ~= "string" or text:sub(-1) ~= "\n" then
      return item
    end
    local row, col
    if item.range then
      local ok, _, _, er, ec = pcall(item.range.to_extmark, item.range)
      if not ok then
        return item
      end
      row, col = er, ec
    else
      local cur = vim.api.nvim_win_get_cursor(0)
      row, col = cur[1] - 1, cur[2]
    end
    local line = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1] or ""
    if line:sub(col + 1) == "" then
      item.insert_text = text:sub(1, -2)
    end
    return item
  end
end

--- attach sets up ghost text for buffer b (called when the server attaches).
function M.attach(b)
  local s = bstate(b)
  local c = cfg()
  if s.attached or c.enabled == false then
    return
  end
  s.attached = true
  local keys = M.keymap()
  -- map maps key (when set) in insert mode to act(); where act() did nothing the key does what it
  -- did before (fallback).
  local function map(key, desc, act)
    if not key then
      return
    end
    local otherwise = fallback(b, key)
    vim.keymap.set("i", key, function()
      if not act() then
        otherwise()
      end
    end, { buffer = b, silent = true, desc = "Hydra: " .. desc })
  end
  if native() then
    local ic = vim.lsp.inline_completion
    vim.lsp.inline_completion.enable(true, { bufnr = b })
    for _, k in ipairs({ { "accept", nil }, { "accept_word", "word" }, { "accept_line", "line" } }) do
      map(keys[k[1]], k[1]:gsub("_", " ") .. " of the ghost text", function()
        return ic.get({ bufnr = b, on_accept = without_final_break(b, k[2]) })
      end)
    end
    if ic.select then
      map(keys.next, "next ghost text", function()
        ic.select({ bufnr = b, count = 1 })
        return true
      end)
      map(keys.prev, "previous ghost text", function()
        ic.select({ bufnr = b, count = -1 })
        return true
      end)
    end
    return
  end
  local group = vim.api.nvim_create_augroup("hydra_inline_" .. b, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = b,
    callback = function()
      typed(b)
    end,
  })
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    buffer = b,
    callback = function()
      local it = s.item
      local cur = vim.api.nvim_win_get_cursor(0)
      if (it and (cur[1] - 1 ~= it.row or cur[2] ~= it.col)) or (s.req and cur[1] - 1 ~= s.req.row) then
        M.clear(b, true)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = group,
    buffer = b,
    callback = function()
      M.clear(b, true)
    end,
  })
  map(keys.accept, "accept the ghost text", function()
    return M.accept(b)
  end)
  map(keys.accept_word, "accept the ghost text's next word", function()
    return M.accept(b, "word")
  end)
  map(keys.accept_line, "accept the ghost text's next line", function()
    return M.accept(b, "line")
  end)
  map(keys.next, "next ghost text", function()
    return M.cycle(b, 1)
  end)
  map(keys.prev, "previous ghost text", function()
    return M.cycle(b, -1)
  end)
  map(keys.dismiss, "dismiss the ghost text", function()
    return M.dismiss(b)
  end)
end

return M
