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
	"strings"
	"syscall"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/clang"
	"github.com/hydra-lsp/hydra/checkers/lang"
)

func init() {
	commands["check"] = command{
		summary: "check a C/C++ or TypeScript file incrementally, streamed line by line as a model would write it",
		run:     runCheck,
	}
}

const checkUsage = `usage: hydra check [--json] [--checkpoint-every N] [--timeout D] [--root DIR] [--compile-commands-dir DIR] [--verbose] [-- clang flags…] FILE

Streams FILE line by line (cut where the lexer state is clean) into one session of the
incremental Clang checker, as a model would write it, and reports what the checker says.
A file that would make more than 65,536 chunks goes in pieces of several whole chunks, so that
the checker's memory stays near clang's own.
The compile flags are FILE's project's: its compile_commands.json or compile_flags.txt, found
as clangd finds them (walking up from FILE's directory, build/ included) or in
--compile-commands-dir, less every option that writes a file or loads code; flags after -- are
added after them. The language follows the extension (.c is C, anything else C++); -x and -std
override it. The checker reads no files outside FILE's directory (or --root), the directories
the clang flags name and the system include paths. Exit status: 0 accepted, 1 rejected, 2 usage
or internal error. A .ts/.mts/.cts/.tsx FILE goes to the TypeScript checker instead (TypeScript
7's tsc --api, under FILE's tsconfig.json or TypeScript 7's defaults), cut by its own chunker;
clang flags after -- are refused for it.

With --json, one JSON object per line per event:
  {"event":"progress","off":N,"cat":"…"}
  {"event":"chkpt","off":N,"id":K}
  {"event":"error","off":N,"line":L,"col":C,"cat":"…","diag":"…"}
  {"event":"done","ok":true|false}          (always last, unless the checker failed)

flags:
`

// checkArgs is the parsed command line of hydra check.
type checkArgs struct {
	json    bool
	timeout time.Duration
	every   int // checkpoint every this many chunks after the preamble (0: only the preamble)
	file    string
	root    string   // project root the checker may read under (default: FILE's directory)
	flags   []string // clang flags, language flags included
	project projectOpts
	stderr  io.Writer // notices (flags left out of checking); nil: none
}

// parseCheckArgs splits "[--json] [-- clang flags…] FILE": FILE may come before "--" or be
// the last argument after it.
func parseCheckArgs(args []string, stderr io.Writer) (checkArgs, error) {
	var a checkArgs
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&a.json, "json", false, "print one JSON object per event")
	fs.DurationVar(&a.timeout, "timeout", clang.DefaultTimeout, "per-chunk time limit: fail when the checker takes longer than this to answer for one chunk (0: never)")
	fs.StringVar(&a.root, "root", "", "project `DIR` the checker may read files under (default: FILE's directory)")
	fs.IntVar(&a.every, "checkpoint-every", 0, "also checkpoint every `N` chunks after the preamble (0: only where the preamble ends)")
	a.project.register(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, checkUsage)
		fs.PrintDefaults()
	}
	var clangFlags []string
	if i := indexOf(args, "--"); i >= 0 {
		args, clangFlags = args[:i], args[i+1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return a, err
		}
		return a, errUsageReported // the flag package printed the error and the usage
	}
	switch rest := fs.Args(); {
	case len(rest) == 1:
		a.file = rest[0]
	case len(rest) == 0 && len(clangFlags) > 0:
		a.file = clangFlags[len(clangFlags)-1]
		clangFlags = clangFlags[:len(clangFlags)-1]
	case len(rest) > 1:
		return a, fmt.Errorf("hydra check: one FILE expected, got %q", rest)
	}
	if a.timeout < 0 {
		return a, errors.New("hydra check: --timeout must not be negative (0: no limit)")
	}
	if a.file == "" || strings.HasPrefix(a.file, "-") {
		fs.Usage()
		return a, errors.New("hydra check: no FILE given")
	}
	if l := lang.ForFile(a.file); !l.UsesFlags {
		if len(clangFlags) > 0 {
			return a, fmt.Errorf("hydra check: %s: compiler flags after -- do not apply to %s (its project's configuration is its %s)",
				a.file, l.Name, l.ProjectConfig)
		}
		a.stderr = stderr
		return a, nil
	}
	flags, err := a.project.flags(a.file, clangFlags, stderr)
	if err != nil {
		return a, fmt.Errorf("hydra check: %w", err)
	}
	a.flags = languageFlags(a.file, flags)
	a.stderr = stderr
	return a, nil
}

