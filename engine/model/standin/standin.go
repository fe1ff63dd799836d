// Package standin holds STAND-INS FOR THE MODEL SERVERS users run — vLLM, SGLang, llama.cpp's
// llama-server and Ollama — for conformance tests of Hydra's model client. None of them is a
// model: each answers from a script of replies. What each imitates is the server's wire format,
// written from that server's own source (the file and commit are named in each server's file):
// endpoints, request fields, how many tokens a streamed event carries, where usage and
// log-probabilities go and in which shape, error bodies and status codes (context exceeded,
// unknown model, loading, an error in the middle of a stream), and how it tells its context
// length and counts tokens.
//
// The stand-ins share one toy tokenizer (Tokenize), so that /tokenize, usage and the context
// checks agree with each other as a real server's do.
package standin

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hydra-lsp/hydra/engine/model/openaiserver"
)

// Kind is the server a stand-in imitates.
type Kind string

// The stand-ins.
const (
	VLLM     Kind = "vllm"
	SGLang   Kind = "sglang"
	LlamaCpp Kind = "llama.cpp"
	Ollama   Kind = "ollama"
)

// Kinds lists all four.
var Kinds = []Kind{VLLM, SGLang, LlamaCpp, Ollama}

// Reply is one scripted answer: the first reply whose PromptContains the prompt contains (and
// that has uses left) answers.
type Reply struct {
	PromptContains string
	Times          int // 0 = no limit
	Text           string
	// CutAfter closes the connection after this many tokens (0 = never).
	CutAfter int
	// ErrorAfter sends the server's in-stream error after this many tokens (0 = never).
	ErrorAfter int
}

// Config is what a stand-in serves.
type Config struct {
	// Model is the served model's name (default per kind, e.g. "Qwen/Qwen2.5-Coder-7B").
	Model string
	// ContextLen is the context length in tokens (default 32768).
	ContextLen int
	Replies    []Reply
	// LoadFor is how long the server is "loading" after Start: vLLM and SGLang refuse
	// connections (they listen only once the model is loaded), llama.cpp answers 503 "Loading
	// model", Ollama holds the first generation until the model is loaded.
	LoadFor time.Duration
	// NoLogprobs makes the Ollama stand-in behave like an Ollama from before logprobs
	// support (no "logprobs" in its answers).
	NoLogprobs bool
	// TokenDelay is waited before each streamed event (default 1 ms).
	TokenDelay time.Duration
}

// Request is one recorded completion request.
type Request struct {
	Path   string
	Body   map[string]any
	Model  string
	Prompt string // as the model received it (FIM markers included)
	Suffix string // Ollama's suffix field
	Raw    bool   // Ollama's raw field
	// PromptTokens is the prompt's tokens as this server counts them; MaxTokens the requested
	// max_tokens (num_predict), 0 when absent; Served the tokens streamed.
	PromptTokens int
	MaxTokens    int
	Served       int
	Rejected     int // the HTTP status when the request was refused, else 0
}

// Server is a running stand-in.
type Server struct {
	// URL is the API base as the user gives it: http://127.0.0.1:PORT/v1.
	URL string
	// Root is the server's root: http://127.0.0.1:PORT.
	Root string
	Kind Kind

	cfg     Config
	loaded  time.Time
	hs      *http.Server
	started chan struct{}
	stop    chan struct{}
	once    sync.Once

	mu   sync.Mutex
	used []int
	reqs []Request
	prev []string // earlier prompts, for prefix-cache figures
}

// Start starts a stand-in of kind k; it stops when t ends.
func Start(t testing.TB, k Kind, cfg Config) *Server {
	t.Helper()
	if cfg.ContextLen == 0 {
		cfg.ContextLen = 32768
	}
	if cfg.TokenDelay == 0 {
		cfg.TokenDelay = time.Millisecond
	}
	if cfg.Model == "" {
		cfg.Model = map[Kind]string{VLLM: "Qwen/Qwen2.5-Coder-7B", SGLang: "Qwen/Qwen2.5-Coder-7B",
			LlamaCpp: "qwen2.5-coder-7b-q8_0.gguf", Ollama: "qwen2.5-coder:latest"}[k]
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	s := &Server{URL: "http://" + addr + "/v1", Root: "http://" + addr, Kind: k, cfg: cfg,
		loaded: time.Now().Add(cfg.LoadFor), used: make([]int, len(cfg.Replies)), started: make(chan struct{}), stop: make(chan struct{})}
	s.hs = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	refuse := cfg.LoadFor > 0 && (k == VLLM || k == SGLang)
	if refuse {
		// Not listening while "loading": connections are refused.
		l.Close()
		go func() {
			defer close(s.started)
			t := time.NewTimer(cfg.LoadFor)
			defer t.Stop()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			l2, err := net.Listen("tcp", addr)
			if err != nil {
				return
			}
			go s.hs.Serve(l2)
		}()
	} else {
		close(s.started)
		go s.hs.Serve(l)
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.stop) })
	<-s.started
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.hs.Shutdown(ctx) != nil {
		s.hs.Close()
	}
}

// Requests returns the completion requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// ModelName is the name the server serves.
func (s *Server) ModelName() string { return s.cfg.Model }

func (s *Server) loading() bool { return time.Now().Before(s.loaded) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch s.Kind {
	case VLLM:
		s.vllm(w, r)
	case SGLang:
		s.sglang(w, r)
	case LlamaCpp:
		s.llamacpp(w, r)
	case Ollama:
		s.ollama(w, r)
	}
}

