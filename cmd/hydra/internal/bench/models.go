package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hydra-lsp/hydra/engine/model"
	"github.com/hydra-lsp/hydra/sim"
)

// TaskOptions choose the benchmark's tasks.
type TaskOptions struct {
	// N tasks (0: all), drawn by Seed, alternating sources (sim.Select).
	N    int
	Seed int64
	// Source keeps only "humaneval-x" or "thealgorithms" tasks; "" keeps both. "humaneval-ts"
	// takes the TypeScript tasks instead (sim.LoadTypeScriptTasks), which no other choice draws.
	Source string
	// IDs, when set, are the tasks to run (N and Source are then ignored).
	IDs []string
	// File, when set, is a JSONL file of the user's own tasks, one sim.Task per line (id, lang,
	// prompt; solution for the simulated model; test for functional checks), used instead of
	// the shared data.
	File string
}

// readTaskFile reads a JSONL file of tasks.
func readTaskFile(path string) ([]sim.Task, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("task file: %w", err)
	}
	var out []sim.Task
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var t sim.Task
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, fmt.Errorf("task file %s:%d: %w", path, i+1, err)
		}
		switch {
		case t.ID == "" || t.Prompt == "":
			return nil, fmt.Errorf("task file %s:%d: a task needs an id and a prompt", path, i+1)
		case t.Lang != "c" && t.Lang != "c++" && t.Lang != sim.LangTypeScript:
			return nil, fmt.Errorf("task file %s:%d: task %s: lang %q is not c, c++ or %s", path, i+1, t.ID, t.Lang, sim.LangTypeScript)
		case seen[t.ID]:
			return nil, fmt.Errorf("task file %s:%d: task %s appears twice", path, i+1, t.ID)
		}
		seen[t.ID] = true
		if t.Source == "" {
			t.Source = "file"
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("task file %s: no tasks", path)
	}
	return out, nil
}

// LoadTasks reads the benchmark's tasks from the shared data directory (sim.DataDir).
func LoadTasks(o TaskOptions) ([]sim.Task, error) {
	var all []sim.Task
	if o.File != "" {
		var err error
		if all, err = readTaskFile(o.File); err != nil {
			return nil, fmt.Errorf("bench tasks: %w", err)
		}
	} else if o.Source == sim.SourceHumanEvalTS && len(o.IDs) == 0 {
		var err error
		if all, err = sim.LoadTypeScriptTasks(); err != nil {
			return nil, fmt.Errorf("bench tasks: %w", err)
		}
	} else {
		dir, err := sim.DataDir()
		if err != nil {
			return nil, fmt.Errorf("bench tasks: %w", err)
		}
		if all, err = sim.LoadTasks(dir); err != nil {
			return nil, fmt.Errorf("bench tasks: %w", err)
		}
		if len(o.IDs) > 0 { // an id may name a TypeScript task
			ts, err := sim.LoadTypeScriptTasks()
			if err != nil {
				return nil, fmt.Errorf("bench tasks: %w", err)
			}
			all = append(all, ts...)
		}
	}
	if len(o.IDs) > 0 {
		byID := map[string]sim.Task{}
		for _, t := range all {
			byID[t.ID] = t
		}
		var out []sim.Task
		for _, id := range o.IDs {
			t, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("bench tasks: no task %q", id)
			}
			out = append(out, t)
		}
		return out, nil
	}
	if o.Source != "" {
		var keep []sim.Task
		for _, t := range all {
			if t.Source == o.Source {
				keep = append(keep, t)
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("bench tasks: no task from source %q (known: humaneval-x, thealgorithms, %s)", o.Source, sim.SourceHumanEvalTS)
		}
		all = keep
	}
	return sim.Select(all, o.N, o.Seed), nil
}

// TypeScriptDir is the directory under which benchmark TypeScript tasks are checked
// (Task.Filename is TypeScriptDir/TASK/TASK.ts): a directory that does not exist, so that the
// checker finds no tsconfig.json above a task and applies Hydra's defaults, as the static check's
// tsc does. Each task has a directory of its own because the checker's default tsconfig.json of
// a directory names every file being checked there as a root (checkers/typescript, configFor),
// and the tasks are scripts: two tasks checked at once in one directory would share a global
// scope (HumanEval 53 and 85 both declare a function add).
const TypeScriptDir = "/hydra-bench-typescript"

