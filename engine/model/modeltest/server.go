package modeltest

import "net/http/httptest"

// TB is the part of testing.TB that NewServer uses. It is an interface of its own so that the
// package does not import "testing": `hydra sim-server --script` links it into the hydra binary.
type TB interface {
	Helper()
	Cleanup(func())
}

// Server is a running scripted stand-in on a local httptest server.
type Server struct {
	// URL is the API base as OpenAI clients take it: http://127.0.0.1:PORT/v1.
	URL string
	*Handler
	srv *httptest.Server
}

// NewServer starts a stand-in answering from script; it is closed when t ends.
func NewServer(t TB, script Script) *Server {
	t.Helper()
	h := NewHandler(script)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL + "/v1", Handler: h, srv: srv}
}

// Close stops the server now (e.g. to test a model server that went away). It is safe to call
// again at cleanup.
func (s *Server) Close() { s.srv.Close() }
