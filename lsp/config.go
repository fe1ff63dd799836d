package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"
)

// Config is the server's configuration, section "hydra" (a contract with the editor clients).
type Config struct {
	// ModelURL is the OpenAI-compatible server's base URL (fallback HYDRA_MODEL_URL).
	ModelURL string `json:"modelUrl,omitempty"`
	// Model is the model name sent with each request (fallback HYDRA_MODEL).
	Model string `json:"model,omitempty"`
	// APIKeyEnv names the environment variable that holds the API key (fallback HYDRA_API_KEY).
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// Policy names the rollback policy; "" is the engine's default.
	Policy string `json:"policy,omitempty"`
	// MaxTokens and MaxAttempts bound a search; 0 is the engine's default.
	MaxTokens   int `json:"maxTokens,omitempty"`
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// ClangFlags are added after the flags found in compile_commands.json / compile_flags.txt.
	ClangFlags []string `json:"clangFlags,omitempty"`
	// FIM is the fill-in-the-middle format the code after the insertion point is sent to the
	// model in: "" or "auto" (chosen from the model's name), "off", or a format's name
	// (model.FIMNames).
	FIM string `json:"fim,omitempty"`
	// Clangd turns the clangd front on or off (see clangd.go); nil means the client's default:
	// on for eglot, off for the others. Read at initialize only.
	Clangd *bool `json:"clangd,omitempty"`
	// ClangdPath is the clangd binary; "" means clangd-19, then clangd, on $PATH.
	ClangdPath string `json:"clangdPath,omitempty"`
	// ClangdArgs are extra arguments for clangd (for example "--log=verbose").
	ClangdArgs []string `json:"clangdArgs,omitempty"`
	// TypeScriptServer turns TypeScript's own language server behind Hydra on or off (see
	// tsserver.go); nil means the client's default, as for Clangd. Read at initialize only.
	TypeScriptServer *bool `json:"typescriptServer,omitempty"`
	// TypeScriptServerPath is that server's program; "" means TypeScript 7's tsc (the
	// checker's), run as `tsc --lsp --stdio`.
	TypeScriptServerPath string `json:"typescriptServerPath,omitempty"`
	// TypeScriptServerArgs are its arguments when TypeScriptServerPath is set (for
	// typescript-language-server: ["--stdio"]), or instead of --lsp --stdio.
	TypeScriptServerArgs []string `json:"typescriptServerArgs,omitempty"`
	// InlineMaxAttempts bounds an inline completion's search (its own small budget); 0 means
	// defaultInlineMaxAttempts.
	InlineMaxAttempts int `json:"inlineMaxAttempts,omitempty"`
	// ClientShowsSummary says the client shows hydra.generate's summary itself (from the
	// command's result): the server then sends no window/showMessage for it, so the user sees
	// it once.
	ClientShowsSummary bool `json:"clientShowsSummary,omitempty"`
	// CheckTimeout is the per-chunk time limit in seconds: a checker session that takes longer to
	// answer for one chunk fails with a timeout error (hydra check --timeout's limit). Nil means
	// the checker's default (clang.DefaultTimeout), 0 no limit. New sessions take a change.
	CheckTimeout *float64 `json:"checkTimeout,omitempty"`

	// APIKey is resolved from APIKeyEnv or HYDRA_API_KEY; it never travels in configuration.
	APIKey string `json:"-"`
}

// configPatch is one source's settings: a nil field was not given and leaves the value as is.
type configPatch struct {
	ModelURL    *string   `json:"modelUrl"`
	Model       *string   `json:"model"`
	APIKeyEnv   *string   `json:"apiKeyEnv"`
	Policy      *string   `json:"policy"`
	MaxTokens   *int      `json:"maxTokens"`
	MaxAttempts *int      `json:"maxAttempts"`
	ClangFlags  *[]string `json:"clangFlags"`
	FIM         *string   `json:"fim"`
	Clangd      *bool     `json:"clangd"`
	ClangdPath  *string   `json:"clangdPath"`
	ClangdArgs  *[]string `json:"clangdArgs"`

	TypeScriptServer     *bool     `json:"typescriptServer"`
	TypeScriptServerPath *string   `json:"typescriptServerPath"`
	TypeScriptServerArgs *[]string `json:"typescriptServerArgs"`

	InlineMaxAttempts  *int     `json:"inlineMaxAttempts"`
	ClientShowsSummary *bool    `json:"clientShowsSummary"`
	CheckTimeout       *float64 `json:"checkTimeout"`
}

