package typescript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/hydra-lsp/hydra/internal/childproc"
)

// server is one `tsc --api --async` process (TypeScript 7's native compiler serving its API on
// stdio) with Hydra's virtual files: the text of each checked file as the sessions have it, and
// a tsconfig.json with Hydra's defaults beside a file that has none of its own. Everything else
// the compiler reads from disk itself (the project's tsconfig.json, imported modules, its lib
// files). Requests are serialised: one check at a time.
type server struct {
	mu    sync.Mutex
	cmd   *exec.Cmd
	stdin io.WriteCloser
	rpc   *rpc
	err   error // set once the process failed; every later check returns it

	files  map[string]string // virtual file contents (absolute, cleaned paths)
	served map[string]string // the content the server last read of each file (fromDisk: the disk's)
	opened map[string]bool   // projects opened with updateSnapshot's openProjects
	// defaults[cfg] lists the files checked under the virtual tsconfig.json cfg, Hydra's
	// defaults; outside marks the files their project's tsconfig.json leaves out.
	defaults map[string][]string
	outside  map[string]bool
	snapshot int64 // the latest snapshot (0: none), released when the next one exists
	// users counts the sessions of each virtual file; when the last ends, the compiler reads
	// the file from disk again (stale marks it for the next snapshot's changed files).
	users map[string]int
	stale map[string]bool
	// gone marks the files that existed only here and ended (deleted in the next snapshot).
	gone map[string]bool
}

// use registers a session on file; the returned function ends it.
func (s *server) use(file string) func() {
	s.mu.Lock()
	s.users[file]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.users[file]--; s.users[file] > 0 {
			return
		}
		delete(s.users, file)
		// The directory's default tsconfig.json (configFor: Hydra's defaults, or those for
		// files their project leaves out) no longer names the file: a file that exists only
		// here would be missing from every later check in its directory (TS6053) once it is
		// gone.
		dir, base := filepath.Dir(file), filepath.Base(file)
		for _, cfg := range []string{filepath.Join(dir, "tsconfig.json"), filepath.Join(dir, outsideConfig)} {
			names, ok := s.defaults[cfg]
			if !ok {
				continue
			}
			names = slices.DeleteFunc(names, func(n string) bool { return n == base })
			if len(names) == 0 {
				delete(s.defaults, cfg)
				continue
			}
			s.defaults[cfg] = names
			s.files[cfg] = DefaultConfig(names...)
		}
		delete(s.outside, file)
		if _, ok := s.files[file]; ok {
			delete(s.files, file)
			if _, seen := s.served[file]; seen {
				delete(s.served, file)
				if onDisk(file) {
					s.stale[file] = true
				} else {
					// It existed only here: its project's next file list leaves it out.
					s.gone[file] = true
				}
			}
		}
	}
}

// startServer runs the compiler at exe in API mode. The process's stdin is its lifeline: it
// exits when stdin closes (the owner's Close, or the death of the Go process), and
// Pdeathsig kills it if the thread that started it dies first.
func startServer(exe, cwd string) (*server, error) {
	cmd := exec.Command(exe, "--api", "--async", "--cwd", cwd, "--callbacks=readFile,fileExists,getAccessibleEntries")
	cmd.Stderr = os.Stderr
	stdin, stdout, err := childproc.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, files: map[string]string{}, served: map[string]string{},
		opened: map[string]bool{}, defaults: map[string][]string{}, outside: map[string]bool{}, users: map[string]int{}, stale: map[string]bool{}, gone: map[string]bool{}}
	s.rpc = &rpc{w: stdin, r: bufio.NewReaderSize(stdout, 1<<16), serve: s.serve}
	if err := s.rpc.call("initialize", nil, nil); err != nil {
		s.close()
		return nil, fmt.Errorf("typescript api: %w", err)
	}
	return s, nil
}

// serve answers the server's file system callbacks: a virtual file's content, or null to let
// the server read the real file system.
func (s *server) serve(method string, params json.RawMessage) any {
	var name string
	if err := json.Unmarshal(params, &name); err != nil {
		return nil
	}
	name = filepath.Clean(name)
	switch method {
	case "readFile":
		if text, ok := s.files[name]; ok {
			s.served[name] = text
			return map[string]string{"content": text}
		}
		// The server reads it from disk and keeps it: a later virtual content is a change.
		s.served[name] = fromDisk
	case "fileExists":
		if _, ok := s.files[name]; ok {
			return true
		}
	case "getAccessibleEntries":
		return s.entries(name)
	}
	return nil
}

