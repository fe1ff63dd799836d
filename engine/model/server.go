package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind names the server software behind a URL, as far as Hydra can tell.
type Kind string

// Server kinds.
const (
	KindUnknown  Kind = ""
	KindVLLM     Kind = "vllm"
	KindSGLang   Kind = "sglang"
	KindLlamaCpp Kind = "llama.cpp"
	KindOllama   Kind = "ollama"
)

// ModelInfo is one model a server serves.
type ModelInfo struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by,omitempty"`
	// ContextLen is the model's context length in tokens where the server says it
	// (max_model_len of vLLM and SGLang, n_ctx of llama.cpp, context_length of a loaded Ollama
	// model); 0 when unknown.
	ContextLen int `json:"context_length,omitempty"`
}

// ServerInfo is what Hydra learns about a model server on first use.
type ServerInfo struct {
	Kind   Kind        `json:"kind"`
	Models []ModelInfo `json:"models"`
	// ContextLen is the server's context length when one applies to every model (llama.cpp's
	// n_ctx per slot); 0 when unknown or per model.
	ContextLen int `json:"context_length,omitempty"`
}

// Model returns the info of the model named id, or nil.
func (si *ServerInfo) Model(id string) *ModelInfo {
	for i := range si.Models {
		if si.Models[i].ID == id {
			return &si.Models[i]
		}
	}
	return nil
}

// IDs lists the served model names.
func (si *ServerInfo) IDs() []string {
	ids := make([]string, len(si.Models))
	for i, m := range si.Models {
		ids[i] = m.ID
	}
	return ids
}

// root is the server's root URL: the API base without its /v1 (llama.cpp's /props and
// /tokenize, vLLM's /tokenize and Ollama's /api live there).
func (c *Client) root() string {
	return strings.TrimSuffix(c.base, "/v1")
}

// getJSON fetches url into out. status is the HTTP status (0 when there was no response).
func (c *Client) getJSON(ctx context.Context, method, url string, in, out any) (status int, body []byte, err error) {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	rctx, cancel := context.WithTimeout(ctx, c.timeouts.FirstToken)
	defer cancel()
	hreq, err := http.NewRequestWithContext(rctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if in != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if c.keyEnv != "" {
		if key := os.Getenv(c.keyEnv); key != "" {
			hreq.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, body, err
	}
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, body, fmt.Errorf("%s %s: %w", method, url, err)
		}
	}
	return resp.StatusCode, body, nil
}

// loadingError is a server that is not up yet: connection refused, or 503 while it loads the
// model (llama.cpp's "Loading model").
type loadingError struct{ reason string }

func (e *loadingError) Error() string { return e.reason }