// maxCheckTimeout bounds the checkTimeout setting (0 is the way to say "no limit").
const maxCheckTimeout = 24 * time.Hour

// checkTimeout is the per-chunk limit the setting asks for (0: none), and whether it was given.
func (c Config) checkTimeout() (time.Duration, bool) {
	if c.CheckTimeout == nil {
		return 0, false
	}
	if *c.CheckTimeout == 0 {
		return -1, true
	}
	return time.Duration(*c.CheckTimeout * float64(time.Second)), true
}

// applyCheckTimeout hands the checkTimeout setting to the checker (one that takes it: the
// Clang checker's SetTimeout), for the sessions it starts from now on.
func (s *Server) applyCheckTimeout() {
	t, ok := s.cfg.get().checkTimeout()
	if !ok {
		return
	}
	if c, ok := s.opts.Checker.(interface{ SetTimeout(time.Duration) }); ok {
		c.SetTimeout(t)
	}
}

// configSource names where settings came from (for logs and tests).
type configSource string

const (
	sourceInitOptions   configSource = "initializationOptions"
	sourceDidChange     configSource = "workspace/didChangeConfiguration"
	sourceConfiguration configSource = "workspace/configuration"
)

// parseConfigPatch reads settings given as {"hydra": {...}} or flat {...}. null or {} is an
// empty patch; anything else that is not an object is an error.
func parseConfigPatch(raw json.RawMessage) (configPatch, error) {
	var p configPatch
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return p, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return p, fmt.Errorf("settings are not an object: %w", err)
	}
	if sec, ok := obj["hydra"]; ok {
		raw = sec
		if string(bytes.TrimSpace(raw)) == "null" {
			return p, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("hydra settings: %w", err)
	}
	return p, nil
}

// apply overlays the given fields on c.
func (p configPatch) apply(c *Config) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&c.ModelURL, p.ModelURL)
	set(&c.Model, p.Model)
	set(&c.APIKeyEnv, p.APIKeyEnv)
	set(&c.Policy, p.Policy)
	if p.MaxTokens != nil {
		c.MaxTokens = *p.MaxTokens
	}
	if p.MaxAttempts != nil {
		c.MaxAttempts = *p.MaxAttempts
	}
	if p.ClangFlags != nil {
		c.ClangFlags = append([]string(nil), (*p.ClangFlags)...)
	}
	if p.Clangd != nil {
		on := *p.Clangd
		c.Clangd = &on
	}
	set(&c.ClangdPath, p.ClangdPath)
	set(&c.FIM, p.FIM)
	if p.ClangdArgs != nil {
		c.ClangdArgs = append([]string(nil), (*p.ClangdArgs)...)
	}
	if p.TypeScriptServer != nil {
		on := *p.TypeScriptServer
		c.TypeScriptServer = &on
	}
	set(&c.TypeScriptServerPath, p.TypeScriptServerPath)
	if p.TypeScriptServerArgs != nil {
		c.TypeScriptServerArgs = append([]string(nil), (*p.TypeScriptServerArgs)...)
	}
	if p.InlineMaxAttempts != nil {
		c.InlineMaxAttempts = *p.InlineMaxAttempts
	}
	if p.ClientShowsSummary != nil {
		c.ClientShowsSummary = *p.ClientShowsSummary
	}
	if p.CheckTimeout != nil {
		v := *p.CheckTimeout
		c.CheckTimeout = &v
	}
}

// configStore holds the configuration as its sources set it. Later settings win field by
// field: initializationOptions first, then each didChangeConfiguration and each
// workspace/configuration answer in the order they arrive. Environment variables fill only
// what no source set.
type configStore struct {
	getenv func(string) string

	mu  sync.Mutex
	cfg Config
	// from records which source set each field last (for the log and tests).
	from map[string]configSource
	// pulls counts workspace/configuration requests in flight; idle is closed when it is 0.
	pulls int
	idle  chan struct{}
}

// pullStarted and pullDone bracket a workspace/configuration request.
func (s *configStore) pullStarted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pulls == 0 {
		s.idle = make(chan struct{})
	}
	s.pulls++
}

func (s *configStore) pullDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls--
	if s.pulls == 0 {
		close(s.idle)
	}
}

// settled waits (up to timeout) until no workspace/configuration request is in flight, so
// that a generation started right after a configuration change uses the new settings.
func (s *configStore) settled(ctx context.Context, timeout time.Duration) {
	s.mu.Lock()
	if s.pulls == 0 {
		s.mu.Unlock()
		return
	}
	idle := s.idle
	s.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}