// entries answers getAccessibleEntries, the compiler's directory listing (what a project's
// include and exclude patterns are matched against): the disk's entries of dir with the
// virtual files in it (or in a directory below it that the disk does not have), so that a file
// that exists only here is in its project exactly as it would be on disk, as for `tsc -p`.
// Nil, when dir holds no virtual file, lets the compiler list the disk itself.
func (s *server) entries(dir string) any {
	var files, dirs []string
	for f := range s.files {
		rel, err := filepath.Rel(dir, f)
		if _, config := s.defaults[f]; config || err != nil || rel == "." || strings.HasPrefix(rel, "..") || onDisk(f) {
			continue // Hydra's own tsconfig.json files are read by name, never listed
		}
		if first, _, below := strings.Cut(rel, string(filepath.Separator)); below {
			dirs = append(dirs, first)
		} else {
			files = append(files, rel)
		}
	}
	if files == nil && dirs == nil {
		return nil
	}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		st, err := os.Stat(filepath.Join(dir, de.Name())) // follows symbolic links, as the compiler does
		switch {
		case err != nil:
		case st.IsDir():
			dirs = append(dirs, de.Name())
		case st.Mode().IsRegular():
			files = append(files, de.Name())
		}
	}
	slices.Sort(files)
	slices.Sort(dirs)
	return map[string][]string{"files": slices.Compact(files), "directories": slices.Compact(dirs)}
}

// onDisk reports whether path is a file on disk.
func onDisk(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// fromDisk stands in served for a file the server read from disk: no virtual text equals it.
const fromDisk = "\x00disk"

// diagnostic is a diagnostic of the API (positions in UTF-16 code units of the file's text).
type diagnostic struct {
	FileName string `json:"fileName"`
	Pos      int    `json:"pos"`
	End      int    `json:"end"`
	Code     int    `json:"code"`
	Category int    `json:"category"`
	Text     string `json:"text"`
}

// categoryError is DiagnosticCategory.Error.
const categoryError = 1

// result is what the compiler says about one text of a file.
type result struct {
	syntactic, semantic []diagnostic
	program             []diagnostic // options diagnostics of the project
	configDiags         []diagnostic // the tsconfig.json's own errors
	config              string       // the project's tsconfig.json
}

// check makes text the content of file in a new snapshot and returns the file's syntactic and
// semantic diagnostics there, with the project's options diagnostics.
func (s *server) check(file, text string) (result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return result{}, s.err
	}
	res, err := s.checkLocked(file, text)
	if err != nil {
		s.err = fmt.Errorf("typescript api: %w", err)
		s.closeLocked()
		return result{}, s.err
	}
	return res, nil
}

