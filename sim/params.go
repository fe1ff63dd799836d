package sim

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// paramFields maps the names of the simulator's behaviour parameters, as `hydra bench --sim`
// and `hydra sim-server --sim` take them, to their fields in Options.
var paramFields = map[string]func(*Options) *float64{
	"error-rate":  func(o *Options) *float64 { return &o.ErrorRate },
	"local":       func(o *Options) *float64 { return &o.LocalFrac },
	"far":         func(o *Options) *float64 { return &o.FarFrac },
	"fix":         func(o *Options) *float64 { return &o.FixProb },
	"sticky":      func(o *Options) *float64 { return &o.Stickiness },
	"logprob-auc": func(o *Options) *float64 { return &o.LogprobAUC },
	"new-fault":   func(o *Options) *float64 { return &o.NewFaultRate },
}

// ParamNames are the parameter names SetParams accepts, sorted.
func ParamNames() []string {
	out := make([]string, 0, len(paramFields))
	for k := range paramFields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SetParam sets one behaviour parameter by name (see ParamNames) to v in [0, 1].
func (o *Options) SetParam(name string, v float64) error {
	f, ok := paramFields[name]
	if !ok {
		return fmt.Errorf("unknown simulator parameter %q (known: %s)", name, strings.Join(ParamNames(), ", "))
	}
	if math.IsNaN(v) || v < 0 || v > 1 {
		return fmt.Errorf("simulator parameter %s=%v is not in [0, 1]", name, v)
	}
	*f(o) = v
	return nil
}

// Param returns the value of a behaviour parameter by name (0 for an unknown name).
func (o Options) Param(name string) float64 {
	if f, ok := paramFields[name]; ok {
		return *f(&o)
	}
	return 0
}

// Params returns every behaviour parameter by name.
func (o Options) Params() map[string]float64 {
	out := map[string]float64{}
	for k, f := range paramFields {
		out[k] = *f(&o)
	}
	return out
}

// SetParams applies a spec such as "local=0.1,far=0.6,fix=0.5,logprob-auc=0.6,new-fault=0.17":
// comma-separated name=value pairs (names: ParamNames). Parameters it does not name keep their
// values. It fails, naming the bad pair, on anything else, and then leaves o unchanged.
func (o *Options) SetParams(spec string) error {
	next := *o
	for _, kv := range strings.Split(spec, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("simulator parameter %q is not name=value", kv)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("simulator parameter %s: %q is not a number", k, v)
		}
		if err := next.SetParam(strings.TrimSpace(k), x); err != nil {
			return err
		}
	}
	if next.LocalFrac+next.FarFrac > 1 {
		return fmt.Errorf("simulator parameters local=%v and far=%v add up to more than 1", next.LocalFrac, next.FarFrac)
	}
	*o = next
	return nil
}
