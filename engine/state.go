package engine

import "math/rand"

// StateConfig is what a State shows. The engine fills one per OnNode call; tests and tools can
// build one by hand with NewState.
type StateConfig struct {
	Root      *Node
	PrefixLen int    // len(Request.Prefix): offsets below it were not generated
	Model     string // Request.Model: the model the search asks (policies may learn per model)
	Current   *RolloutView
	Active    []*RolloutView
	Rollouts  []*RolloutView // every rollout so far, by id order
	Errors    []*Node        // error nodes so far, oldest first (the failure history)
	Attempts  int
	Tokens    int // output tokens so far
	Budget    Budget
	Rand      *rand.Rand // nil: a fixed-seed source
}

// State is the search as a policy sees it, read-only. Policies must not keep a State past
// OnNode, nor change the nodes it returns.
type State struct {
	cfg StateConfig
}

// NewState returns a State over cfg.
func NewState(cfg StateConfig) *State {
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewSource(1))
	}
	return &State{cfg: cfg}
}

// Root is the node of the starting prefix.
func (s *State) Root() *Node { return s.cfg.Root }

// Model is the model the search asks (Request.Model).
func (s *State) Model() string { return s.cfg.Model }

// PrefixLen is the length of the request's prefix: offsets below it were not generated.
func (s *State) PrefixLen() int { return s.cfg.PrefixLen }

// Text is the whole checked text up to n.Off, prefix included.
func (s *State) Text(n *Node) string { return n.Text }

// Path returns the nodes from the root to n, root first.
func (s *State) Path(n *Node) []*Node {
	var rev []*Node
	for x := n; x != nil; x = x.Parent {
		rev = append(rev, x)
	}
	path := make([]*Node, len(rev))
	for i, x := range rev {
		path[len(rev)-1-i] = x
	}
	return path
}

// Candidates returns the rollback candidates for the error node e: the root and the progress
// nodes on e's path that lie before e's offset, oldest first (c1 ≤ … ≤ cm).
func (s *State) Candidates(e *Node) []*Node {
	var out []*Node
	for _, x := range s.Path(e) {
		if x == e {
			break
		}
		if (x.Kind == NodeRoot || x.Kind == NodeProgress) && !x.Pruned && x.Off <= e.Off {
			out = append(out, x)
		}
	}
	return out
}

// Current is the rollout that produced the node being handled.
func (s *State) Current() *RolloutView { return s.cfg.Current }

// Rollout returns the rollout with the given id, or nil.
func (s *State) Rollout(id int) *RolloutView {
	for _, r := range s.cfg.Rollouts {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Active returns the live rollouts.
func (s *State) Active() []*RolloutView { return s.cfg.Active }

// Errors returns the error nodes seen so far, oldest first.
func (s *State) Errors() []*Node { return s.cfg.Errors }

// Attempts is the number of rollouts started so far.
func (s *State) Attempts() int { return s.cfg.Attempts }

// OutputTokens is the number of output tokens generated so far.
func (s *State) OutputTokens() int { return s.cfg.Tokens }

// Budget is the search's budget.
func (s *State) Budget() Budget { return s.cfg.Budget }

// Rand is the search's deterministic random source (for randomised policies).
func (s *State) Rand() *rand.Rand { return s.cfg.Rand }
