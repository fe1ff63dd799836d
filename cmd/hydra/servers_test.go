package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/engine/model/standin"
)

// These tests run `hydra generate` and `hydra models` in-process, with the real Clang checker,
// against the stand-ins of vLLM, SGLang, llama.cpp and Ollama (engine/model/standin: each
// answers from a script, no model runs, in that server's wire format).

// longWords is examples/long_words: the prompt, the accepted program, and the script whose
// first attempt declares std::vector<int> where strings go (the root cause two lines before the
// error Clang reports).
func longWords(t *testing.T) (prompt, expected string, replies []standin.Reply) {
	t.Helper()
	p, err := os.ReadFile("../../examples/long_words.cpp")
	if err != nil {
		t.Fatal(err)
	}
	e, err := os.ReadFile("../../examples/long_words.expected.cpp")
	if err != nil {
		t.Fatal(err)
	}
	script, err := modeltest.LoadScript("../../examples/long_words.script.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range script.Rules {
		// The script's last rule matches the first prompt by its end; every prompt ends so.
		replies = append(replies, standin.Reply{PromptContains: r.PromptContains, Text: r.Text})
	}
	return string(p), string(e), replies
}

type genJSON struct {
	Text  string       `json:"text"`
	OK    bool         `json:"ok"`
	Stats engine.Stats `json:"stats"`
	Notes []string     `json:"notes"`
	Trace engine.Trace `json:"trace"`
	// Preexisting: the errors the file had before (with --suffix).
	Preexisting []struct {
		Line int    `json:"line"`
		Diag string `json:"diag"`
	} `json:"preexisting"`
}

func runGenJSON(t *testing.T, args ...string) (genJSON, string) {
	t.Helper()
	code, out, errs := runGen(t, args...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errs)
	}
	var got genJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	return got, errs
}

func TestGenerateRepairsAgainstEachServerWithA4096Context(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	prompt, expected, replies := longWords(t)
	file := filepath.Join(t.TempDir(), "long_words.cpp")
	if err := os.WriteFile(file, []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range standin.Kinds {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{ContextLen: 4096, Replies: replies})
			// No --model: the server serves one, and it is used. The default max tokens
			// (4096 a rollout) must fit the 4096-token context.
			got, errs := runGenJSON(t, "--model-url", srv.URL, "--json", file)
			if !got.OK || got.Text != expected {
				t.Fatalf("not the expected program (ok %v):\n%s\nstderr:\n%s", got.OK, got.Text, errs)
			}
			if got.Stats.Rollbacks == 0 || got.Stats.Attempts < 2 {
				t.Errorf("stats %+v: want a repair by rollback", got.Stats)
			}
			// The tokens reported are the server's: every request's prompt as the server
			// counted it, estimated (and marked) only where Ollama gives no count.
			want := 0
			for _, q := range srv.Requests() {
				if q.Rejected != 0 {
					t.Errorf("request refused with %d: %s", q.Rejected, q.Path)
				}
				if q.PromptTokens+q.MaxTokens > 4096 {
					t.Errorf("request for %d tokens after a %d-token prompt overflows 4096", q.MaxTokens, q.PromptTokens)
				}
				want += q.PromptTokens
			}
			// The prefix cache: later attempts share the prompt's start with earlier ones; every
			// server but Ollama reports the cached part.
			if (k == standin.Ollama) != (got.Stats.CachedPromptTokens == 0) {
				t.Errorf("cached prompt tokens %d", got.Stats.CachedPromptTokens)
			}
			switch k {
			case standin.VLLM, standin.SGLang:
				// Continuous usage: the server's figure even for killed rollouts.
				if got.Stats.PromptTokens != want || got.Stats.PromptTokensEstimated != 0 {
					t.Errorf("prompt tokens %d (estimated %d), the server counted %d", got.Stats.PromptTokens, got.Stats.PromptTokensEstimated, want)
				}
			case standin.LlamaCpp:
				// Killed rollouts never see the last event's usage: counted with the server's
				// /tokenize, so equal, and marked as not reported.
				if got.Stats.PromptTokens != want {
					t.Errorf("prompt tokens %d (estimated %d), the server counted %d", got.Stats.PromptTokens, got.Stats.PromptTokensEstimated, want)
				}
			default:
				if got.Stats.PromptTokens-got.Stats.PromptTokensEstimated > want {
					t.Errorf("prompt tokens %d, of which %d estimated; the server counted %d", got.Stats.PromptTokens, got.Stats.PromptTokensEstimated, want)
				}
			}
		})
	}
}