func (s *server) checkLocked(file, text string) (result, error) {
	cfg := s.configFor(file)
	var changed []string
	if old, seen := s.served[cfg]; seen && old != s.files[cfg] {
		changed = append(changed, cfg)
	}
	if old, seen := s.served[file]; seen && old != text {
		changed = append(changed, file)
	}
	for f := range s.stale {
		if f != file || !slices.Contains(changed, f) {
			changed = append(changed, f)
		}
	}
	clear(s.stale)
	var created, deleted []string
	if _, ok := s.files[file]; !ok && !onDisk(file) {
		if s.gone[file] {
			// It ended and comes back before the compiler heard it was deleted: the compiler
			// still has its old text, so it is a change.
			delete(s.gone, file)
			changed = append(changed, file)
		} else {
			// New here and not on disk: its directory's listing changes (entries), and with
			// it the file list of a project whose include matches it.
			created = append(created, file)
		}
	}
	for f := range s.gone {
		deleted = append(deleted, f)
	}
	clear(s.gone)
	s.files[file] = text
	params := map[string]any{}
	if !s.opened[cfg] {
		params["openProjects"] = []string{cfg}
	}
	if len(changed)+len(created)+len(deleted) > 0 {
		fc := map[string]any{}
		for k, v := range map[string][]string{"changed": changed, "created": created, "deleted": deleted} {
			if len(v) > 0 {
				fc[k] = v
			}
		}
		params["fileChanges"] = fc
	}
	var snap struct {
		Snapshot int64 `json:"snapshot"`
		Projects []struct {
			ID             string `json:"id"`
			ConfigFileName string `json:"configFileName"`
		} `json:"projects"`
	}
	if err := s.rpc.call("updateSnapshot", params, &snap); err != nil {
		return result{}, err
	}
	s.opened[cfg] = true
	if s.snapshot != 0 {
		if err := s.rpc.call("release", map[string]any{"snapshot": s.snapshot}, nil); err != nil {
			return result{}, err
		}
	}
	s.snapshot = snap.Snapshot
	project := ""
	for _, p := range snap.Projects {
		if filepath.Clean(p.ConfigFileName) == cfg {
			project = p.ID
		}
	}
	if project == "" {
		return result{}, fmt.Errorf("project %s not loaded", cfg)
	}
	q := map[string]any{"snapshot": snap.Snapshot, "project": project, "file": file}
	res := result{config: cfg}
	if err := s.rpc.call("getSyntacticDiagnostics", q, &res.syntactic); err != nil {
		var re *rpcError
		if errors.As(err, &re) && strings.Contains(re.Message, "source file not found") && !s.outside[file] {
			// The project's tsconfig.json does not take the file in (its include, files or
			// exclude leave it out; a file not on disk yet is in the listing the patterns are
			// matched against, see entries). An editor's TypeScript server checks such a file in
			// an inferred project; Hydra checks it under its defaults, as a file without a
			// tsconfig.json.
			s.outside[file] = true
			return s.checkLocked(file, text)
		}
		return result{}, err
	}
	if err := s.rpc.call("getSemanticDiagnostics", q, &res.semantic); err != nil {
		return result{}, err
	}
	pq := map[string]any{"snapshot": snap.Snapshot, "project": project}
	if err := s.rpc.call("getProgramDiagnostics", pq, &res.program); err != nil {
		return result{}, err
	}
	if err := s.rpc.call("getConfigFileParsingDiagnostics", pq, &res.configDiags); err != nil {
		return result{}, err
	}
	return res, nil
}

// configFor returns the tsconfig.json that file is checked under: the nearest one in its
// directory or above, as tsc finds one when run there, else Hydra's default one (a virtual
// file beside it).
func (s *server) configFor(file string) string {
	dir := filepath.Dir(file)
	if s.outside[file] {
		return s.defaultConfig(filepath.Join(dir, outsideConfig), file)
	}
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "tsconfig.json")
		if _, virtual := s.files[p]; !virtual {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return s.defaultConfig(filepath.Join(dir, "tsconfig.json"), file)
}

// outsideConfig names the virtual tsconfig.json, beside a project's file that its project
// leaves out, under which Hydra checks such files (a name no project uses for its own).
const outsideConfig = "tsconfig.hydra-outside.json"

// defaultConfig makes cfg a virtual tsconfig.json with Hydra's defaults whose files are those it
// already had and file, and returns cfg.
func (s *server) defaultConfig(cfg, file string) string {
	names := s.defaults[cfg]
	base := filepath.Base(file)
	if i := sort.SearchStrings(names, base); i == len(names) || names[i] != base {
		names = append(names, base)
		sort.Strings(names)
		s.defaults[cfg] = names
	}
	s.files[cfg] = DefaultConfig(names...)
	return cfg
}

// DefaultConfig is the tsconfig.json Hydra checks files under when they have none: TypeScript
// 7's own defaults (those of `tsc --noEmit FILE…`: strict on, types []…), no emit, and the
// files themselves as the only roots.
func DefaultConfig(files ...string) string {
	b, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{"noEmit": true},
		"files":           files,
	})
	return string(b)
}

// close ends the process (closing its stdin ends its read loop; the kill is for a stuck one).
func (s *server) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("typescript api: %w", errClosedServer)
	}
	return s.closeLocked()
}

var errClosedServer = fmt.Errorf("server closed")

func (s *server) closeLocked() error {
	if s.cmd == nil {
		return nil
	}
	s.stdin.Close()
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = s.cmd.Wait()
	s.cmd = nil
	return nil
}

// pid is the process id of the server (0 once closed).
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
