package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/lsp"
	"github.com/hydra-lsp/hydra/policy"
)

func init() {
	c := command{summary: "run the language server on stdio (\"Generate with repair\")", run: runLSP}
	commands["lsp"] = c
	commands["serve"] = command{summary: "alias of lsp", run: runLSP}
}

// runLSP serves the LSP on stdin/stdout until the client sends exit or goes away. Every checker
// process ends before it returns.
func runLSP(args []string) int {
	fs := flag.NewFlagSet("lsp", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: hydra lsp [--stdio] [--log FILE] [--apply-edit-timeout D] [--warm-cache-mb N]

Runs Hydra's language server on stdin/stdout. Configure it from the editor (section "hydra":
modelUrl, model, apiKeyEnv, policy, maxTokens, maxAttempts, clangFlags) or with the
environment variables HYDRA_MODEL_URL, HYDRA_MODEL and HYDRA_API_KEY.

With the setting clangd: true (the default for eglot), it runs clangd behind it (clangdPath,
else clangd-19 or clangd on $PATH; clangdArgs) and answers for both: what Hydra does not
handle goes to clangd, and clangd's diagnostics come merged with Hydra's.

`)
		fs.PrintDefaults()
	}
	fs.Bool("stdio", true, "talk LSP on stdin/stdout (the only transport; accepted for editors that pass it)")
	logPath := fs.String("log", "", "append the server's log to this file too (it always goes to the client as window/logMessage)")
	applyEditTimeout := fs.Duration("apply-edit-timeout", 30*time.Second,
		"stop a generation whose workspace/applyEdit the editor has not answered in this time")
	warmMB := fs.Int64("warm-cache-mb", lsp.DefaultWarmBytes>>20,
		"private memory the dormant preamble checkpoints (the warm start) may hold together, in MiB; 0 turns the warm start off")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *warmMB < 0 {
		fmt.Fprintln(os.Stderr, "hydra lsp: --warm-cache-mb must not be negative")
		return 2
	}
	warmBytes := *warmMB << 20
	if warmBytes == 0 {
		warmBytes = -1 // off
	}
	if *applyEditTimeout <= 0 {
		fmt.Fprintln(os.Stderr, "hydra lsp: --apply-edit-timeout must be positive")
		return 2
	}
	// The checker's stderr (crash dumps, internal errors) and the server's fatal error go to
	// stderr, or the --log file; the server's log lines go to the client (and the file).
	logw := os.Stderr
	var logFile io.Writer
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hydra lsp: %v\n", err)
			return 2
		}
		defer f.Close()
		logw, logFile = f, f
	}
	var srv *lsp.Server // the model client's progress and the checker's notices reach the user through it, once it runs
	ck, err := clang.New(clang.Options{Stderr: logw, OnDroppedFlag: func(flag, why string) {
		if srv != nil {
			srv.Warn(fmt.Sprintf("hydra: %s is left out of checking: %s", flag, why))
		}
	}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "hydra lsp: clang checker: %v\n", err)
		return 2
	}
	// The other languages' checkers (checkers/lang): one that cannot start (TypeScript's
	// compiler not installed) leaves its documents without generation, and the log says why.
	others := map[*lang.Language]checkers.Checker{}
	var missing []string
	for _, l := range lang.All() {
		if l == lang.C {
			continue
		}
		oc, err := l.NewChecker(lang.CheckerOptions{Stderr: logw})
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s documents get no generation: %v", l.Name, err))
			continue
		}
		others[l] = oc
	}
	srv = lsp.New(lsp.Options{
		Version:  buildVersion(),
		Checker:  ck,
		Checkers: others,
		Search: func(ctx context.Context, c checkers.Checker, g model.Generator, req engine.Request) (*engine.Result, error) {
			return engine.Search(ctx, c, g, req)
		},
		NewGenerator: func(cfg lsp.Config) (model.Generator, error) {
			var opts []model.Option
			if cfg.APIKeyEnv != "" {
				opts = append(opts, model.WithAPIKeyEnv(cfg.APIKeyEnv))
			}
			fim, err := model.ParseFIM(cfg.FIM)
			if err != nil {
				return nil, fmt.Errorf("hydra.%w", err)
			}
			wait, err := modelWait()
			if err != nil {
				return nil, err
			}
			opts = append(opts, model.WithFIM(fim), model.WithLoadingWait(wait),
				model.WithProgress(func(msg string) { srv.Logf("%s", msg) }))
			return model.NewClient(cfg.ModelURL, opts...)
		},
		Policy:           func(name string) (engine.Policy, error) { return policy.ByName(name, policy.WithPersistentLearning()) },
		Log:              os.Stderr,
		LogFile:          logFile,
		ApplyEditTimeout: *applyEditTimeout,
		WarmBytes:        warmBytes,
	})
	for _, m := range missing {
		srv.Logf("%s", m)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err = srv.Serve(ctx, stdio{})
	if err != nil {
		fmt.Fprintf(logw, "hydra lsp: %v\n", err)
		if errors.Is(err, lsp.ErrExitWithoutShutdown) {
			return 1
		}
	}
	return 0
}

// stdio is stdin and stdout as one stream.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error {
	err := os.Stdin.Close()
	if err2 := os.Stdout.Close(); err == nil {
		err = err2
	}
	return err
}

// modelWait is how long requests wait for a model server that is starting or loading its
// model: $HYDRA_MODEL_WAIT (a Go duration such as 90s), else model.DefaultLoadingWait.
func modelWait() (time.Duration, error) {
	v := os.Getenv("HYDRA_MODEL_WAIT")
	if v == "" {
		return model.DefaultLoadingWait, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("HYDRA_MODEL_WAIT=%q: want a duration such as 90s", v)
	}
	return d, nil
}
