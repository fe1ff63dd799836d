-- Hydra LSP for Neovim 0.11 and later, in the shape of nvim-lspconfig's lsp/*.lua: with this
-- plugin's directory (editors/nvim) on 'runtimepath',
--
--   vim.lsp.config("hydra", { settings = { hydra = { modelUrl = "http://127.0.0.1:8000/v1" } } })
--   vim.lsp.enable("hydra")
--
-- starts `hydra lsp` for C, C++ and TypeScript (.ts, .tsx) buffers. The plugin's commands (:HydraGenerate…), progress and
-- ghost text come with it (require("hydra").prepare() runs here; call it yourself first to pass
-- options). Use this or require("hydra").setup(), not both: each starts a client.
local hydra = require("hydra")
if not hydra.prepared then
  hydra.prepare()
end

-- section is the "hydra" configuration section the server is sent: the settings given to
-- vim.lsp.config, else the plugin's, and clientShowsSummary (the plugin reports a generation's
-- end itself).
local function section(config)
  local given = (config.settings or {}).hydra
  if given == nil or next(given) == nil then
    given = hydra.config.settings or {}
  end
  return vim.tbl_extend("keep", vim.deepcopy(given), { clientShowsSummary = true })
end

---@type vim.lsp.Config
return {
  cmd = require("hydra.install").cmd(),
  filetypes = { "c", "cpp", "typescript", "typescriptreact" },
  root_markers = { "compile_commands.json", "compile_flags.txt", "tsconfig.json", ".git" },
  settings = { hydra = {} },
  handlers = hydra.handlers,
  before_init = function(params, config)
    params.initializationOptions = { hydra = section(config) }
  end,
  on_init = function(client, result)
    hydra.on_init(client, result)
    -- workspace/configuration is answered from client.settings.
    client.settings = vim.tbl_extend("force", client.settings or {}, { hydra = section(client.config or client) })
  end,
  on_attach = hydra.on_attach,
}
