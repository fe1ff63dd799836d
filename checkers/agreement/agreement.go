// Package agreement checks that an incremental checker session says what whole-file Clang says:
// the same verdict and, for rejected text, the same first error (line and message). It holds the
// two sides (Incremental streams text line by line through checkers/chunk into one session;
// Whole runs `clang-19 -fsyntax-only` on the whole file), the corpus and mutant loaders, and Run,
// which compares them over many programs with a pool of workers and reports the agreement rate
// and every disagreement. The agreement test of issue 2 lives in agreement_test.go.
package agreement

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/wholefile"
)

// Verdict is what a checker says about a whole text.
type Verdict struct {
	OK bool
	// The first error (zero when OK).
	Line int
	Col  int
	Msg  string
	// File is where the first error is, when a checker names it (whole-file clang does).
	File string
	// Late is set (incremental side) when the first error arrived after progress had already
	// been reported past its offset: clang's lookahead or a construct that is checked as a whole
	// (a class, the end of the translation unit) delayed it.
	Late bool
}

func (v Verdict) String() string {
	if v.OK {
		return "accepted"
	}
	return fmt.Sprintf("rejected at %d:%d: %s", v.Line, v.Col, v.Msg)
}

// Agree reports whether two verdicts agree: the same verdict and, when rejected, the first error
// on the same line with the same message.
func Agree(a, b Verdict) bool {
	if a.OK != b.OK {
		return false
	}
	return a.OK || (a.Line == b.Line && a.Msg == b.Msg)
}

// ClangPath returns the clang-19 driver (wholefile.Clang).
func ClangPath() (string, error) { return wholefile.Clang() }

// PresentationFlags are added to the whole-file clang run so that its first diagnostic line can
// be compared: they change how diagnostics are printed, not which are emitted.
var PresentationFlags = []string{"-fno-caret-diagnostics", "-fno-color-diagnostics", "-fno-diagnostics-show-option"}

// Whole runs clang -fsyntax-only with flags on text written to a file named base (its base
// name only) in a fresh temporary directory, and returns its verdict: its first error, in
// whatever file.
func Whole(ctx context.Context, clang, text, base string, flags []string) (Verdict, error) {
	w, err := wholefile.Check(ctx, text, wholefile.Options{Clang: clang, Name: base,
		Flags: append(append([]string(nil), PresentationFlags...), flags...)})
	if err != nil {
		return Verdict{}, err
	}
	d, ok := w.First()
	if !ok {
		return Verdict{OK: true}, nil
	}
	return Verdict{Line: d.Line, Col: d.Col, Msg: d.Msg, File: d.File}, nil
}

// Incremental streams text line by line (as a model would) through a chunker into one session
// of ch started with filename and flags, then ends the input, and returns the session's verdict:
// the first error event, or done. A crash of the checker is an error.
func Incremental(ctx context.Context, ch checkers.Checker, text, filename string, flags []string) (Verdict, error) {
	v, _, err := incremental(ctx, ch, text, filename, flags, nil)
	return v, err
}

// warmth asks incremental to start from the nearest checkpoint of the text, when there is one,
// and to keep a checkpoint at the end of the preamble; keep receives the checkpoints made.
type warmth struct {
	keep func(cp checkers.Checkpoint)
}

// incremental is Incremental, optionally warm; it also says whether it resumed a checkpoint.
func incremental(ctx context.Context, ch checkers.Checker, text, filename string, flags []string, w *warmth) (Verdict, bool, error) {
	opts := checkers.SessionOptions{Flags: flags, Filename: filename}
	copts := chunk.OptionsForFlags(flags, filename)
	var (
		sess    checkers.Session
		err     error
		resumed bool
		from    int
	)
	if w != nil {
		if cp := ch.Nearest(opts, text); cp != nil {
			from, resumed = cp.Off(), true
			sess, err = ch.Resume(ctx, cp)
			defer cp.Release()
		}
	}
	if !resumed {
		sess, err = ch.Start(ctx, opts)
	}
	if err != nil {
		return Verdict{}, resumed, fmt.Errorf("start session: %w", err)
	}
	defer sess.Close()
	submitErr := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		submitErr <- stream(sess, text, from, copts, w != nil && !resumed, stop)
	}()
	v, err := verdict(ctx, ch, sess.Events(), w)
	close(stop)
	sess.Close()
	serr := <-submitErr
	if err != nil {
		return Verdict{}, resumed, err
	}
	if serr != nil && !errors.Is(serr, errStopped) && v.OK {
		// Input was lost, yet the session said done: that is not a verdict on the text.
		return Verdict{}, resumed, fmt.Errorf("submit: %w", serr)
	}
	return v, resumed, nil
}

