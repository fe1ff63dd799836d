package lsp_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/lsp"
)

// The soak test's load and bounds.
const (
	soakDocs        = 20        // open documents
	soakGenerations = 4         // generations running at once
	soakBursts      = 3         // bursts of typing …
	soakBurstEdits  = 1000      // … of this many didChange notifications, paced at no more than 1,000 a second
	soakWarmMB      = 40        // --warm-cache-mb: the warm checkpoints' private memory, together
	soakPssBound    = 1 << 30   // bound on the proportional memory (PSS) of the server and its checkers at any sample
	soakServerRSS   = 300 << 20 // bound on the server's own resident memory
	soakShimBound   = 64        // bound on the checker processes alive at once
)

// soakPreambles are the documents' preambles (document i has soakPreambles[i%5]): five warm
// checkpoints of 11–25 MB private memory each once built, more than soakWarmMB holds.
var soakPreambles = []string{
	"#include <cstdio>\n",
	"#include <cstdlib>\n#include <cstring>\n",
	"#include <vector>\n",
	"#include <string>\n",
	"#include <map>\n",
}

// soakDoc is one document of the soak test and what it must hold at the end.
type soakDoc struct {
	uri         string
	instruction string // the generation's instruction line (documents 0..soakGenerations-1)
	generated   string // what that generation must leave
}

