package sim

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/chunk"
	"github.com/hydra-lsp/hydra/checkers/mutate"
)

// Task is one programming task the simulated model knows the answer to.
type Task struct {
	// ID is unique across the sources: "CPP/0" (HumanEval-X), "c/audio/alaw.c" (TheAlgorithms).
	ID string `json:"id"`
	// Source is "humaneval-x", "thealgorithms" or "humaneval-ts" (LoadTypeScriptTasks).
	Source string `json:"source"`
	// Lang is "c", "c++" or "typescript" (LangTypeScript); Std the C/C++ language standard
	// ("gnu11", "c++17").
	Lang string `json:"lang"`
	Std  string `json:"std"`
	// Prompt is what a client sends; the simulated model continues it.
	Prompt string `json:"prompt"`
	// Solution is the correct continuation the simulated model "intends" to write. Prompt +
	// Solution is a whole program that compiles. For HumanEval-X it is canonical_solution + test,
	// so the program's main runs the task's tests (functional correctness).
	Solution string `json:"solution"`
	// Test is the HumanEval-X test code (already at the end of Solution); empty for TheAlgorithms.
	Test string `json:"test,omitempty"`
}

// Text is the whole correct program: Prompt + Solution.
func (t Task) Text() string { return t.Prompt + t.Solution }

// LangTypeScript is Task.Lang of a TypeScript task.
const LangTypeScript = mutate.TypeScript

// Filename is a file name with the task's language extension, for compilers.
func (t Task) Filename() string {
	if t.Lang == LangTypeScript {
		return strings.NewReplacer("/", "_", " ", "_").Replace(t.ID) + ".ts"
	}
	base := filepath.Base(t.ID)
	base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".c"), ".cpp"), ".cc")
	base = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '_'
		}
		return r
	}, base)
	if t.Source == "humaneval-x" {
		base = "CPP_" + base
	}
	if t.Lang == "c" {
		return base + ".c"
	}
	return base + ".cpp"
}

// Flags are the clang flags that compile the task: -x LANG -std=STD (none for TypeScript, whose
// compiler takes the defaults Hydra applies without a tsconfig.json).
func (t Task) Flags() []string {
	if t.Lang == LangTypeScript {
		return nil
	}
	if t.Lang == "c" {
		return []string{"-x", "c", "-std=" + t.Std}
	}
	return []string{"-x", "c++", "-std=" + t.Std}
}

// The data files, in the directory DataDir finds.
const (
	HumanEvalFile     = "humaneval-x-cpp.jsonl.gz"
	TheAlgorithmsFile = "thealgorithms-corpus.jsonl.gz"
)

// DataDir finds the shared data directory: $HYDRA_DATA if set, else ../shared/data relative to
// the repository root (the directory holding go.mod, found by walking up from the working
// directory).
func DataDir() (string, error) {
	if d := os.Getenv("HYDRA_DATA"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find data directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			data := filepath.Join(filepath.Dir(d), "shared", "data")
			if _, err := os.Stat(data); err != nil {
				return "", fmt.Errorf("find data directory: %s (next to the repository root %s): %w", data, d, err)
			}
			return data, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find data directory: no go.mod above %s; set HYDRA_DATA", wd)
		}
	}
}