// FromSim converts the simulator's tasks to benchmark tasks.
func FromSim(ts []sim.Task) []Task {
	out := make([]Task, len(ts))
	for i, t := range ts {
		name := t.Filename()
		if t.Lang == sim.LangTypeScript {
			name = filepath.Join(TypeScriptDir, strings.TrimSuffix(name, ".ts"), name)
		}
		out[i] = Task{ID: t.ID, Lang: t.Lang, Prompt: t.Prompt, Filename: name, Flags: t.Flags(), Test: t.Test}
	}
	return out
}

// SimModel is the simulated model as the benchmark runs it: one simulator per policy, all with
// the same fault plans, each served over HTTP on a loopback port so that the engine talks to it
// through the same OpenAI-compatible client it uses for real servers.
type SimModel struct {
	base    *sim.Server
	mu      sync.Mutex
	servers map[string]*sim.Server
	clients map[string]model.Generator
	https   []*http.Server
	err     error
}

// NewSimModel starts the simulator over tasks with opts (Tasks is set from tasks) and makes the
// fault plans of every task before any timing starts (with clang, workers at once).
func NewSimModel(ctx context.Context, opts sim.Options, tasks []sim.Task, workers int) (*SimModel, error) {
	opts.Tasks = tasks
	base, err := sim.NewServer(opts)
	if err != nil {
		return nil, err
	}
	if err := base.Prepare(ctx, nil, workers); err != nil {
		return nil, fmt.Errorf("simulated model: plan faults: %w", err)
	}
	return &SimModel{base: base, servers: map[string]*sim.Server{}, clients: map[string]model.Generator{}}, nil
}

// Generator returns the model client of a policy, starting its simulator on first use. When
// that fails the client it returns fails every request (and Err says why).
func (m *SimModel) Generator(policy string) model.Generator {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g, ok := m.clients[policy]; ok {
		return g
	}
	srv := m.base.Fresh()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		m.err = fmt.Errorf("simulated model for %s: listen: %w", policy, err)
		return failing{m.err}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	c, err := model.NewClient("http://" + l.Addr().String() + "/v1")
	if err != nil {
		hs.Close()
		m.err = fmt.Errorf("simulated model for %s: %w", policy, err)
		return failing{m.err}
	}
	m.servers[policy], m.clients[policy] = srv, c
	m.https = append(m.https, hs)
	return c
}

// Err is the first error starting a simulator, if any.
func (m *SimModel) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Describe states the simulator's assumptions and what it served, for the report.
func (m *SimModel) Describe() map[string]any {
	out := map[string]any{}
	data, _ := json.Marshal(m.base.Assumptions())
	_ = json.Unmarshal(data, &out)
	m.mu.Lock()
	defer m.mu.Unlock()
	outcomes := map[string]int{}
	var names []string
	for name, s := range m.servers {
		names = append(names, name)
		for k, v := range s.Stats().Outcomes {
			outcomes[k] += v
		}
	}
	sort.Strings(names)
	out["request_outcomes"] = outcomes
	out["fault_plans"] = m.base.Plans()
	out["fault_plan_clang_runs"] = m.base.Stats().ClangRuns
	out["one_simulator_per_policy"] = "each policy has its own simulator with the same fault plans, so each meets the same first fault: " + strings.Join(names, ", ")
	return out
}

// Close stops the simulators' HTTP servers.
func (m *SimModel) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, hs := range m.https {
		hs.Close()
	}
	m.https = nil
}

// failing is a Generator that fails every request with err.
type failing struct{ err error }

func (f failing) Complete(context.Context, model.Request) (model.Stream, error) {
	return nil, errors.Join(model.ErrUnavailable, f.err)
}

// ServerModels lists the models an OpenAI-compatible server serves, with who owns each, as the
// server says (model.ListModels: GET /v1/models).
func ServerModels(ctx context.Context, baseURL string) (map[string]string, error) {
	info, err := model.ListModels(ctx, baseURL)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	out := map[string]string{}
	for _, m := range info.Models {
		out[m.ID] = m.OwnedBy
	}
	return out, nil
}

// standIns are the names Hydra's own stand-ins for a model give themselves in /v1/models.
var standIns = []string{sim.ModelName, "scripted-stand-in"}

// IsRealModel reports, from what the server lists, whether it serves a real model: not when it
// lists one of Hydra's stand-ins or a model whose owner says it is simulated.
func IsRealModel(models map[string]string) bool {
	for id, owner := range models {
		for _, s := range standIns {
			if id == s {
				return false
			}
		}
		if strings.Contains(strings.ToLower(owner), "simulated") || strings.Contains(strings.ToLower(owner), "stand-in") {
			return false
		}
	}
	return len(models) > 0
}
