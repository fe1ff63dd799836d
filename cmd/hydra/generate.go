package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/lang"
	"github.com/hydra-lsp/hydra/engine"
	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/policy"
)

func init() {
	commands["generate"] = command{
		summary: "continue a C/C++ or TypeScript prompt file with a model while its compiler checks and repairs it",
		run:     runGenerate,
	}
}

// generateOutput is the --json output of hydra generate.
type generateOutput struct {
	Text        string           `json:"text"`
	OK          bool             `json:"ok"`
	Reason      string           `json:"reason"`
	Diagnostics []diagnosticJSON `json:"diagnostics,omitempty"`
	Stats       engine.Stats     `json:"stats"`
	Notes       []string         `json:"notes,omitempty"`
	// Preexisting are the errors the file had before (with --suffix), excused.
	Preexisting []diagnosticJSON `json:"preexisting,omitempty"`
	Trace       *engine.Trace    `json:"trace"`
}

type diagnosticJSON struct {
	Line int    `json:"line"`
	Col  int    `json:"col,omitempty"`
	Cat  string `json:"cat,omitempty"`
	Diag string `json:"diag"`
}

func runGenerate(args []string) int {
	return generate(args, os.Stdout, os.Stderr)
}

// generate is hydra generate with its output streams, for tests.
func generate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	d := engine.DefaultBudget()
	defWait, werr := modelWait()
	if werr != nil {
		defWait = model.DefaultLoadingWait
	}
	var (
		modelURL    = fs.String("model-url", "", "model API base, e.g. http://localhost:8000/v1 (default $HYDRA_MODEL_URL)")
		modelName   = fs.String("model", "", "model name the server serves (default $HYDRA_MODEL)")
		policyName  = fs.String("policy", "", "repair policy: "+strings.Join(append(policy.Names(), "default"), ", ")+" (default "+policy.Default+")")
		asJSON      = fs.Bool("json", false, "print one JSON object {text, ok, reason, diagnostics, stats, trace}")
		maxTokens   = fs.Int("max-tokens", d.MaxTokens, "output tokens over all attempts")
		maxAttempts = fs.Int("max-attempts", d.MaxAttempts, "attempts (rollouts) at most, the first included")
		deadline    = fs.Duration("deadline", d.Deadline, "wall-time limit of the search")
		temperature = fs.Float64("temperature", 0.2, "sampling temperature")
		stopClose   = fs.Bool("stop-at-close", false, "end generation once the construct at the end of the prompt is closed (default: on with a non-empty --suffix, as in the editors)")
		bestAttempt = fs.String("best-attempt", "", "when no program is accepted, write the best attempt (prompt, generated text, suffix) to this `FILE`; stdout then holds nothing")
		quiet       = fs.Bool("quiet", false, "no progress messages on stderr")
		suffixFile  = fs.String("suffix", "", "file holding the code after the insertion point: checked with the result, and sent to the model (fill-in-the-middle)")
		fim         = fs.String("fim", "auto", "fill-in-the-middle format: "+strings.Join(model.FIMNames(), ", ")+" (auto: from the model's name)")
		wait        = fs.Duration("wait", defWait, "how long to wait for a model server that is starting or loading its model (default $HYDRA_MODEL_WAIT, else 1m)")
		timeout     = fs.Duration("timeout", clang.DefaultTimeout, "per-chunk time limit: fail when the checker takes longer than this to answer for one chunk (0: never)")
		traceSVG    = fs.String("trace-svg", "", "draw the search (tree over program lines, streaming vs checking timeline) to this SVG file")
		project     projectOpts
	)
	project.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hydra generate [--model-url URL] [--model NAME] [--policy NAME] [--json] [flags] [-- clang flags…] PROMPT_FILE")
		fmt.Fprintln(stderr, "\nThe model continues PROMPT_FILE (the start of a C or C++ program, or of a TypeScript one: .ts, .mts,")
		fmt.Fprintln(stderr, ".cts, .tsx) while its compiler checks it (Clang; TypeScript's tsc under the project's tsconfig.json);")
		fmt.Fprintln(stderr, "stdout is PROMPT_FILE's text followed by the accepted continuation (and the --suffix file's text);")
		fmt.Fprintln(stderr, "nothing when no program was accepted (--best-attempt FILE keeps the best attempt).")
		fmt.Fprintln(stderr, "Exit status: 0 accepted, 1 not accepted, 2 usage or infrastructure error.")
		fmt.Fprintln(stderr, "HYDRA_MODEL_URL, HYDRA_MODEL and HYDRA_API_KEY are read when the flags are absent; without a model")
		fmt.Fprintln(stderr, "name, the one model the server serves is used (`hydra models --model-url URL` lists them).\n\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	file, clangFlags, err := splitFileAndFlags(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		fs.Usage()
		return 2
	}
	if *modelURL == "" {
		*modelURL = os.Getenv("HYDRA_MODEL_URL")
	}
	if *modelName == "" {
		*modelName = os.Getenv("HYDRA_MODEL")
	}
	if *modelURL == "" {
		fmt.Fprintln(stderr, "hydra generate: no model server: give --model-url or set HYDRA_MODEL_URL")
		return 2
	}
	pol, err := resolvePolicy(*policyName)
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	if *maxTokens <= 0 || *maxAttempts <= 0 || *deadline <= 0 || *wait < 0 || *timeout < 0 {
		fmt.Fprintln(stderr, "hydra generate: --max-tokens, --max-attempts and --deadline must be positive, --wait and --timeout not negative")
		return 2
	}
	fimSetting, err := model.ParseFIM(*fim)
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: --%v\n", err)
		return 2
	}
	suffix := ""
	if *suffixFile != "" {
		b, err := readRegularFile(*suffixFile)
		if err != nil {
			fmt.Fprintf(stderr, "hydra generate: --suffix: %v\n", err)
			return 2
		}
		suffix = string(b)
	}
	// As the editors do: code after the insertion point closes the construct being written, so
	// the model's own closing brace would be one too many.
	stopSet := false
	fs.Visit(func(f *flag.Flag) { stopSet = stopSet || f.Name == "stop-at-close" })
	if !stopSet {
		*stopClose = strings.TrimSpace(suffix) != ""
	}
	src, err := readRegularFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	language := lang.ForFile(file)
	switch {
	case language.UsesFlags:
		if clangFlags, err = project.flags(file, clangFlags, stderr); err != nil {
			fmt.Fprintf(stderr, "hydra generate: %v\n", err)
			return 2
		}
	case len(clangFlags) > 0:
		fmt.Fprintf(stderr, "hydra generate: %s: compiler flags after -- do not apply to %s (its project's configuration is its %s)\n",
			file, language.Name, language.ProjectConfig)
		return 2
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	gen, err := model.NewClient(*modelURL, model.WithFIM(fimSetting), model.WithLoadingWait(*wait))
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	ck, err := language.NewChecker(lang.CheckerOptions{Timeout: clang.TimeoutFlag(*timeout), OnDroppedFlag: droppedFlagPrinter(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	defer ck.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	req := engine.Request{
		Prefix:      string(src),
		Suffix:      suffix,
		Filename:    abs,
		Flags:       clangFlags,
		Model:       *modelName,
		Params:      model.Params{Temperature: *temperature},
		Policy:      pol,
		StopAtClose: *stopClose,
		// With a suffix the file is a whole document, as in the editors: errors it had before
		// (elsewhere, not the model's) are excused, and said once at the end.
		Baseline: suffix != "",
		Budget: engine.Budget{MaxTokens: *maxTokens, MaxAttempts: *maxAttempts, Deadline: *deadline,
			MaxCheckpoints: d.MaxCheckpoints, MaxProcesses: d.MaxProcesses},
	}
	said := map[string]bool{}
	if !*quiet {
		req.OnUpdate = func(u engine.Update) {
			switch u.Kind {
			case "attempt", "error", "rollback", "note", "waiting":
				if u.Message != "" {
					fmt.Fprintf(stderr, "hydra: %s\n", u.Message)
					said[u.Message] = true
				}
			}
		}
	}
	start := time.Now()
	res, err := engine.Search(ctx, ck, gen, req)
	if err != nil && res == nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	text := string(src) + res.Text + suffix
	if *traceSVG != "" {
		if terr := writeTraceSVG(*traceSVG, res.Trace, fmt.Sprintf("hydra generate %s: %s, %d attempts", filepath.Base(file), res.Reason, res.Stats.Attempts)); terr != nil {
			fmt.Fprintf(stderr, "hydra generate: %v\n", terr)
			return 2
		}
	}
	if *asJSON {
		out := generateOutput{Text: text, OK: res.OK, Reason: res.Reason, Stats: res.Stats, Notes: res.Notes, Trace: res.Trace}
		for _, d := range res.Diagnostics {
			out.Diagnostics = append(out.Diagnostics, diagnosticJSON{Line: d.Line, Col: d.Col, Cat: d.Cat, Diag: d.Diag})
		}
		for _, d := range res.Baseline {
			out.Preexisting = append(out.Preexisting, diagnosticJSON{Line: outputLine(d, len(src), res.Text), Col: d.Col, Cat: d.Cat, Diag: d.Diag})
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if jerr := enc.Encode(out); jerr != nil {
			fmt.Fprintf(stderr, "hydra generate: %v\n", jerr)
			return 2
		}
	} else if res.OK {
		fmt.Fprint(stdout, text)
	} else if *bestAttempt != "" {
		// Not accepted: stdout stays empty (`hydra generate … > file.c` writes no code that does
		// not compile); the best attempt goes where it was asked to.
		if werr := os.WriteFile(*bestAttempt, []byte(text), 0o644); werr != nil {
			fmt.Fprintf(stderr, "hydra generate: --best-attempt: %v\n", werr)
			return 2
		}
		fmt.Fprintf(stderr, "hydra: the best attempt, not accepted, is in %s\n", *bestAttempt)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hydra generate: %v\n", err)
		return 2
	}
	for _, d := range res.Diagnostics {
		fmt.Fprintf(stderr, "%s:%d:%d: error: %s [%s]\n", file, d.Line, d.Col, d.Diag, d.Cat)
	}
	for _, e := range res.Baseline {
		fmt.Fprintf(stderr, "%s:%d:%d: error (there before, not the model's): %s [%s]\n", file, outputLine(e, len(src), res.Text), e.Col, e.Diag, e.Cat)
	}
	if !*quiet {
		for _, n := range res.Notes {
			if !said[n] {
				fmt.Fprintf(stderr, "hydra: %s\n", n)
			}
		}
		fmt.Fprintf(stderr, "hydra: %s after %d attempt(s), %d output tokens, %.2fs\n",
			res.Reason, res.Stats.Attempts, res.Stats.OutputTokens, time.Since(start).Seconds())
	}
	if !res.OK {
		return 1
	}
	return 0
}

// outputLine is the line, in the output (prompt, generated text, suffix), of a pre-existing
// error reported in the prompt+suffix: one in the suffix moves down by the generated lines.
func outputLine(e checkers.Event, promptLen int, generated string) int {
	if e.Off >= promptLen {
		return e.Line + strings.Count(generated, "\n")
	}
	return e.Line
}

// splitFileAndFlags separates PROMPT_FILE from the clang flags in what follows the command's
// own flags: either "clang flags… PROMPT_FILE" (flag parsing consumed a leading "--") or
// "PROMPT_FILE -- clang flags…".
func splitFileAndFlags(rest []string) (string, []string, error) {
	if i := slices.Index(rest, "--"); i >= 0 {
		before, after := rest[:i], rest[i+1:]
		switch {
		case len(before) == 1:
			return before[0], after, nil
		case len(before) == 0 && len(after) > 0:
			return after[len(after)-1], after[:len(after)-1], nil
		}
		return "", nil, errors.New("want exactly one PROMPT_FILE")
	}
	if len(rest) == 0 {
		return "", nil, errors.New("no PROMPT_FILE given")
	}
	return rest[len(rest)-1], rest[:len(rest)-1], nil
}

// resolvePolicy maps --policy to a policy: a name policy.ByName knows, or "default" for the
// engine's built-in DefaultPolicy.
func resolvePolicy(name string) (engine.Policy, error) {
	if strings.EqualFold(strings.TrimSpace(name), "default") {
		return engine.DefaultPolicy(), nil
	}
	p, err := policy.ByName(name, policy.WithPersistentLearning())
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	return p, nil
}
