-- Headless end-to-end test of the Neovim plugin against the real `hydra lsp`:
--
--   nvim --headless --clean -u editors/nvim/test/init.lua
--
-- editors/nvim/test/run.sh sets it up (a scripted stand-in model served by `hydra sim-server`, a
-- work directory with the C++ file); this file reads what it needs from the environment:
--   HYDRA_TEST_CASE      "generate" (require("hydra").code_action → repaired program), "menu"
--                        (the same through vim.lsp.buf.code_action's menu), "settings"
--                        (update_settings reaches the running server), "cancel", "lazy" (the
--                        README's lazy.nvim spec: its build step installs the server into an
--                        empty data directory, from $HYDRA_ARCHIVE or from source, then
--                        "generate") or "lsp-file" (lsp/hydra.lua starts the server, then
--                        "generate")
--   HYDRA_TEST_CMD       the server command, words separated by spaces ("…/bin/hydra lsp")
--   HYDRA_TEST_FILE      the C++ file to open; the cursor goes to its end
--   HYDRA_TEST_EXPECTED  file holding the buffer text expected after generation ("generate")
--   HYDRA_MODEL_URL      the stand-in model's URL (…/v1); HYDRA_MODEL the model name
--   HYDRA_CLANG          the clang used to check that the result compiles (default clang-19)
--   HYDRA_TEST_OPENER    the trace_opener: a stand-in for the desktop opener that appends the
--                        file it is given to HYDRA_TEST_OPENED ("generate": :HydraShowTrace)
--   XDG_CACHE_HOME       the user's cache directory, where the server draws its searches
-- Prints one "ok"/"not ok" line per check and exits non-zero (cquit) when any check fails.
local this = debug.getinfo(1, "S").source:sub(2)
local plugin_dir = vim.fn.fnamemodify(this, ":p:h:h")
vim.opt.runtimepath:prepend(plugin_dir)
vim.opt.swapfile = false
vim.cmd("filetype on")
vim.opt.shortmess:append("F")

local failures = 0
local function check(cond, what, detail)
  if cond then
    io.stdout:write("ok - " .. what .. "\n")
  else
    failures = failures + 1
    io.stdout:write("not ok - " .. what .. (detail and (": " .. detail) or "") .. "\n")
  end
end

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == "" then
    if default == nil then
      error("environment variable " .. name .. " is not set (run editors/nvim/test/run.sh)")
    end
    return default
  end
  return v
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function buffer_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.bo[bufnr].eol then
    text = text .. "\n"
  end
  return text
end

local function compiles(text)
  local path = vim.fn.tempname() .. ".cpp"
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  local out = vim.fn.system({ env("HYDRA_CLANG", "clang-19"), "-fsyntax-only", "-std=c++17", path })
  return vim.v.shell_error == 0, out
end

-- lazy_install does what lazy.nvim does with the README's spec (readme_spec.lua) in a Neovim
-- whose data directory is empty (run.sh gives it a fresh XDG_DATA_HOME): build(plugin), which
-- installs the server from $HYDRA_ARCHIVE when set, else from source, then config(plugin).
local function lazy_install()
  local spec, plugin = dofile(vim.fn.fnamemodify(this, ":p:h") .. "/readme_spec.lua")(env("HYDRA_MODEL_URL"))
  local want = vim.fn.stdpath("data") .. "/hydra/bin/hydra"
  check(vim.fn.filereadable(want) == 0, "the data directory starts empty", want)
  check(type(spec.build) == "function" and spec[1] == "hydra-lsp/hydra", "the README's spec has a build step")
  local ok, e = pcall(spec.build, plugin)
  check(ok, "the build step ran (" .. (os.getenv("HYDRA_ARCHIVE") and "from the archive" or "from source") .. ")", tostring(e))
  local out = vim.fn.system({ want, "--version" })
  check(vim.v.shell_error == 0 and out:match("^hydra %S+") ~= nil, "it installed a server that answers --version", want .. ": " .. out)
  -- lazy.nvim puts the plugin's root on 'runtimepath', not editors/nvim: config() adds that.
  vim.opt.runtimepath:remove(plugin_dir)
  package.loaded["hydra"], package.loaded["hydra.inline"], package.loaded["hydra.install"] = nil, nil, nil
  spec.config(plugin)
  local hydra = require("hydra")
  check(hydra.config.cmd[1] == want, "setup() starts the installed server", vim.inspect(hydra.config.cmd))
  hydra.config.trace_opener = { env("HYDRA_TEST_OPENER") }
end

-- lsp_file starts the server from lsp/hydra.lua, Neovim 0.11's way: vim.lsp.config and
-- vim.lsp.enable. Older Neovims have no vim.lsp.enable: there the file's table is checked for
-- nvim-lspconfig's shape and given to vim.lsp.start, as vim.lsp.enable would (name, root_dir).
local function lsp_file(settings)
  local path = plugin_dir .. "/lsp/hydra.lua"
  local cfg = dofile(path)
  check(type(cfg.cmd) == "table" and cfg.cmd[#cfg.cmd] == "lsp", "lsp/hydra.lua: cmd runs `hydra lsp`", vim.inspect(cfg.cmd))
  check(vim.deep_equal(cfg.filetypes, { "c", "cpp", "typescript", "typescriptreact" }),
    "lsp/hydra.lua: filetypes c, cpp, typescript and typescriptreact", vim.inspect(cfg.filetypes))
  check(type(cfg.root_markers) == "table" and vim.tbl_contains(cfg.root_markers, "compile_commands.json"),
    "lsp/hydra.lua: root_markers", vim.inspect(cfg.root_markers))
  check(type(cfg.on_attach) == "function" and type(cfg.before_init) == "function" and type(cfg.handlers) == "table",
    "lsp/hydra.lua: on_attach, before_init and the plugin's handlers")
  check(vim.fn.exists(":HydraGenerate") == 2, "lsp/hydra.lua defines the plugin's commands")
  local hydra = require("hydra")
  hydra.config.trace_opener = { env("HYDRA_TEST_OPENER") }
  local server = vim.split(env("HYDRA_TEST_CMD"), " ", { trimempty = true })[1]
  local version = vim.fn.execute("version"):match("NVIM v(%S+)")
  if vim.lsp.enable then
    io.stdout:write("# Neovim " .. version .. ": vim.lsp.config + vim.lsp.enable\n")
    vim.lsp.config("hydra", { cmd = { server, "lsp" }, settings = { hydra = settings } })
    vim.lsp.enable("hydra")
    return
  end
  io.stdout:write("# Neovim " .. version .. " has no vim.lsp.enable: the file's table goes to vim.lsp.start\n")
  cfg.cmd = { server, "lsp" }
  cfg.settings = { hydra = settings }
  cfg.name = "hydra"
  vim.api.nvim_create_autocmd("FileType", {
    pattern = cfg.filetypes,
    callback = function(ev)
      cfg.root_dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(ev.buf), ":p:h")
      if vim.lsp.start then
        vim.lsp.start(cfg, { bufnr = ev.buf })
      else -- Neovim 0.7
        vim.lsp.buf_attach_client(ev.buf, vim.lsp.start_client(cfg))
      end
    end,
  })
end

-- notified: what went through vim.notify (the version warning does), kept for the checks.
local notified = {}
local real_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(notified, { msg = msg, level = level })
  return real_notify(msg, level, opts)
end

-- version_checks: the server's version reached the plugin (its log line names it) and the plugin
-- warned once, naming both versions, exactly when the server's release is not the plugin's
-- ($HYDRA_TEST_SERVER_VERSION: what the server's --version printed; $HYDRA_TEST_MISMATCH=1 when
-- the test started a server built with another version).
local function version_checks()
  local v = require("hydra.version")
  local server_version = env("HYDRA_TEST_SERVER_VERSION")
  local mismatch = os.getenv("HYDRA_TEST_MISMATCH") == "1"
  check(v.server ~= nil and v.own(v.server.version) == server_version, "the plugin knows the server's version from serverInfo ("
    .. server_version .. ")", vim.inspect(v.server))
  check(v.line():find(server_version, 1, true) ~= nil and v.line():find("plugin " .. v.version, 1, true) ~= nil,
    ":HydraLog's first line names the server's version and the plugin's", v.line())
  vim.wait(500, function()
    return false
  end, 50)
  local warnings = {}
  for _, n in ipairs(notified) do
    if tostring(n.msg):find("update the plugin or the server", 1, true) then
      table.insert(warnings, n)
    end
  end
  if mismatch then
    check(#warnings == 1, "a server of another release: the plugin warns once", vim.inspect(notified))
    local w = warnings[1] or { msg = "" }
    check(w.level == vim.log.levels.WARN and w.msg:find(v.version, 1, true) ~= nil and w.msg:find(server_version, 1, true) ~= nil,
      "the warning names the plugin's version (" .. v.version .. ") and the server's (" .. server_version .. ")", vim.inspect(w))
  else
    check(#warnings == 0, "a server of the plugin's release: no version warning", vim.inspect(notified))
  end
end

local function run()
  local case = env("HYDRA_TEST_CASE")
  -- lazy installs its own server (from an archive of any version): its version is not bin/hydra's.
  local check_version = case ~= "lazy"
  local settings = {
    modelUrl = env("HYDRA_MODEL_URL"),
    model = env("HYDRA_MODEL", "stand-in"),
    maxAttempts = 8,
  }
  if case == "lazy" then
    lazy_install()
    case = "generate"
  elseif case == "lsp-file" then
    lsp_file(settings)
    case = "generate"
  else
    require("hydra").setup({
      cmd = vim.split(env("HYDRA_TEST_CMD"), " ", { trimempty = true }),
      lspconfig = false,
      notify = true,
      trace_opener = { env("HYDRA_TEST_OPENER") },
      settings = settings,
    })
  end
  local hydra = require("hydra")
  local file = env("HYDRA_TEST_FILE")
  local original = read_file(file)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  check(vim.bo.filetype == "cpp", "the C++ file opens with filetype cpp", vim.bo.filetype)
  local attached = vim.wait(20000, function()
    local c = hydra.client(bufnr)
    return c ~= nil and c.initialized ~= false and c.server_capabilities ~= nil
  end, 50)
  check(attached, "setup() starts hydra lsp and attaches it to the buffer")
  if not attached then
    return
  end
  local caps = hydra.client(bufnr).server_capabilities
  check(caps.executeCommandProvider ~= nil, "the server advertises executeCommand")
  if check_version then
    version_checks()
  end
  if case == "version" then
    -- A second buffer on the same server: still one warning.
    vim.cmd("split " .. vim.fn.fnameescape(vim.fn.fnamemodify(file, ":h") .. "/count.cpp"))
    vim.wait(5000, function()
      return hydra.client(vim.api.nvim_get_current_buf()) ~= nil
    end, 50)
    version_checks()
    return
  end
  -- The cursor goes to the end of the file: generation continues the program from there.
  local last = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_win_set_cursor(0, { last, #vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] })

  local done, err, result = false, nil, nil
  local function on_done(e, r)
    done, err, result = true, e, r
  end

  if case == "generate" then
    -- HYDRA_TEST_FRAMES=FILE records the buffer after every change and every progress line
    -- (JSON lines), for editors/docs/frames-to-svg.mjs; it changes nothing in the test.
    local frames_file = os.getenv("HYDRA_TEST_FRAMES")
    if frames_file and frames_file ~= "" then
      local out = assert(io.open(frames_file, "w"))
      local t0 = vim.loop.hrtime()
      local function snap()
        local s = hydra.state[bufnr] or {}
        out:write(vim.fn.json_encode({
          ms = math.floor((vim.loop.hrtime() - t0) / 1e6),
          lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false),
          status = s.progress or "",
        }) .. "\n")
        out:flush()
      end
      snap()
      vim.api.nvim_buf_attach(bufnr, false, {
        on_lines = function()
          vim.schedule(snap)
        end,
      })
      hydra.config.on_progress = function(b)
        if b == bufnr then
          snap()
        end
      end
    end
    -- Before any generation there is no picture of a search to show: the user is told.
    check(hydra.show_trace() == nil and vim.fn.execute("messages"):find("no picture of a search yet", 1, true) ~= nil,
      ":HydraShowTrace before any generation says there is no picture yet", vim.fn.execute("messages"))
    check(hydra.code_action({ on_done = on_done }), "the code action request is sent")
    local ended = vim.wait(120000, function()
      return done
    end, 50)
    check(ended, "the generation ends")
    check(err == nil, "hydra.generate returns no error", err and vim.inspect(err))
    check(result ~= nil and result.ok == true, "the result says ok", vim.inspect(result))
    check(result ~= nil and (result.attempts or 0) >= 2, "the checker made the model repair (attempts >= 2)",
      vim.inspect(result and result.attempts))
    local text = buffer_text(bufnr)
    local expected = read_file(env("HYDRA_TEST_EXPECTED"))
    check(text == expected, "the buffer equals the expected program", "\n--- got\n" .. text .. "\n--- want\n" .. expected)
    local ok, out = compiles(text)
    check(ok, "the buffer compiles with clang", out)
    local s = hydra.state[bufnr]
    check(s and #s.progress_log > 0, "work-done progress was shown", vim.inspect(s and s.progress_log))
    check(hydra.status(bufnr) == "Hydra: done", "status() reports the end", hydra.status(bufnr))
    -- The summary offers the picture of the search; :HydraShowTrace hands it to the opener.
    local trace = result and result.trace
    check(type(trace) == "string", "the result names the picture of the search", vim.inspect(result))
    local messages = vim.fn.execute("messages")
    check(messages:find("Hydra: accepted", 1, true) ~= nil and messages:find(":HydraShowTrace", 1, true) ~= nil,
      "the summary offers :HydraShowTrace", messages)
    local opened_file = env("HYDRA_TEST_OPENED")
    vim.fn.writefile({}, opened_file) -- what earlier cases opened does not count
    vim.cmd("HydraShowTrace")
    local opened = vim.wait(10000, function()
      return vim.fn.filereadable(opened_file) == 1 and #vim.fn.readfile(opened_file) > 0
    end, 50) and vim.fn.readfile(opened_file)[1]
    check(opened == trace, ":HydraShowTrace hands the opener the picture's path", vim.inspect(opened))
    local dir = env("XDG_CACHE_HOME") .. "/hydra/traces/"
    check(type(trace) == "string" and trace:sub(1, #dir) == dir and trace:sub(-4) == ".svg",
      "the picture is an SVG file in the user's cache directory", trace)
    local project = vim.fn.fnamemodify(file, ":p:h") .. "/"
    check(type(trace) == "string" and trace:sub(1, #project) ~= project, "the picture is not in the project", trace)
    local svg = type(trace) == "string" and vim.fn.filereadable(trace) == 1 and read_file(trace) or ""
    check(svg:find("<svg", 1, true) ~= nil and svg:find("sum.cpp", 1, true) ~= nil
      and svg:find("undeclared identifier", 1, true) ~= nil and svg:find("totl", 1, true) ~= nil,
      "it is the picture of this search: an SVG naming sum.cpp and the checker's error", svg:sub(1, 300))
    -- An opener that is not there: a clear message, nothing opened.
    hydra.config.trace_opener = { "/nonexistent/opener" }
    local shown = hydra.show_trace()
    messages = vim.fn.execute("messages")
    check(shown == nil and messages:find("Hydra: no /nonexistent/opener to open the picture: set trace_opener", 1, true) ~= nil,
      ":HydraShowTrace with a missing opener says so", messages)
  elseif case == "menu" then
    -- The built-in menu (vim.lsp.buf.code_action): the user picks the Hydra action, and the
    -- plugin's vim.lsp.commands handler runs it with progress and an end report.
    local titles = {}
    vim.ui.select = function(items, opts, on_choice)
      local pick
      for i, item in ipairs(items) do
        local action = item.action or item[2] -- 0.10+: {action=…, ctx=…}; 0.7: {client_id, action}
        local title = opts.format_item and opts.format_item(item) or action.title
        table.insert(titles, title)
        if action.kind == hydra.CODE_ACTION_KIND and not pick then
          pick = i
        end
      end
      on_choice(pick and items[pick] or nil, pick)
    end
    local ctx = { diagnostics = {}, only = { hydra.CODE_ACTION_KIND } }
    if vim.fn.has("nvim-0.8") == 1 then
      vim.lsp.buf.code_action({ context = ctx })
    else
      vim.lsp.buf.code_action(ctx)
    end
    local ended = vim.wait(120000, function()
      local s = hydra.state[bufnr]
      return s ~= nil and s.last ~= nil and not s.running
    end, 50)
    check(#titles > 0, "the code action menu offers the Hydra action", vim.inspect(titles))
    check(ended, "the picked action runs through the plugin and ends")
    local s = hydra.state[bufnr] or {}
    check(s.last ~= nil and s.last.ok == true, "the result says ok", vim.inspect(s.last))
    check(buffer_text(bufnr) == read_file(env("HYDRA_TEST_EXPECTED")), "the buffer equals the expected program",
      buffer_text(bufnr))
    check(#(s.progress_log or {}) > 0, "work-done progress was shown", vim.inspect(s.progress_log))
  elseif case == "settings" then
    -- A settings change reaches the running server: point it at a port where no model listens.
    local good = hydra.config.settings.modelUrl
    hydra.update_settings({ modelUrl = "http://127.0.0.1:9/v1" })
    hydra.generate({ on_done = on_done })
    check(vim.wait(60000, function()
      return done
    end, 50), "the generation ends")
    check(result ~= nil and result.ok == false, "with the model URL changed, generation fails", vim.inspect(result))
    check(vim.inspect(result or err):find("127.0.0.1:9/", 1, true) ~= nil, "the server used the changed modelUrl",
      vim.inspect(result or err))
    check(buffer_text(bufnr) == original, "a failed generation leaves the buffer as it was", buffer_text(bufnr))
    -- And back: the restored settings generate again.
    hydra.update_settings({ modelUrl = good })
    done = false
    hydra.generate({ on_done = on_done })
    check(vim.wait(120000, function()
      return done
    end, 50), "the generation with the restored settings ends")
    check(result ~= nil and result.ok == true, "with the restored settings, generation succeeds", vim.inspect(result))
    check(buffer_text(bufnr) == read_file(env("HYDRA_TEST_EXPECTED")), "the buffer equals the expected program",
      buffer_text(bufnr))
  elseif case == "cancel" then
    vim.cmd("HydraGenerate")
    check(hydra.state[bufnr] and hydra.state[bufnr].running, ":HydraGenerate starts a generation")
    -- Cancel once the server has started (its first progress message arrived).
    vim.wait(20000, function()
      local s = hydra.state[bufnr]
      return s and (#s.progress_log > 0 or not s.running)
    end, 20)
    check(hydra.state[bufnr].running, "the generation is still running before :HydraCancel")
    vim.cmd("HydraCancel")
    local ended = vim.wait(30000, function()
      return not hydra.state[bufnr].running
    end, 20)
    check(ended, ":HydraCancel ends the generation")
    local s = hydra.state[bufnr]
    result = s.last
    check(s.error == nil, "the cancelled request returns no error", s.error)
    check(result ~= nil and result.ok == false, "the result says not ok", vim.inspect(result))
    check(result ~= nil and tostring(result.reason):lower():find("cancel") ~= nil, "the reason says cancelled",
      vim.inspect(result and result.reason))
    local text = buffer_text(bufnr)
    check(text:sub(1, #original) == original, "the text before the cursor is intact", text)
    local c = hydra.client(bufnr)
    local stopped = c == nil or (vim.fn.has("nvim-0.11") == 1 and c:is_stopped()) or (vim.fn.has("nvim-0.11") == 0 and c.is_stopped())
    check(not stopped, "the server is still running")
  else
    error("unknown HYDRA_TEST_CASE " .. case)
  end
end

local ok, e = pcall(run)
check(ok, "the test ran to the end", tostring(e))
-- Stop the server cleanly (no orphaned processes), then exit with the verdict.
local all_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
for _, c in ipairs(all_clients()) do
  if vim.fn.has("nvim-0.11") == 1 then
    c:stop()
  else
    c.stop()
  end
end
vim.wait(5000, function()
  return #all_clients() == 0
end, 50)
io.stdout:write(failures == 0 and "PASS\n" or string.format("FAIL (%d)\n", failures))
vim.cmd(failures == 0 and "qa!" or "cquit 1")