// TestSoakUnderLoad puts the real server under load over real pipes, with the scripted stand-in
// model and the real checker: 20 open documents, 4 generations at once (one of them repairs
// an error by rolling back), and bursts of 1,000 didChange notifications typed into all 20
// documents, including above the regions being generated. The client paces a burst at no more
// than 1,000 a second (it never sends faster); on a loaded machine it sends slower, and logs
// the rate it reached. The test asserts no rate (a unit test never fails on wall-clock time):
// it asserts that every edit arrived in order. It then asks each document for
// one more generation whose scripted answer exists only for a prompt equal to the text the
// client holds, so a single edit lost or misplaced by the server fails it. It checks that no
// process is left over (at rest only the warm preamble checkpoints live, and after shutdown
// none), that the warm checkpoints stay under their byte budget (their private memory, from
// /proc/PID/smaps_rollup), and that the memory of the server and its checkers stays bounded.
// It is bounded in time: the load lasts a few seconds.
func TestSoakUnderLoad(t *testing.T) {
	start := time.Now()
	dir := t.TempDir()
	docs := make([]*soakDoc, soakDocs)
	texts := make([]string, soakDocs)
	var rules []modeltest.Rule
	for i := range docs {
		d := &soakDoc{uri: "file://" + filepath.Join(dir, fmt.Sprintf("doc%02d.cpp", i))}
		docs[i] = d
		pre := soakPreambles[i%len(soakPreambles)]
		body := fmt.Sprintf("// document %d\n// typing:\n// verify here\n\n", i)
		switch {
		case i == 0: // the accumulator: its first answer is rejected late and rolled back
			d.instruction, d.generated = "// An accumulator.\n", accGood
			texts[i] = "#include <cstdio>\n" + body + d.instruction + accSuffix
			rules = append(rules,
				modeltest.Rule{PromptContains: "hydra-feedback:", Text: accRetry, Chunk: 6, DelayMS: 5},
				modeltest.Rule{PromptSuffix: d.instruction, Text: accBad, Chunk: 6, DelayMS: 100})
		case i < soakGenerations:
			d.instruction = fmt.Sprintf("// Generate function f%d.\n", i)
			var b strings.Builder
			fmt.Fprintf(&b, "int f%d(int x) {\n  int y = x;\n", i)
			for k := 0; k < 12; k++ {
				fmt.Fprintf(&b, "  y = y * %d + %d;\n", k+2, i)
			}
			b.WriteString("  return y;\n}\n")
			d.generated = b.String()
			texts[i] = pre + body + d.instruction + "int main() { return 0; }\n"
			// About three seconds of streaming: the generations run through the bursts.
			rules = append(rules, modeltest.Rule{PromptSuffix: d.instruction, Text: d.generated, Chunk: 8, DelayMS: 100})
		default:
			texts[i] = pre + body + "int main() { return 0; }\n"
		}
	}
	model := modeltest.NewServer(t, modeltest.Script{Rules: rules})

	c := startServer(t, clientOptions{
		initOptions: map[string]any{"hydra": map[string]any{"modelUrl": model.URL}},
		args:        []string{"--warm-cache-mb", strconv.Itoa(soakWarmMB)},
	})
	for i, d := range docs {
		c.open(d.uri, "cpp", texts[i])
	}

	mem := newMemSampler(c.marker)
	defer mem.stop()

	// Phase 1: four generations at once, and the bursts of typing.
	var wg sync.WaitGroup
	sums := make([]lsp.Summary, soakGenerations)
	errs := make([]error, soakGenerations)
	for i := 0; i < soakGenerations; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := c.text(docs[i].uri)
			off := strings.Index(text, docs[i].instruction) + len(docs[i].instruction)
			sums[i], errs[i] = c.generate(docs[i].uri, position(text, off))
		}()
	}
	edits := 0
	for b := 0; b < soakBursts; b++ {
		burst := time.Now()
		for n := 0; n < soakBurstEdits; n++ {
			d := docs[edits%soakDocs]
			text := c.text(d.uri)
			at := strings.Index(text, "\n// verify here\n")
			typed := at - (strings.Index(text, "// typing:") + len("// typing:"))
			if edits%7 == 6 && typed > 0 {
				c.userEdit(d.uri, at-1, at, "") // a backspace
			} else {
				c.userEdit(d.uri, at, at, string(rune('a'+edits%26)))
			}
			edits++
			// 1,000 a second: every tenth edit waits for its slot.
			if n%10 == 9 {
				if wait := time.Until(burst.Add(time.Duration(n+1) * time.Millisecond)); wait > 0 {
					time.Sleep(wait)
				}
			}
		}
		took := time.Since(burst)
		t.Logf("burst %d: %d didChange in %s (%.0f a second; the pacing allows at most 1,000)", b+1, soakBurstEdits,
			took.Round(time.Millisecond), float64(soakBurstEdits)/took.Seconds())
		time.Sleep(500 * time.Millisecond)
	}
	wg.Wait()
	for i := 0; i < soakGenerations; i++ {
		t.Logf("generation %d: %s", i, sums[i].Message)
		if errs[i] != nil || !sums[i].OK || strings.TrimSpace(sums[i].Text) != strings.TrimSpace(docs[i].generated) {
			t.Errorf("generation %d under load: %v, %+v; want accepted with its scripted text", i, errs[i], sums[i])
		}
	}
	if sums[0].Attempts < 2 {
		t.Errorf("the accumulator was accepted in %d attempt(s); its first answer has a late error", sums[0].Attempts)
	}

	// Phase 2: a generation in every document from a second stand-in (the client switches the
	// server to it with didChangeConfiguration) whose answer is scripted only for a prompt equal
	// to the text before the cursor as the client holds it.
	want := make([]string, soakDocs)
	gen := make([]string, soakDocs)
	var verify []modeltest.Rule
	for i, d := range docs {
		text := c.text(d.uri)
		if i < soakGenerations && !strings.Contains(text, d.instruction+d.generated) {
			t.Errorf("document %d does not hold its generated code after its instruction:\n%s", i, text)
		}
		cut := strings.Index(text, "// verify here\n") + len("// verify here\n")
		gen[i] = fmt.Sprintf("static int verified_%d = %d;\n", i, i)
		verify = append(verify, modeltest.Rule{PromptPrefix: text[:cut], PromptSuffix: text[:cut], Text: gen[i], Times: 1})
		want[i] = text
	}
	verifier := modeltest.NewServer(t, modeltest.Script{Rules: verify})
	if err := c.conn.Notify(context.Background(), "workspace/didChangeConfiguration",
		map[string]any{"settings": map[string]any{"hydra": map[string]any{"modelUrl": verifier.URL}}}); err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}, soakGenerations)
	vsums := make([]lsp.Summary, soakDocs)
	verrs := make([]error, soakDocs)
	for i, d := range docs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			text := want[i]
			off := strings.Index(text, "// verify here\n") + len("// verify here\n")
			vsums[i], verrs[i] = c.generate(d.uri, position(text, off))
		}()
	}
	wg.Wait()
	lost := 0
	for i, d := range docs {
		got := c.text(d.uri)
		cut := strings.Index(want[i], "// verify here\n") + len("// verify here\n")
		ok := verrs[i] == nil && vsums[i].OK && strings.HasPrefix(got, want[i][:cut]) && strings.HasSuffix(got, want[i][cut:]) &&
			strings.TrimSpace(got[cut:len(got)-len(want[i][cut:])]) == strings.TrimSpace(gen[i])
		if !ok {
			lost++
			t.Errorf("document %d: the server's text is not the client's (%v, %+v); the client holds:\n%s", i, verrs[i], vsums[i], got)
		}
	}
	t.Logf("%d edits typed, %d generations under load, %d verified documents (%d differ)", edits, soakGenerations, soakDocs, lost)

	// At rest: only the warm preamble checkpoints are left, under their budget once the cache
	// has measured them again (every 2 s: the sessions that shared their pages end
	// asynchronously).
	var shims, each []string
	var private float64
	for deadline := time.Now().Add(20 * time.Second); ; {
		time.Sleep(time.Second)
		shims, each, private = checkerProcesses(c.marker), nil, 0
		for _, p := range shims {
			pid, _ := strconv.Atoi(strings.SplitN(p, ":", 2)[0])
			kb := smapsKB(pid, "Private_Clean:") + smapsKB(pid, "Private_Dirty:")
			private += kb
			each = append(each, fmt.Sprintf("%.1f MB %s", kb/1024, p))
		}
		if (len(shims) <= len(soakPreambles) && private <= soakWarmMB*1024) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("at rest: %d checker processes, %.1f MB private (budget %d MB)", len(shims), private/1024, soakWarmMB)
	if len(shims) > len(soakPreambles) {
		t.Errorf("at rest %d checker processes live, more than the %d distinct preambles: %v", len(shims), len(soakPreambles), shims)
	}
	if private > soakWarmMB*1024 {
		// Which processes hold it, next to what the cache last measured (its log), says whether
		// the cache missed a process or measured before pages turned private.
		t.Errorf("at rest the checkpoints hold %.1f MB private memory, over the %d MB budget: %s", private/1024, soakWarmMB, strings.Join(each, "; "))
	}
	if !strings.Contains(c.stderr.String(), "to keep the cache under") {
		t.Errorf("no warm checkpoint was dropped for the budget although five do not fit in %d MB", soakWarmMB)
	}
	peakPss, peakServerRSS, peakShims := mem.stop()
	t.Logf("peak: %.0f MB PSS (server + checkers), server RSS %.0f MB, %d checker processes; %s in all",
		float64(peakPss)/(1<<20), float64(peakServerRSS)/(1<<20), peakShims, time.Since(start).Round(time.Second))
	if peakShims > soakShimBound {
		t.Errorf("%d checker processes alive at once, over the bound of %d", peakShims, soakShimBound)
	}
	serverBound := int64(soakServerRSS)
	if os.Getenv("HYDRA_LSP_RACE") == "1" {
		serverBound *= 8 // the race detector's shadow memory
	}
	if peakPss > soakPssBound || peakServerRSS > serverBound {
		t.Errorf("memory over its bound: PSS %d MB (bound %d), server RSS %d MB (bound %d)",
			peakPss>>20, soakPssBound>>20, peakServerRSS>>20, serverBound>>20)
	}
	if code := c.shutdown(); code != 0 {
		t.Errorf("exit status %d after shutdown", code)
	}
	waitNoProcesses(t, c.marker, 10*time.Second)
}