func newConfigStore(getenv func(string) string) *configStore {
	return &configStore{getenv: getenv, from: map[string]configSource{}}
}

// apply overlays raw settings from a source.
func (s *configStore) apply(src configSource, raw json.RawMessage) error {
	p, err := parseConfigPatch(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if t := p.CheckTimeout; t != nil && (*t < 0 || math.IsNaN(*t) || *t > maxCheckTimeout.Seconds()) {
		return fmt.Errorf("%s: hydra.checkTimeout %v: want seconds from 0 (no limit) to %v", src, *t, maxCheckTimeout.Seconds())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.apply(&s.cfg)
	mark := func(name string, set bool) {
		if set {
			s.from[name] = src
		}
	}
	mark("modelUrl", p.ModelURL != nil)
	mark("model", p.Model != nil)
	mark("apiKeyEnv", p.APIKeyEnv != nil)
	mark("policy", p.Policy != nil)
	mark("maxTokens", p.MaxTokens != nil)
	mark("maxAttempts", p.MaxAttempts != nil)
	mark("clangFlags", p.ClangFlags != nil)
	mark("clangd", p.Clangd != nil)
	mark("clangdPath", p.ClangdPath != nil)
	mark("clangdArgs", p.ClangdArgs != nil)
	mark("typescriptServer", p.TypeScriptServer != nil)
	mark("typescriptServerPath", p.TypeScriptServerPath != nil)
	mark("typescriptServerArgs", p.TypeScriptServerArgs != nil)
	mark("fim", p.FIM != nil)
	mark("inlineMaxAttempts", p.InlineMaxAttempts != nil)
	mark("clientShowsSummary", p.ClientShowsSummary != nil)
	mark("checkTimeout", p.CheckTimeout != nil)
	return nil
}

// get returns the effective configuration: the sources' settings, then the environment
// fallbacks, with the API key resolved.
func (s *configStore) get() Config {
	s.mu.Lock()
	c := s.cfg
	c.ClangFlags = append([]string(nil), s.cfg.ClangFlags...)
	s.mu.Unlock()
	if c.ModelURL == "" {
		c.ModelURL = s.getenv("HYDRA_MODEL_URL")
	}
	if c.Model == "" {
		c.Model = s.getenv("HYDRA_MODEL")
	}
	if c.APIKeyEnv != "" {
		c.APIKey = s.getenv(c.APIKeyEnv)
	}
	if c.APIKey == "" {
		c.APIKey = s.getenv("HYDRA_API_KEY")
	}
	return c
}

// source says which source last set a field ("" if none did).
func (s *configStore) source(field string) configSource {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.from[field]
}

// didChangeConfiguration overlays settings pushed by the client (if any) and pulls the
// section again, as clients that only signal a change expect.
func (s *Server) didChangeConfiguration(_ context.Context, params json.RawMessage) error {
	var p DidChangeConfigurationParams
	if err := decodeParams("workspace/didChangeConfiguration", params, &p); err != nil {
		return err
	}
	if err := s.cfg.apply(sourceDidChange, p.Settings); err != nil {
		s.showMessage(MessageWarning, "hydra: ignoring configuration: "+err.Error())
	}
	s.applyCheckTimeout()
	s.goPullConfig()
	s.flagsChanged() // clangFlags may have changed: re-warm with the new flags
	return nil
}

// goPullConfig asks the client for the section "hydra" with workspace/configuration, when the
// client serves it, on a goroutine of its own (the read loop must stay free for the answer).
func (s *Server) goPullConfig() {
	s.mu.Lock()
	ok := s.caps.Workspace.Configuration
	s.mu.Unlock()
	if !ok {
		return
	}
	s.wg.Add(1)
	s.cfg.pullStarted()
	go func() {
		defer s.wg.Done()
		defer s.cfg.pullDone()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var res []json.RawMessage
		err := s.conn.Call(ctx, "workspace/configuration", ConfigurationParams{Items: []ConfigurationItem{{Section: "hydra"}}}, &res)
		if err != nil {
			s.logf("workspace/configuration: %v", err)
			return
		}
		if len(res) == 0 {
			return
		}
		if err := s.cfg.apply(sourceConfiguration, res[0]); err != nil {
			s.logf("%v", err)
			return
		}
		s.applyCheckTimeout()
		s.flagsChanged()
	}()
}