// reply picks the scripted reply for prompt (nil when none matches).
func (s *Server) reply(prompt string) *Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.cfg.Replies {
		r := &s.cfg.Replies[i]
		if strings.Contains(prompt, r.PromptContains) && (r.Times == 0 || s.used[i] < r.Times) {
			s.used[i]++
			return r
		}
	}
	return &Reply{}
}

// record appends a request and returns its index.
func (s *Server) record(q Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, q)
	return len(s.reqs) - 1
}

func (s *Server) served(i, n int) {
	s.mu.Lock()
	s.reqs[i].Served = n
	s.mu.Unlock()
}

// cached is how many leading tokens of prompt an earlier prompt shares (a prefix cache).
func (s *Server) cached(prompt string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := 0
	for _, p := range s.prev {
		n := 0
		for n < len(p) && n < len(prompt) && p[n] == prompt[n] {
			n++
		}
		best = max(best, len(Tokenize(prompt[:n])))
	}
	s.prev = append(s.prev, prompt)
	return best
}

// readBody decodes a JSON request body.
func readBody(r *http.Request) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 8<<20))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

func num(m map[string]any, k string) (int, bool) {
	switch v := m[k].(type) {
	case json.Number:
		n, err := v.Int64()
		return int(n), err == nil
	case float64:
		return int(v), true
	}
	return 0, false
}

func obj(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

func truthy(m map[string]any, k string) bool {
	v, _ := m[k].(bool)
	return v
}

// writeJSON writes v with status, as Python's and C++'s JSON writers do (no HTML escaping);
// Ollama's Go server uses its own writer (see ollama.go).
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// sse is a server-sent event stream: the shared writer of package openaiserver.
type sse = openaiserver.Stream

func startSSE(w http.ResponseWriter) *sse { return openaiserver.StartStream(w) }

// cut closes the connection under the response (a server that died mid-stream).
func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
		}
	}
}

// sleep waits d unless the request is gone.
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// Specials are the special tokens the toy tokenizer keeps whole: the fill-in-the-middle markers
// of the code models Hydra knows, and an end of text.
var Specials = []string{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<｜fim▁begin｜>", "<｜fim▁hole｜>",
	"<｜fim▁end｜>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<PRE>", "<SUF>", "<MID>", "[PREFIX]", "[SUFFIX]",
	"<|endoftext|>"}

// Tokenize is the stand-ins' toy tokenizer, about as dense as a code model's BPE on C++
// (3–4 bytes a token): special tokens whole, runs of letters, digits and underscores of at most
// 8 bytes (with one leading space, as BPE vocabularies store " word"), runs of other spaces of
// at most 8 bytes, and any other character alone.
func Tokenize(s string) []string {
	var out []string
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
	for len(s) > 0 {
		special := false
		for _, sp := range Specials {
			if strings.HasPrefix(s, sp) {
				out = append(out, sp)
				s = s[len(sp):]
				special = true
				break
			}
		}
		if special {
			continue
		}
		r, n := utf8.DecodeRuneInString(s)
		end := n
		switch {
		case r == ' ' && len(s) > 1 && word(rune(s[1])):
			end = 1
			fallthrough
		case word(r):
			for end < len(s) && end < 8 {
				r2, n2 := utf8.DecodeRuneInString(s[end:])
				if !word(r2) || end+n2 > 8 {
					break
				}
				end += n2
			}
		case r == ' ':
			for end < len(s) && end < 8 && s[end] == ' ' {
				end++
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// TokenID is a token's id in the toy vocabulary.
func TokenID(tok string) int {
	h := fnv.New32a()
	h.Write([]byte(tok))
	return int(h.Sum32() % 150000)
}

// Logprob is the toy model's log-probability of the i-th streamed token: sure of most tokens,
// unsure of every seventh.
func Logprob(i int) float64 {
	if i%7 == 6 {
		return math.Log(0.3)
	}
	return math.Log(0.95)
}

// before handles what happens before token i of a reply is sent: the client left, the
// scripted cut (the connection closes), the scripted in-stream error (sendErr writes it). It
// records the tokens served and reports false when the stream is over.
func (s *Server) before(w http.ResponseWriter, r *http.Request, idx, i int, rep *Reply, sendErr func()) bool {
	switch {
	case !sleep(r, s.cfg.TokenDelay):
	case rep.CutAfter > 0 && i == rep.CutAfter:
		cut(w)
	case rep.ErrorAfter > 0 && i == rep.ErrorAfter:
		sendErr()
	default:
		return true
	}
	s.served(idx, i)
	return false
}

// complete is the text a request gets: the reply's text, its tokens, cut at maxTokens (finish
// "length") or at the context's end (llama.cpp) and at stop strings.
func complete(rep *Reply, stops []string, maxTokens int) (toks []string, finish string) {
	text := rep.Text
	finish = "stop"
	for _, st := range stops {
		if i := strings.Index(text, st); st != "" && i >= 0 {
			text = text[:i]
		}
	}
	toks = Tokenize(text)
	if maxTokens > 0 && len(toks) > maxTokens {
		toks, finish = toks[:maxTokens], "length"
	}
	return toks, finish
}

// stops reads "stop" given as a string or a list.
func stops(v any) []string {
	switch s := v.(type) {
	case string:
		return []string{s}
	case []any:
		var out []string
		for _, x := range s {
			if t, ok := x.(string); ok {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}
