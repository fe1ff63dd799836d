package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/hydra-lsp/hydra/engine/model"
)

func init() {
	commands["models"] = command{
		summary: "list the models a model server serves, with their context lengths",
		run:     func(args []string) int { return models(args, os.Stdout, os.Stderr) },
	}
}

// models is hydra models with its output streams, for tests.
func models(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelURL := fs.String("model-url", "", "model API base, e.g. http://localhost:8000/v1 (default $HYDRA_MODEL_URL)")
	asJSON := fs.Bool("json", false, "print {kind, models: [{id, owned_by, context_length}]}")
	wait := fs.Duration("wait", 0, "how long to wait for a model server that is starting or loading its model")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra models --model-url URL [--json]")
		fmt.Fprintln(stderr, "\nLists what the server at URL serves (one model name a line, with its context length in")
		fmt.Fprintln(stderr, "tokens where the server tells it) and which server it is: vLLM, SGLang, llama.cpp or Ollama.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hydra models: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	if *modelURL == "" {
		*modelURL = os.Getenv("HYDRA_MODEL_URL")
	}
	if *modelURL == "" {
		fmt.Fprintln(stderr, "hydra models: no model server: give --model-url or set HYDRA_MODEL_URL")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *wait+30*time.Second)
	defer cancel()
	info, err := model.ListModels(ctx, *modelURL, model.WithLoadingWait(*wait), model.WithRetry(2, 200*time.Millisecond))
	if err != nil {
		fmt.Fprintf(stderr, "hydra models: %v\n", err)
		return 2
	}
	if *asJSON {
		if info.Models == nil {
			info.Models = []model.ModelInfo{}
		}
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(info); err != nil {
			fmt.Fprintf(stderr, "hydra models: %v\n", err)
			return 2
		}
		return 0
	}
	kind := string(info.Kind)
	if kind == "" {
		kind = "an OpenAI-compatible server"
	}
	if len(info.Models) == 0 {
		fmt.Fprintf(stderr, "hydra models: %s at %s lists no models\n", kind, *modelURL)
		return 1
	}
	for _, m := range info.Models {
		if m.ContextLen > 0 {
			fmt.Fprintf(stdout, "%s\t%d\n", m.ID, m.ContextLen)
		} else {
			fmt.Fprintf(stdout, "%s\n", m.ID)
		}
	}
	fmt.Fprintf(stderr, "hydra models: %s, %d model(s)\n", kind, len(info.Models))
	return 0
}
