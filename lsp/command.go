package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// generateArgs is hydra.generate's argument (the contract with the editor clients, and what the
// code action's command carries): a document and a cursor position or a selection.
type generateArgs struct {
	URI      string    `json:"uri"`
	Position *Position `json:"position"`
	Range    *Range    `json:"range"`
}

// cancelArgs is hydra.cancel's optional argument.
type cancelArgs struct {
	URI string `json:"uri"`
}

// executeCommand runs hydra.generate (returning its summary when the generation ends) and
// hydra.cancel.
func (s *Server) executeCommand(ctx context.Context, params json.RawMessage) (any, error) {
	var p ExecuteCommandParams
	if err := decodeParams("workspace/executeCommand", params, &p); err != nil {
		return nil, err
	}
	switch p.Command {
	case CommandGenerate:
		if len(p.Arguments) != 1 {
			return nil, invalidParams(CommandGenerate, fmt.Errorf("want one argument {uri, position|range}, got %d", len(p.Arguments)))
		}
		var a generateArgs
		if err := json.Unmarshal(p.Arguments[0], &a); err != nil {
			return nil, invalidParams(CommandGenerate, err)
		}
		if a.URI == "" || (a.Position == nil && a.Range == nil) {
			return nil, invalidParams(CommandGenerate, errors.New("argument needs uri and position or range"))
		}
		t := target{URI: a.URI, Range: a.Range}
		if a.Position != nil {
			t.Position = *a.Position
		}
		sum, err := s.generate(ctx, t, p.WorkDoneToken)
		if err != nil {
			if !s.cfg.get().ClientShowsSummary {
				s.showMessage(MessageWarning, "hydra: "+err.Error())
			}
			return nil, err
		}
		return sum, nil
	case CommandCancel:
		uri := ""
		if len(p.Arguments) > 0 {
			var a cancelArgs
			if err := json.Unmarshal(p.Arguments[0], &a); err != nil {
				return nil, invalidParams(CommandCancel, err)
			}
			uri = a.URI
		}
		return map[string]int{"cancelled": s.cancelGenerations(uri)}, nil
	case CommandShowTrace:
		return s.showTrace(ctx, p.Arguments)
	default:
		return nil, invalidParams("workspace/executeCommand", fmt.Errorf("unknown command %q", p.Command))
	}
}

// cancelGenerations stops the generations of uri ("" = all) and says how many there were.
func (s *Server) cancelGenerations(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, g := range s.gens {
		if (uri == "" || g.uri == uri) && g.stopReason == "" {
			g.stopLocked(reasonCancelled)
			n++
		}
	}
	return n
}