// errUsageReported: the usage error has already been printed.
var errUsageReported = errors.New("usage error")

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// languageFlags puts "-x c" or "-x c++" (from the extension) before the user's flags unless
// they choose the language themselves.
func languageFlags(file string, user []string) []string {
	for _, f := range user {
		if f == "-x" || strings.HasPrefix(f, "-x") && len(f) > 2 && !strings.HasPrefix(f, "-xclang") {
			return user
		}
	}
	lang := "c++"
	if strings.HasSuffix(file, ".c") {
		lang = "c"
	}
	return append([]string{"-x", lang}, user...)
}

func runCheck(args []string) int {
	a, err := parseCheckArgs(args, os.Stderr)
	if err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 0
		case !errors.Is(err, errUsageReported):
			fmt.Fprintln(os.Stderr, err)
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := check(ctx, a, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hydra check: %v\n", err)
		return 2
	}
	if ok {
		return 0
	}
	return 1
}

// check runs one file through a fresh checker of its language (checkers/lang) and prints its
// events to w; it returns the verdict, or an error when the checker could not give one.
func check(ctx context.Context, a checkArgs, w io.Writer) (bool, error) {
	text, err := readRegularFile(a.file)
	if err != nil {
		return false, err
	}
	l := lang.ForFile(a.file)
	ch, err := l.NewChecker(lang.CheckerOptions{Timeout: clang.TimeoutFlag(a.timeout), OnDroppedFlag: droppedFlagPrinter(a.stderr)})
	if err != nil {
		return false, fmt.Errorf("start checker: %w", err)
	}
	defer ch.Close()
	abs, err := filepath.Abs(a.file)
	if err != nil {
		abs = a.file
	}
	root := filepath.Dir(abs)
	if a.root != "" {
		if root, err = filepath.Abs(a.root); err != nil {
			return false, fmt.Errorf("--root %s: %w", a.root, err)
		}
	}
	// A compiler is run on the file as the user names it (clang -fsyntax-only FILE), and its
	// __FILE__ and messages say that name: the checker gets it so too, in the same working
	// directory.
	name := abs
	if l.UsesFlags {
		name = a.file
	}
	sess, err := ch.Start(ctx, checkers.SessionOptions{Flags: a.flags, Filename: name, Root: root})
	if err != nil {
		return false, fmt.Errorf("start session: %w", err)
	}
	defer sess.Close()

	submitted := make(chan error, 1)
	go func() { submitted <- streamFile(sess, string(text), l.Syntax(a.flags, a.file), a.every) }()

	p := &checkPrinter{w: w, json: a.json, file: a.file}
	ok, err := p.follow(ctx, ch, sess)
	// The session is finished (or failed): close it so that a submitter still writing returns.
	sess.Close()
	serr := <-submitted
	if err != nil {
		if serr != nil {
			err = fmt.Errorf("%w (submitting: %v)", err, serr)
		}
		return false, fmt.Errorf("%s: %w", a.file, err)
	}
	if serr != nil && ok {
		// The checker accepted without having received all the text.
		return false, fmt.Errorf("%s: %w", a.file, serr)
	}
	p.summary(ok)
	return ok, nil
}

// follow prints the session's events until done and returns the verdict.
func (p *checkPrinter) follow(ctx context.Context, ch checkers.Checker, sess checkers.Session) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, open := <-sess.Events():
			if !open {
				return false, errors.New("checker session ended without a verdict")
			}
			switch ev.Kind {
			case checkers.KindChkpt:
				if cp := ch.Adopt(ev.ID); cp != nil {
					cp.Release() // hydra check never resumes; the event is only reported
				}
			case checkers.KindCrash:
				return false, fmt.Errorf("checker failed: %s", ev.Diag)
			}
			p.print(ev)
			if ev.Kind == checkers.KindDone {
				return ev.OK && p.errors == 0, nil
			}
		}
	}
}

