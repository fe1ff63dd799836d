package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/hydra-lsp/hydra/engine/model/modeltest"
	"github.com/hydra-lsp/hydra/sim"
)

func init() {
	commands["sim-server"] = command{
		summary: "serve a stand-in model (simulated, or scripted with --script) over an OpenAI-compatible API",
		run:     runSimServer,
	}
}

// runSimServer serves a stand-in for a language model until SIGINT/SIGTERM. The first line on
// stdout is the API base URL (http://HOST:PORT/v1) for clients to use.
func runSimServer(args []string) int {
	fs := flag.NewFlagSet("sim-server", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: hydra sim-server [--addr HOST:PORT] [--script FILE.json | simulator flags]

Serves a STAND-IN for a language model over an OpenAI-compatible API (/v1/completions,
/v1/models). It is never a real model. The first line on stdout is the API base URL.

With --script, answers from the scripted rules of FILE.json (see package
engine/model/modeltest); without, runs the simulated model of package sim.

`)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	script := fs.String("script", "", "answer from the scripted rules in this JSON file instead of the simulator")
	sim := addSimFlags(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hydra sim-server: unexpected arguments %q\n", fs.Args())
		return 2
	}

	var h http.Handler
	var what string
	if *script != "" {
		s, err := modeltest.LoadScript(*script)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hydra sim-server: %v\n", err)
			return 2
		}
		h = modeltest.NewHandler(s)
		what = fmt.Sprintf("scripted stand-in (%d rules from %s), not a model", len(s.Rules), *script)
	} else {
		var err error
		h, what, err = sim.handler()
		if err != nil {
			fmt.Fprintf(os.Stderr, "hydra sim-server: %v\n", err)
			return 2
		}
	}

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hydra sim-server: listen: %v\n", err)
		return 2
	}
	url := "http://" + l.Addr().String() + "/v1"
	fmt.Println(url)
	fmt.Fprintf(os.Stderr, "hydra sim-server: %s, serving at %s\n", what, url)

	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		fmt.Fprintf(os.Stderr, "hydra sim-server: %v\n", err)
		return 2
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return 0
}

// simFlags are the simulated model's flags (package sim).
type simFlags struct {
	data                          string
	tasks                         int
	seed                          int64
	profile                       string
	tokenLatency                  time.Duration
	prefillRate                   float64
	timeScale                     float64
	errorRate, localFrac, farFrac float64
	fixProb, newFaultRate         float64
	spec                          string
	prepare                       bool
	printAssumptions              bool
}

func addSimFlags(fs *flag.FlagSet) *simFlags {
	d := sim.DefaultOptions()
	f := &simFlags{}
	fs.StringVar(&f.data, "data", "", "directory of the task data (default: $HYDRA_DATA, else ../shared/data next to the repository)")
	fs.IntVar(&f.tasks, "tasks", 0, "serve only this many tasks, chosen by --seed (0: all)")
	fs.Int64Var(&f.seed, "seed", d.Seed, "seed of every draw (tasks, faults, fixes)")
	fs.StringVar(&f.profile, "profile", d.Profile.Name, "latency profile: gpt-oss-120b (7 ms/token) or qwen32b (30 ms/token)")
	fs.DurationVar(&f.tokenLatency, "token-latency", 0, "time per output token (default: the profile's)")
	fs.Float64Var(&f.prefillRate, "prefill-rate", 0, "prompt tokens prefilled per second when not cached (default: the profile's)")
	fs.Float64Var(&f.timeScale, "time-scale", d.TimeScale, "multiply every simulated wait (0.1 = ten times faster, 0 = no waiting)")
	fs.Float64Var(&f.errorRate, "error-rate", d.ErrorRate, "share of tasks whose first attempt has a static error")
	fs.Float64Var(&f.localFrac, "local-frac", d.LocalFrac, "share of faults fixable on the error's line")
	fs.Float64Var(&f.farFrac, "far-frac", d.FarFrac, "share of faults needing a rollback past half-way")
	fs.Float64Var(&f.fixProb, "fix-prob", d.FixProb, "chance that a retry regenerating a fault's root fixes it")
	fs.Float64Var(&f.newFaultRate, "new-fault-rate", d.NewFaultRate, "chance that a retry makes a new fault (scaled by the share regenerated)")
	fs.StringVar(&f.spec, "sim", "", "simulator parameters as name=value pairs, applied after the flags above (names: "+strings.Join(sim.ParamNames(), ", ")+")")
	fs.BoolVar(&f.prepare, "prepare", false, "plan every served task's faults (with clang) before serving")
	fs.BoolVar(&f.printAssumptions, "assumptions", false, "print the simulator's assumptions as JSON on stderr")
	return f
}

// handler builds the simulated model from the flags.
func (f *simFlags) handler() (http.Handler, string, error) {
	o := sim.DefaultOptions()
	p, ok := sim.Profiles[f.profile]
	if !ok {
		return nil, "", fmt.Errorf("unknown profile %q (want gpt-oss-120b or qwen32b)", f.profile)
	}
	if f.tokenLatency > 0 {
		p.TokenLatency = f.tokenLatency
	}
	if f.prefillRate > 0 {
		p.PrefillRate = f.prefillRate
	}
	dir := f.data
	if dir == "" {
		var err error
		if dir, err = sim.DataDir(); err != nil {
			return nil, "", err
		}
	}
	tasks, err := sim.LoadTasks(dir)
	if err != nil {
		return nil, "", err
	}
	o.Tasks = sim.Select(tasks, f.tasks, f.seed)
	o.Seed, o.Profile, o.TimeScale = f.seed, p, f.timeScale
	o.ErrorRate, o.LocalFrac, o.FarFrac = f.errorRate, f.localFrac, f.farFrac
	o.FixProb, o.NewFaultRate = f.fixProb, f.newFaultRate
	if err := o.SetParams(f.spec); err != nil {
		return nil, "", err
	}
	s, err := sim.NewServer(o)
	if err != nil {
		return nil, "", err
	}
	if f.printAssumptions {
		b, _ := json.MarshalIndent(s.Assumptions(), "", "  ")
		fmt.Fprintf(os.Stderr, "%s\n", b)
	}
	if f.prepare {
		if err := s.Prepare(context.Background(), nil, runtime.NumCPU()); err != nil {
			return nil, "", err
		}
	}
	what := fmt.Sprintf("%s — a SIMULATED model, not a real one (%d tasks, profile %s, time scale %g, error rate %g, seed %d)",
		sim.ModelName, len(o.Tasks), p.Name, o.TimeScale, o.ErrorRate, o.Seed)
	return s, what, nil
}
