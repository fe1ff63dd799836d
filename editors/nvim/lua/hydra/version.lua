-- The plugin's version, and its check against the server's: the initialize result's
-- serverInfo.version (what `hydra --version` prints). The server's version is the release with,
-- for a build that is not the release's tag, the commit after a "+" ("0.1.0+e627e48", build
-- metadata in semantic versioning), then, when servers run behind it, " (with clangd 19.1.7…)";
-- the plugin compares the first word's part before the "+" with its own.
-- A server of another release may send what this plugin does not understand, or miss what it
-- asks for: the plugin says so once per server version, naming both and what to do.
local M = {}

--- version is this plugin's release: the repository's file VERSION (cmd/hydra's
--- TestClientVersionsMatchVERSION keeps the two equal).
M.version = "0.1.0"

--- server is what the last server to start said of itself: { name, version, cmd } (nil before).
M.server = nil

-- warned: the server versions already warned about, so that each is said once.
local warned = {}

--- own returns Hydra's own version from serverInfo.version: its first word ("0.1.0+e627e48 (with
--- clangd 19.1.7)" → "0.1.0+e627e48").
function M.own(v)
  return (tostring(v or "")):match("^%S*")
end

--- release returns the release part of a version ("0.1.0+e627e48 (with …)" → "0.1.0").
function M.release(v)
  return M.own(v):match("^[^+]*")
end

--- mismatch returns the warning for a server of version server_version started by cmd (a list
--- of words), or nil when its release is this plugin's.
function M.mismatch(server_version, cmd)
  if M.release(server_version) == M.version then
    return nil
  end
  local where = cmd and cmd[1] and (" (" .. cmd[1] .. ")") or ""
  return ("Hydra: this plugin is version %s, but the server%s is %s: update the plugin or the server"
    .. " so that both are the same release (the server: install it again with require(\"hydra.install\")"
    .. " or `make build`; the plugin: your plugin manager's update)"):format(
    M.version, where, M.own(server_version) ~= "" and M.own(server_version) or "unknown (no serverInfo.version)")
end

--- on_init is the client's on_init(client, initialize_result): it records the server's version
--- (in M.server, :HydraLog's first line and Neovim's LSP log) and warns once when it does not match.
function M.on_init(client, result)
  local info = (result or {}).serverInfo or {}
  local cmd = client and client.config and client.config.cmd
  M.server = { name = info.name or "", version = info.version or "", cmd = cmd }
  local log = require("vim.lsp.log")
  log.info("hydra: server " .. (info.name or "?") .. " " .. (info.version or "?") .. ", plugin " .. M.version)
  local msg = M.mismatch(info.version or "", type(cmd) == "table" and cmd or nil)
  if msg and not warned[M.own(info.version)] then
    warned[M.own(info.version)] = true
    log.warn(msg)
    vim.schedule(function()
      vim.notify(msg, vim.log.levels.WARN)
    end)
  end
end

--- line is :HydraLog's first line: the server's version and the plugin's.
function M.line()
  if not M.server then
    return "plugin " .. M.version .. ", no server started yet"
  end
  local s = "server " .. (M.server.version ~= "" and M.server.version or "of unknown version")
  if type(M.server.cmd) == "table" and M.server.cmd[1] then
    s = s .. " (" .. M.server.cmd[1] .. ")"
  end
  return s .. ", plugin " .. M.version
end

return M
