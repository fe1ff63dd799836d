package lsp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

// clangd behind Hydra, for C/C++ documents (backend.go runs it). Compile flags need nothing:
// Hydra finds compile_commands.json and compile_flags.txt as clangd does (compile_flags.go), so
// both read the same database.

// clangdSpec says how clangd runs behind Hydra, or nil when the client does not want it (the
// `clangd` setting, on by default for eglot). clangdPath names the binary, else clangd-19, then
// clangd, on $PATH.
func (s *Server) clangdSpec(cfg Config, p InitializeParams, raw json.RawMessage) (*backendSpec, error) {
	if !clangdWanted(cfg, p) {
		return nil, nil
	}
	spec := &backendSpec{name: "clangd", lang: lang.C, args: clangdArgs(cfg.ClangdArgs)}
	path, _, err := findServer(cfg.ClangdPath, lang.C)
	if err != nil {
		if cfg.ClangdPath != "" {
			return spec, &settingError{"clangdPath", err}
		}
		return spec, fmt.Errorf("%w (set clangdPath)", err)
	}
	spec.path = path
	spec.initParams, err = clangdInitParams(raw, s.enc, cfg.ClangFlags)
	return spec, err
}

// settingError is a setting that names a program Hydra cannot run.
type settingError struct {
	setting string
	err     error
}

func (e *settingError) Error() string { return e.setting + " " + e.err.Error() }
func (e *settingError) Unwrap() error { return e.err }

// clangdWanted says whether the client wants clangd behind Hydra: the `clangd` setting, or by
// default for eglot (the client that runs one server per major mode).
func clangdWanted(cfg Config, p InitializeParams) bool { return serverWanted(cfg.Clangd, p) }

// clangdArgs are the arguments clangd runs with: quiet logs unless the user chose a level.
func clangdArgs(user []string) []string {
	for _, a := range user {
		if strings.HasPrefix(a, "--log") || strings.HasPrefix(a, "-log") {
			return user
		}
	}
	return append([]string{"--log=error"}, user...)
}

// clangdInitParams rewrites the client's initialize params for clangd (backendInitParams: the one
// position encoding Hydra chose, which clangd takes as the first one it supports,
// ClangdLSPServer::onInitialize; no processId), with Hydra's clangFlags as clangd's
// fallbackFlags for files no compilation database covers.
func clangdInitParams(raw json.RawMessage, enc posEncoding, clangFlags []string) (json.RawMessage, error) {
	p, err := backendInitParams(raw, enc)
	if err != nil {
		return nil, err
	}
	if len(clangFlags) > 0 {
		opts, _ := p["initializationOptions"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
			p["initializationOptions"] = opts
		}
		if _, ok := opts["fallbackFlags"]; !ok {
			opts["fallbackFlags"] = clangFlags
		}
	}
	return json.Marshal(p)
}