// memSampler samples, every 200 ms, the memory of the processes carrying a test marker.
type memSampler struct {
	marker string
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once

	mu                     sync.Mutex
	peakPss, peakServerRSS int64
	peakShims              int
}

func newMemSampler(marker string) *memSampler {
	m := &memSampler{marker: marker, done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			m.sample()
			select {
			case <-m.done:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *memSampler) sample() {
	var pss, serverRSS int64
	shims := 0
	for _, p := range processes(m.marker) {
		parts := strings.SplitN(p, ":", 2)
		pid, _ := strconv.Atoi(parts[0])
		pss += int64(smapsKB(pid, "Pss:") * 1024)
		if strings.HasSuffix(p, filepath.Base(shimBin)) {
			shims++
		} else if parts[1] == "hydra" {
			serverRSS = int64(smapsKB(pid, "Rss:") * 1024)
		}
	}
	m.mu.Lock()
	m.peakPss, m.peakServerRSS, m.peakShims = max(m.peakPss, pss), max(m.peakServerRSS, serverRSS), max(m.peakShims, shims)
	m.mu.Unlock()
}

// stop ends the sampling and returns the peaks.
func (m *memSampler) stop() (pss, serverRSS int64, shims int) {
	m.once.Do(func() { close(m.done); m.wg.Wait() })
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peakPss, m.peakServerRSS, m.peakShims
}

// smapsKB reads one field (in kB) of /proc/PID/smaps_rollup; 0 when the process is gone.
func smapsKB(pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == field {
			v, _ := strconv.ParseFloat(fs[1], 64)
			return v
		}
	}
	return 0
}