func TestGeneratePromptTooLongForTheContext(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	var b strings.Builder
	b.WriteString("#include <cstdio>\n\n")
	for i := range 120 {
		fmt.Fprintf(&b, "static int helper_%d(int x) { return x + %d; }\n", i, i)
	}
	b.WriteString("\nint main() {\n")
	prompt := b.String()
	body := "  std::printf(\"%d\\n\", helper_3(4));\n  return 0;\n}\n"
	file := filepath.Join(t.TempDir(), "long.cpp")
	if err := os.WriteFile(file, []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range standin.Kinds {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{ContextLen: 1024, Replies: []standin.Reply{{Text: body}}})
			got, errs := runGenJSON(t, "--model-url", srv.URL, "--json", file)
			// The checker saw the whole document: helper_3 is declared in the part the model
			// never saw.
			if !got.OK || got.Text != prompt+body {
				t.Fatalf("ok %v, text:\n%s\nstderr:\n%s", got.OK, got.Text, errs)
			}
			q := srv.Requests()[0]
			if len(q.Prompt) >= len(prompt) {
				t.Errorf("the model got the whole %d-byte prompt", len(prompt))
			}
			if notes := strings.Join(got.Notes, "\n"); !strings.Contains(notes, "did not fit") {
				t.Errorf("notes %q: want the cut said", notes)
			}
		})
	}
}

func TestGenerateFillInTheMiddleAndLengthLimit(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	dir := t.TempDir()
	prefix := "#include <cstdio>\n\nint twice(int x) {\n"
	suffix := "\nint main() { return twice(2) == 4 ? 0 : 1; }\n"
	body := "  return 2 * x;\n}\n"
	pf, sf := filepath.Join(dir, "t.cpp"), filepath.Join(dir, "t.suffix")
	os.WriteFile(pf, []byte(prefix), 0o644)
	os.WriteFile(sf, []byte(suffix), 0o644)
	for _, k := range standin.Kinds {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{Replies: []standin.Reply{{Text: body}}})
			got, errs := runGenJSON(t, "--model-url", srv.URL, "--json", "--suffix", sf, pf)
			if !got.OK || got.Text != prefix+body+suffix {
				t.Fatalf("ok %v text %q\nstderr:\n%s", got.OK, got.Text, errs)
			}
			want := "<|fim_prefix|>" + prefix + "<|fim_suffix|>" + suffix + "<|fim_middle|>"
			if q := srv.Requests()[0]; q.Prompt != want {
				t.Errorf("the model got %q, want %q", q.Prompt, want)
			}
		})
	}
	t.Run("length limit", func(t *testing.T) {
		long := strings.Repeat("  x = x + 1;\n", 40) + "  return x;\n}\n"
		// A 256-token context leaves about 200 tokens for the answer: the server stops it.
		srv := standin.Start(t, standin.VLLM, standin.Config{ContextLen: 256, Replies: []standin.Reply{{Text: long}}})
		code, out, errs := runGen(t, "--model-url", srv.URL, "--json", "--fim", "off", "--max-attempts", "2", "--suffix", sf, pf)
		var got genJSON
		json.Unmarshal([]byte(out), &got)
		if code != 1 || got.OK {
			t.Fatalf("exit %d ok %v: a program cut by the length limit must not be accepted; stderr:\n%s", code, got.OK, errs)
		}
		if !strings.Contains(errs, "length limit") || len(got.Trace.Rollouts) == 0 || got.Trace.Rollouts[0].FinishReason != "length" {
			t.Errorf("want the length limit said and recorded; stderr:\n%s\nrollouts %+v", errs, got.Trace.Rollouts)
		}
	})
}

func TestGenerateNamesAWrongURL(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	file := writePrompt(t)
	srv := standin.Start(t, standin.LlamaCpp, standin.Config{Replies: []standin.Reply{{Text: genGood}}})
	code, _, errs := runGen(t, "--model-url", srv.Root, file)
	if code != 2 || !strings.Contains(errs, "did you mean "+srv.Root+"/v1 ?") {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and the likely fix", code, errs)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want the run to end on the first", n)
	}
}

func TestModelsCommand(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	for _, k := range standin.Kinds {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{ContextLen: 8192})
			var out, errb strings.Builder
			if code := models([]string{"--model-url", srv.URL}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if want := srv.ModelName() + "\t8192\n"; out.String() != want {
				t.Errorf("stdout %q, want %q", out.String(), want)
			}
			if !strings.Contains(errb.String(), string(k)) {
				t.Errorf("stderr %q does not name %s", errb.String(), k)
			}
		})
	}
}

func TestGenerateWaitsForALoadingServer(t *testing.T) {
	t.Setenv("HYDRA_API_KEY", "")
	file := writePrompt(t)
	for _, k := range []standin.Kind{standin.VLLM, standin.SGLang, standin.LlamaCpp} {
		t.Run(string(k), func(t *testing.T) {
			srv := standin.Start(t, k, standin.Config{LoadFor: 1500 * time.Millisecond, Replies: []standin.Reply{{Text: genGood}}})
			code, out, errs := runGen(t, "--model-url", srv.URL, "--wait", "30s", file)
			if code != 0 || out != genPrompt+genGood {
				t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, out, errs)
			}
			if !strings.Contains(errs, "hydra: waiting for the model server "+srv.URL) {
				t.Errorf("stderr does not say it waits for the server:\n%s", errs)
			}
		})
	}
}
