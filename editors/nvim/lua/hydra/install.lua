-- hydra.nvim's server installer: the `build` step of the README's lazy.nvim spec.
--
--   require("hydra.install").build({ archive = "~/Downloads/hydra-VERSION-linux-amd64.tar.gz" })
--
-- It puts the server under stdpath("data")/hydra (bin/hydra, bin/hydra-clang-shim, and from a
-- release archive Clang's builtin headers and INSTALL), where setup() and lsp/hydra.lua look
-- before $PATH (M.server). The server comes from, in order:
--   1. the release archive that opts.archive or $HYDRA_ARCHIVE names: a path, or an http(s) URL
--      fetched with curl; it is unpacked and its bin/hydra must answer --version;
--   2. a build from source, when the plugin is a checkout of the repository (opts.source, the
--      lazy.nvim plugin's dir) and go and llvm-config-19 are on PATH: `make build` there;
-- otherwise it fails, saying what it needs. Nothing is changed until the new server answered:
-- the old one stays in place if a step fails. Works on Neovim 0.7 and later (vim.fn.system).
local M = {}

local function data_dir()
  return vim.fn.stdpath("data") .. "/hydra"
end

--- server returns the installed server's path (stdpath("data")/hydra/bin/hydra) when it is an
--- executable, else nil.
function M.server()
  local p = data_dir() .. "/bin/hydra"
  if vim.fn.executable(p) == 1 then
    return p
  end
  return nil
end

--- cmd is the command that starts the language server: the installed server, else `hydra` on
--- $PATH.
function M.cmd()
  return { M.server() or "hydra", "lsp" }
end

-- run runs argv (a list) and returns its output, or nil and an error naming the command.
local function run(argv, cwd)
  local cmd = argv
  if cwd then
    cmd = { "sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", cwd }
    vim.list_extend(cmd, argv)
  end
  local out = vim.fn.system(cmd)
  if vim.v.shell_error ~= 0 then
    return nil, string.format("`%s` failed (exit %d): %s", table.concat(argv, " "), vim.v.shell_error, vim.trim(out))
  end
  return out
end

-- version asks hydra at path for its version.
local function version(path)
  local out, err = run({ path, "--version" })
  if not out then
    return nil, err
  end
  local v = out:match("^hydra (%S+)")
  if not v then
    return nil, path .. " --version printed " .. vim.inspect(vim.trim(out)) .. ", not hydra's version"
  end
  return v
end

-- replace puts the directory new where dest is, moving dest away first and removing it after.
local function replace(new, dest)
  local old = dest .. ".old"
  vim.fn.delete(old, "rf")
  if vim.fn.isdirectory(dest) == 1 and vim.fn.rename(dest, old) ~= 0 then
    return nil, "cannot move the old server " .. dest .. " away"
  end
  if vim.fn.rename(new, dest) ~= 0 then
    vim.fn.rename(old, dest)
    return nil, "cannot move the new server to " .. dest
  end
  vim.fn.delete(old, "rf")
  return true
end

-- settle makes the server in tmp the installed one at dest once its bin/hydra answers --version;
-- it returns that version. Otherwise tmp goes and dest stays as it was.
local function settle(tmp, dest)
  local v, err = version(tmp .. "/bin/hydra")
  if not v then
    vim.fn.delete(tmp, "rf")
    return nil, "the new server does not run: " .. err
  end
  local moved, why = replace(tmp, dest)
  return moved and v or nil, why
end

-- from_archive unpacks the release archive at archive (a path or URL) into dest.
local function from_archive(archive, dest)
  local tmp = dest .. ".new"
  vim.fn.delete(tmp, "rf")
  vim.fn.mkdir(tmp, "p")
  local file = vim.fn.expand(archive)
  if archive:match("^https?://") then
    if vim.fn.executable("curl") ~= 1 then
      return nil, "curl is needed to download " .. archive
    end
    file = tmp .. "/hydra.tar.gz"
    local _, err = run({ "curl", "-fsSL", "--retry", "2", "-o", file, archive })
    if err then
      vim.fn.delete(tmp, "rf")
      return nil, err
    end
  elseif vim.fn.filereadable(file) ~= 1 then
    vim.fn.delete(tmp, "rf")
    return nil, "no such archive: " .. file
  end
  local _, err = run({ "tar", "-xzf", file, "-C", tmp, "--strip-components=1" })
  if err then
    vim.fn.delete(tmp, "rf")
    return nil, err
  end
  vim.fn.delete(tmp .. "/hydra.tar.gz")
  return settle(tmp, dest)
end

-- from_source builds the checkout at source (`make build`) and copies its two binaries to dest.
local function from_source(source, dest)
  local _, err = run({ "make", "build" }, source)
  if err then
    return nil, err
  end
  local tmp = dest .. ".new"
  vim.fn.delete(tmp, "rf")
  vim.fn.mkdir(tmp .. "/bin", "p")
  for _, f in ipairs({ "hydra", "hydra-clang-shim" }) do
    _, err = run({ "cp", source .. "/bin/" .. f, tmp .. "/bin/" .. f })
    if err then
      vim.fn.delete(tmp, "rf")
      return nil, err
    end
  end
  return settle(tmp, dest)
end

--- build installs the server (see the top of this file). opts: archive (path or URL; default
--- $HYDRA_ARCHIVE), source (a checkout of the repository; a lazy.nvim plugin table's dir is
--- taken too), dir (default stdpath("data")/hydra). Returns the server's path and version; raises
--- an error saying what is missing otherwise (lazy.nvim shows it as the build's failure).
function M.build(opts)
  opts = opts or {}
  local dest = opts.dir or data_dir()
  vim.fn.mkdir(vim.fn.fnamemodify(dest, ":h"), "p")
  local archive = opts.archive or os.getenv("HYDRA_ARCHIVE")
  local v, err
  if archive and archive ~= "" then
    v, err = from_archive(archive, dest)
  else
    local source = opts.source
    if type(source) == "table" then
      source = source.dir
    end
    local checkout = source and vim.fn.filereadable(source .. "/Makefile") == 1
      and vim.fn.isdirectory(source .. "/checkers/clang/shim") == 1
    if checkout and vim.fn.executable("go") == 1 and vim.fn.executable("llvm-config-19") == 1 then
      v, err = from_source(source, dest)
    else
      err = "no release archive given (the archive option or $HYDRA_ARCHIVE: a path or URL of "
        .. "hydra-VERSION-linux-ARCH.tar.gz), and no build from source possible (it needs the "
        .. "repository checkout, go and llvm-config-19: `make deps` there installs them)"
    end
  end
  if not v then
    error("hydra: installing the server failed: " .. err, 0)
  end
  local path = dest .. "/bin/hydra"
  vim.notify(string.format("hydra: server %s installed in %s", v, path), vim.log.levels.INFO)
  return path, v
end

return M
