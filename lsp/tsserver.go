package lsp

import (
	"encoding/json"
	"path/filepath"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

// TypeScript's own language server behind Hydra, for TypeScript documents (backend.go runs it),
// as clangd is for C/C++: by default TypeScript 7's compiler in its LSP mode (`tsc --lsp
// --stdio`, the binary the TypeScript checker runs: lang.TypeScript.LanguageServer);
// typescriptServerPath names another one (typescript-language-server, with typescriptServerArgs
// ["--stdio"]).

// typeScriptSpec says how TypeScript's server runs behind Hydra, or nil when the client does not
// want it (the `typescriptServer` setting, on by default for eglot). A default that finds no
// compiler is only logged: a C/C++ user of eglot has no TypeScript to be told about.
func (s *Server) typeScriptSpec(cfg Config, p InitializeParams, raw json.RawMessage) (*backendSpec, error) {
	if !serverWanted(cfg.TypeScriptServer, p) {
		return nil, nil
	}
	spec := &backendSpec{name: "tsc", lang: lang.TypeScript, quiet: cfg.TypeScriptServer == nil && cfg.TypeScriptServerPath == ""}
	path, args, err := findServer(cfg.TypeScriptServerPath, lang.TypeScript)
	if err != nil {
		if cfg.TypeScriptServerPath != "" {
			return spec, &settingError{"typescriptServerPath", err}
		}
		return spec, err
	}
	spec.path = path
	spec.args = args
	if cfg.TypeScriptServerPath != "" {
		spec.name = filepath.Base(path)
	}
	if cfg.TypeScriptServerPath != "" || cfg.TypeScriptServerArgs != nil {
		spec.args = cfg.TypeScriptServerArgs
	}
	ps, err := backendInitParams(raw, s.enc)
	if err != nil {
		return spec, err
	}
	spec.initParams, err = json.Marshal(ps)
	return spec, err
}
