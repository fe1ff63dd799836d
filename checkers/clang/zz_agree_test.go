package clang

// TEMPORARY (h1): ad hoc agreement check of the shim against whole-file clang over the corpus.
// The project's agreement test lives with hydra check; this file is deleted before hand-off.

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hydra-lsp/hydra/checkers"
	"github.com/hydra-lsp/hydra/checkers/chunk"
)

func TestZZAgree(t *testing.T) {
	if os.Getenv("H1_AGREE") == "" {
		t.Skip("ad hoc")
	}
	f, err := os.Open("/work/shared/data/thealgorithms-corpus.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, _ := gzip.NewReader(f)
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	type prog struct{ ID, Lang, Std, Source string }
	var progs []prog
	for sc.Scan() {
		var p prog
		json.Unmarshal(sc.Bytes(), &p)
		progs = append(progs, p)
	}
	c := newChecker(t, Options{})
	type job struct {
		name, text string
		p          prog
	}
	var jobs []job
	step, _ := strconv.Atoi(os.Getenv("H1_AGREE"))
	for pi, p := range progs {
		if pi%step != 0 {
			continue
		}
		jobs = append(jobs, job{p.ID, p.Source, p})
		// mutation: delete the 3rd ';' from the end
		if i := nthLast(p.Source, ";", 3); i > 0 {
			jobs = append(jobs, job{p.ID + "#semi", p.Source[:i] + p.Source[i+1:], p})
		}
		if i := nthLast(p.Source, "return ", 1); i > 0 {
			jobs = append(jobs, job{p.ID + "#ret", p.Source[:i] + "return undeclared_q + " + p.Source[i+7:], p})
		}
	}
	var mu sync.Mutex
	bad := 0
	ch := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			for j := range ch {
				ext := ".c"
				if j.p.Lang == "c++" {
					ext = ".cpp"
				}
				base := "prog" + ext
				flags := []string{"-std=" + j.p.Std}
				want := wholeFile(t, dir, base, flags, j.text)
				opts := checkers.SessionOptions{Filename: filepath.Join(dir, base), Flags: flags}
				s, err := c.Start(context.Background(), opts)
				if err != nil {
					t.Error(err)
					continue
				}
				for _, ck := range chunk.Split(j.text, chunk.OptionsForFlags(flags, base)) {
					s.Submit(ck.Text, checkers.SubmitOptions{Cat: ck.Cat, Checkpoint: ck.PreambleEnd})
				}
				s.EOS()
				var got verdict
				var firstFile string
				done := false
				for ev := range s.Events() {
					switch ev.Kind {
					case checkers.KindError:
						if got.Diag == "" {
							got.Line, got.Diag = ev.Line, ev.Diag
							if f, ok := ev.Meta["file"].(string); ok {
								firstFile = f
								got.Line = int(ev.Meta["file_line"].(float64))
							}
						}
					case checkers.KindDone:
						got.OK = ev.OK
						done = true
					case checkers.KindCrash:
						got.Diag = "CRASH " + ev.Diag
					case checkers.KindChkpt:
						if cp := c.AdoptCheckpoint(ev.ID); cp != nil {
							cp.Release()
						}
					}
				}
				_ = firstFile
				if !done || got.OK != want.OK || got.Line != want.Line || got.Diag != want.Diag {
					mu.Lock()
					bad++
					fmt.Printf("DISAGREE %s: got %v (done=%v) want %v\n", j.name, got, done, want)
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	fmt.Printf("AGREE %d/%d\n", len(jobs)-bad, len(jobs))
}

func nthLast(s, sub string, n int) int {
	i := len(s)
	for ; n > 0; n-- {
		i = strings.LastIndex(s[:i], sub)
		if i < 0 {
			return -1
		}
	}
	return i
}