var errStopped = errors.New("stopped")

// stream feeds text[from:] line by line through a chunker into sess and ends the input. With
// checkpoint set it asks for a checkpoint at the end of the preamble.
func stream(sess checkers.Session, text string, from int, opts chunk.Options, checkpoint bool, stop <-chan struct{}) error {
	c := chunk.New(opts)
	submit := func(chs []chunk.Chunk) error {
		for _, chk := range chs {
			select {
			case <-stop:
				return errStopped
			default:
			}
			so := checkers.SubmitOptions{Cat: chk.Cat, Checkpoint: checkpoint && chk.PreambleEnd && !chk.Unclean}
			if err := sess.Submit(chk.Text, so); err != nil {
				return fmt.Errorf("submit chunk at %d: %w", from+chk.Off, err)
			}
		}
		return nil
	}
	for _, line := range strings.SplitAfter(text[from:], "\n") {
		if err := submit(c.Write(line)); err != nil {
			return err
		}
	}
	if err := submit(c.Flush()); err != nil {
		return err
	}
	return sess.EOS()
}

// verdict reads events until the first error, done or crash. Checkpoints go to w.keep when w is
// set, else they are released at once.
func verdict(ctx context.Context, ch checkers.Checker, events <-chan checkers.Event, w *warmth) (Verdict, error) {
	progress := -1
	for {
		select {
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return Verdict{}, errors.New("session ended without done")
			}
			switch ev.Kind {
			case checkers.KindProgress:
				progress = max(progress, ev.Off)
			case checkers.KindChkpt:
				if cp := ch.Adopt(ev.ID); cp != nil {
					if w != nil && w.keep != nil {
						w.keep(cp)
					} else {
						cp.Release()
					}
				}
			case checkers.KindError:
				v := Verdict{Line: ev.Line, Col: ev.Col, Msg: ev.Diag, Late: ev.Off < progress}
				if f, ok := ev.Meta["file"].(string); ok {
					v.File = f
				}
				return v, nil
			case checkers.KindDone:
				if !ev.OK {
					return Verdict{}, errors.New("done{ok:false} without an error event")
				}
				return Verdict{OK: true}, nil
			case checkers.KindCrash:
				return Verdict{}, fmt.Errorf("checker crashed: %s", ev.Diag)
			}
		}
	}
}

// Program is one source text with the flags to check it with.
type Program struct {
	ID    string // corpus id, with "#mN" appended for mutants
	Base  string // file base name (e.g. quick_sort.cpp)
	Lang  string // "c" or "c++"
	Flags []string
	Text  string
	// Mutation, for mutants: the operator and what it changed.
	Op, Desc string
}

// FlagsFor returns the corpus flags for a lang/std pair: -x c -std=gnu11 or -x c++ -std=c++17.
func FlagsFor(lang, std string) []string {
	return []string{"-x", lang, "-std=" + std}
}

// LoadCorpus reads the programs of a thealgorithms-corpus.jsonl.gz file.
func LoadCorpus(path string) ([]Program, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load corpus: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("load corpus %s: %w", path, err)
	}
	var out []Program
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct{ ID, Lang, Std, Source string }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("load corpus %s: record %d: %w", path, len(out)+1, err)
		}
		out = append(out, Program{ID: rec.ID, Base: filepath.Base(rec.ID), Lang: rec.Lang,
			Flags: FlagsFor(rec.Lang, rec.Std), Text: rec.Source})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load corpus %s: %w", path, err)
	}
	return out, nil
}