// streamFile submits text line by line through a chunker, asks for a checkpoint where the
// preamble ends (as the engine does) and, with every > 0, every that many chunks after it, then
// ends the input. A file that the chunker would cut into more than lang.MaxChunks chunks goes
// in merged pieces of whole chunks (lang.Merger), so that Clang's cost per chunk stays bounded.
func streamFile(sess checkers.Session, text string, syn lang.Syntax, every int) error {
	c := syn.NewChunker("")
	m := lang.Merger{Min: lang.MergeMin(len(text))}
	n := 0 // pieces after the preamble
	send := func(p lang.Chunk) error {
		cp := p.PreambleEnd
		if p.Cat != checkers.BoundaryPreamble {
			n++
			cp = every > 0 && n%every == 0
		}
		if err := sess.Submit(p.Text, checkers.SubmitOptions{Cat: p.Cat, Checkpoint: cp && !p.Unclean}); err != nil {
			return fmt.Errorf("submit at byte %d: %w", p.Off, err)
		}
		return nil
	}
	submit := func(chs []lang.Chunk) error {
		for _, ch := range chs {
			if p, ok := m.Add(ch); ok {
				if err := send(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if err := submit(c.Write(line)); err != nil {
			return err
		}
	}
	if err := submit(c.Flush()); err != nil {
		return err
	}
	if p, ok := m.Flush(); ok {
		if err := send(p); err != nil {
			return err
		}
	}
	if err := sess.EOS(); err != nil {
		return fmt.Errorf("end of input: %w", err)
	}
	return nil
}

// checkPrinter writes events in the CLI contract's JSON or for people.
type checkPrinter struct {
	w      io.Writer
	json   bool
	file   string
	errors int
	// for the human summary
	progress, chkpts, lastOff int
}

// The JSON shapes of the CLI contract (field order and presence are part of it).
type (
	jsonProgress struct {
		Event string `json:"event"`
		Off   int    `json:"off"`
		Cat   string `json:"cat"`
	}
	jsonChkpt struct {
		Event string `json:"event"`
		Off   int    `json:"off"`
		ID    int64  `json:"id"`
	}
	jsonError struct {
		Event string `json:"event"`
		Off   int    `json:"off"`
		Line  int    `json:"line"`
		Col   int    `json:"col"`
		Cat   string `json:"cat"`
		Diag  string `json:"diag"`
		// Notes are the compiler's notes on the error (absent when it gave none).
		Notes []checkers.Note `json:"notes,omitempty"`
	}
	jsonDone struct {
		Event string `json:"event"`
		OK    bool   `json:"ok"`
	}
)

func (p *checkPrinter) print(ev checkers.Event) {
	var v any
	switch ev.Kind {
	case checkers.KindProgress:
		p.progress++
		p.lastOff = ev.Off
		v = jsonProgress{ev.Kind, ev.Off, ev.Cat}
	case checkers.KindChkpt:
		p.chkpts++
		v = jsonChkpt{ev.Kind, ev.Off, ev.ID}
	case checkers.KindError:
		p.errors++
		v = jsonError{ev.Kind, ev.Off, ev.Line, ev.Col, ev.Cat, ev.Diag, ev.Notes}
		if !p.json {
			fmt.Fprintf(p.w, "%s:%d:%d: error: %s [%s]\n", p.file, ev.Line, ev.Col, ev.Diag, ev.Cat)
			for _, n := range ev.Notes {
				// As clang prints them: FILE:LINE:COL: note: …
				file, line := p.file, n.Line
				if n.File != "" {
					file = n.File
				}
				fmt.Fprintf(p.w, "%s:%d:%d: note: %s\n", file, line, n.Col, n.Diag)
			}
		}
	case checkers.KindDone:
		v = jsonDone{ev.Kind, ev.OK && p.errors == 0}
	default:
		return
	}
	if p.json {
		b, _ := json.Marshal(v)
		fmt.Fprintf(p.w, "%s\n", b)
	}
}

func (p *checkPrinter) summary(ok bool) {
	if p.json {
		return
	}
	verdict := "accepted"
	if !ok {
		verdict = fmt.Sprintf("rejected (%d error", p.errors)
		if p.errors != 1 {
			verdict += "s"
		}
		verdict += ")"
	}
	fmt.Fprintf(p.w, "%s: %d chunks accepted up to byte %d, %d checkpoints; %s\n", p.file, p.progress, p.lastOff, p.chkpts, verdict)
}