// LoadTasks reads the HumanEval-X C++ tasks and the TheAlgorithms programs from dir (see
// DataDir), HumanEval-X first, each source in file order. Tasks that need headers this machine
// lacks (boost) are left out, and so are tasks whose prompt equals or begins another's (the
// simulator tells tasks apart by their prompts).
func LoadTasks(dir string) ([]Task, error) {
	var tasks []Task
	err := readJSONL(filepath.Join(dir, HumanEvalFile), func(line []byte) error {
		var r struct {
			TaskID            string `json:"task_id"`
			Prompt            string `json:"prompt"`
			CanonicalSolution string `json:"canonical_solution"`
			Test              string `json:"test"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if r.TaskID == "" || r.Prompt == "" {
			return errors.New("record without task_id or prompt")
		}
		if strings.Contains(r.Prompt, "boost/") {
			return nil
		}
		tasks = append(tasks, Task{ID: r.TaskID, Source: "humaneval-x", Lang: "c++", Std: "c++17",
			Prompt: r.Prompt, Solution: r.CanonicalSolution + r.Test, Test: r.Test})
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readJSONL(filepath.Join(dir, TheAlgorithmsFile), func(line []byte) error {
		var r struct {
			ID     string `json:"id"`
			Lang   string `json:"lang"`
			Std    string `json:"std"`
			Source string `json:"source"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if r.ID == "" || r.Source == "" {
			return errors.New("record without id or source")
		}
		p := splitPrompt(r.Source)
		if p == 0 || p >= len(r.Source) {
			return nil
		}
		lang := "c"
		if r.Lang != "c" {
			lang = "c++"
		}
		tasks = append(tasks, Task{ID: r.ID, Source: "thealgorithms", Lang: lang, Std: r.Std,
			Prompt: r.Source[:p], Solution: r.Source[p:]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return unambiguous(tasks), nil
}

// unambiguous drops the tasks whose prompt equals or begins another task's prompt: the simulator
// finds a request's task by its prompt, which must therefore tell the tasks apart.
func unambiguous(tasks []Task) []Task {
	prompts := make([]string, len(tasks))
	for i, t := range tasks {
		prompts[i] = t.Prompt
	}
	sort.Strings(prompts)
	bad := map[string]bool{}
	for i := 0; i+1 < len(prompts); i++ {
		if strings.HasPrefix(prompts[i+1], prompts[i]) {
			bad[prompts[i]] = true
		}
	}
	var out []Task
	for _, t := range tasks {
		if !bad[t.Prompt] {
			out = append(out, t)
		}
	}
	return out
}

func readJSONL(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("load tasks: %w", err)
	}
	defer f.Close()
	return readJSONLFrom(f, path, each)
}

// readJSONLFrom reads gzipped JSON lines from r (named name in errors) and calls each on every
// non-empty line.
func readJSONLFrom(r io.Reader, name string, each func([]byte) error) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("load tasks from %s: %w", name, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return fmt.Errorf("load tasks from %s line %d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("load tasks from %s: %w", name, err)
	}
	return nil
}

// splitPrompt returns where a TheAlgorithms program's prompt ends: after its leading comment
// block (the file's description, standing for a task statement) and the blank lines after it;
// when the program has no leading comment, after its preamble (chunk.PreambleEnd: the leading
// preprocessor lines) and the head of its first function definition. With a leading comment the
// model writes the rest, includes and all, so a missing-#include fault has its root in generated text.
func splitPrompt(src string) int {
	i := 0
	comment := false
	for i < len(src) {
		rest := src[i:]
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		skip := len(rest) - len(trimmed)
		switch {
		case strings.HasPrefix(trimmed, "/*"):
			end := strings.Index(trimmed, "*/")
			if end < 0 {
				return 0
			}
			i += skip + end + 2
			comment = true
		case strings.HasPrefix(trimmed, "//"):
			end := strings.IndexByte(trimmed, '\n')
			if end < 0 {
				return 0
			}
			i += skip + end
			comment = true
		default:
			if comment {
				// End the prompt at a line start: after the comment's line and blank lines.
				if nl := strings.IndexByte(src[i:], '\n'); nl >= 0 && strings.TrimSpace(src[i:i+nl]) == "" {
					i += nl + 1
				}
				for {
					nl := strings.IndexByte(src[i:], '\n')
					if nl < 0 || strings.TrimSpace(src[i:i+nl]) != "" {
						break
					}
					i += nl + 1
				}
				return i
			}
			return signatureEnd(src, chunk.PreambleEnd(src, chunk.Options{}))
		}
	}
	return 0
}

// signatureEnd is the offset after the first function definition's head at or after from: the
// line that opens a parameter list and ends with '{' (or the '{' line right after it). It is from
// when there is none.
func signatureEnd(src string, from int) int {
	i := from
	for i < len(src) {
		nl := strings.IndexByte(src[i:], '\n')
		if nl < 0 {
			break
		}
		line := strings.TrimSpace(src[i : i+nl])
		i += nl + 1
		if !strings.Contains(line, "(") || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//") {
			continue
		}
		if strings.HasSuffix(line, "{") {
			return i
		}
		if strings.HasSuffix(line, ")") {
			if n2 := strings.IndexByte(src[i:], '\n'); n2 >= 0 && strings.TrimSpace(src[i:i+n2]) == "{" {
				return i + n2 + 1
			}
		}
	}
	return from
}

// Select returns n tasks (all when n <= 0 or n >= len(tasks)) chosen deterministically by
// seed, alternating between the sources so that both are represented, each in a seeded order.
func Select(tasks []Task, n int, seed int64) []Task {
	if n <= 0 || n >= len(tasks) {
		return append([]Task(nil), tasks...)
	}
	bySource := map[string][]Task{}
	var sources []string
	for _, t := range tasks {
		if _, ok := bySource[t.Source]; !ok {
			sources = append(sources, t.Source)
		}
		bySource[t.Source] = append(bySource[t.Source], t)
	}
	sort.Strings(sources)
	for _, s := range sources {
		ts := bySource[s]
		r := rand.New(rand.NewPCG(uint64(seed), hashString(s)))
		r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	}
	out := make([]Task, 0, n)
	for i := 0; len(out) < n; i++ {
		for _, s := range sources {
			if i < len(bySource[s]) && len(out) < n {
				out = append(out, bySource[s][i])
			}
		}
	}
	return out
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
