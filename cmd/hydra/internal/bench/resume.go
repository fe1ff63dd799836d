package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RunDir keeps a benchmark's runs on disk, one JSON file per run written as soon as the run
// ends, so that an interrupted benchmark can be resumed (`hydra bench --resume DIR`).
type RunDir struct {
	dir string
}

// OpenRunDir opens (creating it if needed) the directory of a benchmark's runs.
func OpenRunDir(dir string) (*RunDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return &RunDir{dir: dir}, nil
}

// file is the path of a run's file: TASK.POLICY.run.json, with path separators replaced.
func (d *RunDir) file(task, policy string) string {
	clean := strings.NewReplacer("/", "_", "\\", "_", " ", "_", ":", "_")
	return filepath.Join(d.dir, clean.Replace(task)+"."+clean.Replace(policy)+".run.json")
}

// Load returns the runs already in the directory, by RunKey. Runs that failed on an
// infrastructure error are left out, so that a resumed benchmark makes them again.
func (d *RunDir) Load() (map[string]Run, error) {
	files, err := filepath.Glob(filepath.Join(d.dir, "*.run.json"))
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	out := map[string]Run{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("run directory: %w", err)
		}
		var r Run
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("run directory: %s: %w", f, err)
		}
		if r.Err == "" {
			out[RunKey(r.Task, r.Policy)] = r
		}
	}
	return out, nil
}

// Save writes a run's file (through a temporary file, so that a file is never half written).
func (d *RunDir) Save(r Run) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save run %s/%s: %w", r.Task, r.Policy, err)
	}
	path := d.file(r.Task, r.Policy)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("save run %s/%s: %w", r.Task, r.Policy, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save run %s/%s: %w", r.Task, r.Policy, err)
	}
	return nil
}

// Bind records what the runs in the directory were made with (config.json), or, when the
// directory already holds a record, checks that it is the same: runs made with other tasks,
// policies or simulator parameters must not be mixed into one report.
func (d *RunDir) Bind(what any) error {
	data, err := json.MarshalIndent(what, "", "  ")
	if err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	path := filepath.Join(d.dir, "config.json")
	old, err := os.ReadFile(path)
	switch {
	case err == nil && string(old) != string(data):
		return fmt.Errorf("run directory %s holds runs of another configuration (%s); use a new directory", d.dir, path)
	case err == nil:
		return nil
	case !os.IsNotExist(err):
		return fmt.Errorf("run directory: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return nil
}
