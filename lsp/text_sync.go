package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hydra-lsp/hydra/checkers/lang"
)

// document is an open text document as the client last described it.
type document struct {
	uri     string
	path    string // the file's path for file: URIs, else ""
	lang    string // "c", "cpp" or another languageId
	version int
	text    string
	// gens are the generations writing into this document, in start order.
	gens []*generation
	// diags are the Hydra diagnostics last published for it, following its changes
	// (diagnostics.go).
	diags []hydraDiag
	// inline cancels its running inline completions, by request (inline_completion.go).
	inline map[int]context.CancelCauseFunc
}

// isCFamily says whether the document is C or C++ (its compile flags, its preamble's warm start).
func (d *document) isCFamily() bool { return d.lang == "c" || d.lang == "cpp" }

// language is the document's language in the language seam (checkers/lang): C/C++ for "c" and
// "cpp", the language that serves its languageId otherwise, nil where Hydra does not generate.
func (d *document) language() *lang.Language {
	if d.isCFamily() {
		return lang.C
	}
	if l := lang.ForLanguageID(d.lang); l != nil && l != lang.C {
		return l
	}
	return nil
}

// languageOf normalises a languageId, falling back on the file extension.
func languageOf(languageID, path string) string {
	switch strings.ToLower(languageID) {
	case "c":
		return "c"
	case "cpp", "c++", "cuda-cpp", "objective-cpp":
		return "cpp"
	case "":
	default:
		return languageID
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".c":
		return "c"
	case ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h", ".ipp", ".tpp":
		return "cpp"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "typescriptreact"
	}
	return languageID
}

// uriPath returns the path of a file: URI ("" for other schemes).
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// didOpen starts tracking a document (and warming its preamble).
func (s *Server) didOpen(_ context.Context, params json.RawMessage) error {
	var p DidOpenTextDocumentParams
	if err := decodeParams("textDocument/didOpen", params, &p); err != nil {
		return err
	}
	path := uriPath(p.TextDocument.URI)
	d := &document{
		uri:     p.TextDocument.URI,
		path:    path,
		lang:    languageOf(p.TextDocument.LanguageID, path),
		version: p.TextDocument.Version,
		text:    p.TextDocument.Text,
	}
	s.mu.Lock()
	if old := s.docs[d.uri]; old != nil {
		for _, g := range old.gens {
			g.stopLocked(reasonClosed)
		}
	}
	s.docs[d.uri] = d
	s.mu.Unlock()
	s.scheduleWarm(d.uri)
	return nil
}

// didChange applies the client's changes in order. Each change is also shown to every
// generation writing into the document: its own edits coming back are recognised, the user's
// edits move its region (before it) or stop it (inside it).
func (s *Server) didChange(_ context.Context, params json.RawMessage) error {
	var p DidChangeTextDocumentParams
	if err := decodeParams("textDocument/didChange", params, &p); err != nil {
		return err
	}
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		s.mu.Unlock()
		return fmt.Errorf("didChange for %s, which is not open", p.TextDocument.URI)
	}
	var err error
	diagsMoved := false
	if len(p.ContentChanges) > 0 {
		cancelInlineLocked(d) // they answer for the text as it was
	}
	for _, c := range p.ContentChanges {
		old := d.text
		var ch change
		d.text, ch, err = applyChange(old, c, s.enc)
		if err != nil {
			// The client and the server disagree about the text; the next full change or
			// reopen repairs it. Generations stop: their regions can no longer be trusted.
			for _, g := range d.gens {
				g.stopLocked(reasonDesync)
			}
			err = fmt.Errorf("didChange %s v%d: %w", d.uri, p.TextDocument.Version, err)
			break
		}
		for _, g := range d.gens {
			g.observeLocked(old, d.text, ch)
		}
		diagsMoved = followDiagsLocked(d, old, ch) || diagsMoved
	}
	d.version = p.TextDocument.Version
	for _, g := range d.gens {
		g.versionSeenLocked(d.version)
	}
	var diags []Diagnostic
	if diagsMoved {
		diags = s.diagsNowLocked(d)
	}
	version := d.version
	s.mu.Unlock()
	if diagsMoved {
		// Diagnostics follow the document: cleared when their lines change, moved otherwise.
		s.notify("textDocument/publishDiagnostics", PublishDiagnosticsParams{URI: d.uri, Version: &version, Diagnostics: diags})
	}
	s.scheduleWarm(p.TextDocument.URI)
	return err
}

// didClose forgets a document and stops its generations.
func (s *Server) didClose(_ context.Context, params json.RawMessage) error {
	var p DidCloseTextDocumentParams
	if err := decodeParams("textDocument/didClose", params, &p); err != nil {
		return err
	}
	s.mu.Lock()
	d := s.docs[p.TextDocument.URI]
	delete(s.docs, p.TextDocument.URI)
	if d != nil {
		for _, g := range d.gens {
			g.stopLocked(reasonClosed)
		}
	}
	s.mu.Unlock()
	if s.warm != nil {
		s.warm.forget(p.TextDocument.URI)
	}
	return nil
}