// Server learns, once per Client, which server answers at the URL, what it serves and its
// context length (waiting for a server that is still loading, like Complete). Failures to learn
// anything besides "not up" are not errors: the result then has KindUnknown and what could be
// read. (A Client lives for one generation in the language server, so a server restarted with
// another model on the same port is seen afresh.)
func (c *Client) Server(ctx context.Context) (*ServerInfo, error) {
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	if c.info != nil {
		return c.info, nil
	}
	var info *ServerInfo
	err := c.waitLoading(ctx, func() error {
		var err error
		info, err = c.probe(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.info = info
	return info, nil
}

// probe asks the server what it is:
//   - GET {base}/models: the model list; owned_by "vllm" (vllm/entrypoints/openai/
//     serving_models.py), "sglang" (python/sglang/srt/entrypoints/openai/serving_models.py)
//     or "llamacpp" (tools/server/server-context.cpp) names the server, and max_model_len the
//     context length of vLLM and SGLang;
//   - GET {root}/props: llama.cpp's default_generation_settings.n_ctx (context per slot);
//   - GET {root}/api/version: Ollama (server/routes.go), whose models are in /api/tags.
func (c *Client) probe(ctx context.Context) (*ServerInfo, error) {
	info := &ServerInfo{}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	st, body, err := c.getJSON(ctx, http.MethodGet, c.base+"/models", nil, &list)
	if err != nil && st == 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &loadingError{reason: connReason(err)}
	}
	if st == http.StatusServiceUnavailable {
		return nil, &loadingError{reason: "HTTP 503: " + clip(errorMessage(body))}
	}
	for _, d := range list.Data {
		info.Models = append(info.Models, ModelInfo{ID: d.ID, OwnedBy: d.OwnedBy, ContextLen: d.MaxModelLen})
		switch strings.ToLower(d.OwnedBy) {
		case "vllm":
			info.Kind = KindVLLM
		case "sglang":
			info.Kind = KindSGLang
		case "llamacpp", "llama.cpp":
			info.Kind = KindLlamaCpp
		}
	}
	if info.Kind == KindUnknown || info.Kind == KindLlamaCpp {
		var props struct {
			Settings *struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
			NCtx int `json:"n_ctx"`
		}
		st, body, _ := c.getJSON(ctx, http.MethodGet, c.root()+"/props", nil, &props)
		switch {
		case st == http.StatusServiceUnavailable:
			return nil, &loadingError{reason: "HTTP 503: " + clip(errorMessage(body))}
		case st == http.StatusOK && props.Settings != nil:
			info.Kind = KindLlamaCpp
			info.ContextLen = props.Settings.NCtx
			if info.ContextLen == 0 {
				info.ContextLen = props.NCtx
			}
		}
	}
	if info.Kind == KindUnknown {
		var v struct {
			Version string `json:"version"`
		}
		var tags struct {
			Models *[]struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		st, _, _ := c.getJSON(ctx, http.MethodGet, c.root()+"/api/version", nil, &v)
		if tst, _, _ := c.getJSON(ctx, http.MethodGet, c.root()+"/api/tags", nil, &tags); tst == http.StatusOK && tags.Models != nil {
			info.Kind = KindOllama
			info.Models = info.Models[:0]
			for _, m := range *tags.Models {
				info.Models = append(info.Models, ModelInfo{ID: m.Name, OwnedBy: "ollama"})
			}
		} else if st == http.StatusOK && v.Version != "" {
			info.Kind = KindOllama
		} else if len(info.Models) > 0 && info.Models[0].OwnedBy == "library" {
			// Ollama's /v1/models names a model's namespace as its owner ("library" for the
			// official tags: middleware/openai.go, ListWriter).
			info.Kind = KindOllama
		}
	}
	return info, nil
}

// ollamaEntry is what ollamaContext learned about a model (Client.ollamaCtx).
type ollamaEntry struct {
	ctxLen int
	insert bool
}

// ollamaDefaultCtx is Ollama's default context when neither the model's parameters nor a
// loaded runner say otherwise: the smallest of its VRAM-based defaults (server/routes.go,
// defaultNumCtx).
const ollamaDefaultCtx = 4096

var reNumCtx = regexp.MustCompile(`(?m)^num_ctx\s+(\d+)`)

// ollamaContext is the context an Ollama model runs with: context_length of a loaded runner
// (GET /api/ps), else num_ctx in its parameters (POST /api/show), else Ollama's default, never
// more than the model's own context_length. insert tells whether the model's template takes a
// suffix (capability "insert").
func (c *Client) ollamaContext(ctx context.Context, name string) (ctxLen int, insert bool) {
	if v, ok := c.ollamaCtx.Load(name); ok {
		e := v.(ollamaEntry)
		return e.ctxLen, e.insert
	}
	defer func() { c.ollamaCtx.Store(name, ollamaEntry{ctxLen: ctxLen, insert: insert}) }()
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if st, _, _ := c.getJSON(ctx, http.MethodGet, c.root()+"/api/ps", nil, &ps); st == http.StatusOK {
		for _, m := range ps.Models {
			if (m.Name == name || m.Model == name || strings.TrimSuffix(m.Name, ":latest") == name) && m.ContextLength > 0 {
				ctxLen = m.ContextLength
			}
		}
	}
	var show struct {
		Parameters   string         `json:"parameters"`
		ModelInfo    map[string]any `json:"model_info"`
		Capabilities []string       `json:"capabilities"`
	}
	trained := 0
	if st, _, _ := c.getJSON(ctx, http.MethodPost, c.root()+"/api/show", map[string]string{"model": name, "name": name}, &show); st == http.StatusOK {
		if ctxLen == 0 {
			if m := reNumCtx.FindStringSubmatch(show.Parameters); m != nil {
				ctxLen, _ = strconv.Atoi(m[1])
			}
		}
		for k, v := range show.ModelInfo {
			if strings.HasSuffix(k, ".context_length") {
				if f, ok := v.(float64); ok {
					trained = int(f)
				}
			}
		}
		for _, cp := range show.Capabilities {
			if cp == "insert" {
				insert = true
			}
		}
	}
	if ctxLen == 0 {
		ctxLen = ollamaDefaultCtx
	}
	if trained > 0 {
		ctxLen = min(ctxLen, trained)
	}
	return ctxLen, insert
}

// tokenize counts prompt's tokens with the server's own tokenizer: POST {root}/tokenize of
// vLLM (vllm/entrypoints/serve/tokenize: {"model","prompt"} → {"count", "tokens"}), SGLang
// (the same shape) and llama.cpp (tools/server: {"content","add_special"} → {"tokens"}).
// ok is false when the server has no such endpoint or it failed.
func (c *Client) tokenize(ctx context.Context, kind Kind, modelName, prompt string) (int, bool) {
	var in any
	switch kind {
	case KindVLLM, KindSGLang:
		in = map[string]any{"model": modelName, "prompt": prompt}
	case KindLlamaCpp:
		in = map[string]any{"content": prompt, "add_special": true}
	default:
		return 0, false
	}
	var out struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// vLLM and llama.cpp serve /tokenize at the root; SGLang has it under /v1 as well.
	urls := []string{c.root() + "/tokenize"}
	if kind == KindSGLang {
		urls = append(urls, c.base+"/tokenize")
	}
	st := 0
	for _, u := range urls {
		var err error
		if st, _, err = c.getJSON(tctx, http.MethodPost, u, in, &out); err == nil && st == http.StatusOK {
			break
		}
	}
	if st != http.StatusOK {
		return 0, false
	}
	if out.Count != nil {
		return *out.Count, true
	}
	return len(out.Tokens), true
}

// ListModels lists what the model server at baseURL serves, with each model's context length
// where the server says it (for `hydra models` and for tools that record the model a
// measurement ran against).
func ListModels(ctx context.Context, baseURL string, opts ...Option) (*ServerInfo, error) {
	c, err := NewClient(baseURL, opts...)
	if err != nil {
		return nil, err
	}
	info, err := c.Server(ctx)
	if err != nil {
		return nil, err
	}
	if info.Kind == KindOllama {
		for i := range info.Models {
			info.Models[i].ContextLen, _ = c.ollamaContext(ctx, info.Models[i].ID)
		}
	}
	if info.ContextLen > 0 {
		for i := range info.Models {
			if info.Models[i].ContextLen == 0 {
				info.Models[i].ContextLen = info.ContextLen
			}
		}
	}
	sort.SliceStable(info.Models, func(i, j int) bool { return info.Models[i].ID < info.Models[j].ID })
	return info, nil
}

// errNoModel is returned when no model is named and the server serves several (or none).
var errNoModel = errors.New("no model named")

// pickModel is the model a request goes to: the one named, or the only one the server serves.
func (c *Client) pickModel(info *ServerInfo, name string) (string, error) {
	if name != "" {
		return name, nil
	}
	switch len(info.Models) {
	case 1:
		return info.Models[0].ID, nil
	case 0:
		if info.Kind == KindOllama {
			return "", fmt.Errorf("model server %s: %w, and Ollama serves none: run `ollama pull qwen2.5-coder` first", c.shown, errNoModel)
		}
		return "", nil
	}
	if info.Kind == KindOllama {
		return "", fmt.Errorf("model server %s: %w and it serves %d models: choose one with --model (or the model setting): %s",
			c.shown, errNoModel, len(info.Models), strings.Join(info.IDs(), ", "))
	}
	return "", nil // vLLM, SGLang and llama.cpp fall back to their first model themselves
}
