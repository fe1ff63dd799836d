-- The README's lazy.nvim spec for the plugin, as written (the first ```lua block under
-- "### Neovim"): the terminal tests (tui.lua) and the install test (init.lua, case "lazy") load
-- it and do lazy.nvim's part themselves: build(plugin) where lazy.nvim builds, config(plugin)
-- where it loads the plugin; plugin.dir is the repository, as lazy.nvim's clone of it.
--
--   local spec, plugin = dofile(".../readme_spec.lua")(model_url)
--
-- Only the model's URL is replaced.
return function(model_url)
  local this = debug.getinfo(1, "S").source:sub(2)
  local root = vim.fn.fnamemodify(this, ":p:h:h:h:h")
  local readme = table.concat(vim.fn.readfile(root .. "/README.md"), "\n")
  local section = readme:find("\n### Neovim", 1, true)
  local start = readme:find("```lua\n", section, true)
  local finish = readme:find("\n```", start + 7, true)
  local snippet = readme:sub(start + 7, finish)
  local url = '"http://127.0.0.1:8000/v1"'
  local i = snippet:find(url, 1, true)
  assert(i, "the README's Neovim snippet no longer has " .. url)
  snippet = snippet:sub(1, i - 1) .. string.format("%q", model_url) .. snippet:sub(i + #url)
  local spec = assert(loadstring("return " .. snippet, "README.md"))()
  return spec, { name = "hydra", dir = root }
end
