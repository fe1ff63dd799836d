package typescript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// rpc speaks JSON-RPC 2.0 with LSP's Content-Length framing, the transport of `tsc --api
// --async` (the client in typescript's dist/api/async/client.js uses vscode-jsonrpc's
// StreamMessageReader/Writer on the child's stdio). Calls are synchronous: call writes a
// request and reads messages until its response arrives, answering the server's own requests
// (the virtual file system callbacks) on the way. The owner serialises calls.
type rpc struct {
	w      io.Writer
	r      *bufio.Reader
	nextID int64
	// serve answers a request from the server (method, params) with a result.
	serve func(method string, params json.RawMessage) any
}

// message is any JSON-RPC message: a request (Method set, ID set), a notification (Method set,
// no ID) or a response (ID set, Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// write sends one framed message.
func (c *rpc) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(b)); err != nil {
		return err
	}
	_, err = c.w.Write(b)
	return err
}

// read receives one framed message.
func (c *rpc) read() (*message, error) {
	n := -1
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("message without Content-Length")
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c.r, buf); err != nil {
		return nil, err
	}
	var m message
	if err := json.Unmarshal(buf, &m); err != nil {
		return nil, fmt.Errorf("bad message: %w", err)
	}
	return &m, nil
}

// call sends a request and decodes its result into out (nil: ignore it).
func (c *rpc) call(method string, params, out any) error {
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	req := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", c.nextID, method, params}
	if err := c.write(req); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	for {
		m, err := c.read()
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // the server asks (a file system callback)
			resp := struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  any             `json:"result"`
			}{"2.0", m.ID, c.serve(m.Method, m.Params)}
			if err := c.write(resp); err != nil {
				return fmt.Errorf("%s: answering %s: %w", method, m.Method, err)
			}
		case m.Method != "": // a notification: nothing to do
		case string(m.ID) == id:
			if m.Error != nil {
				return fmt.Errorf("%s: %w", method, m.Error)
			}
			if out == nil || len(m.Result) == 0 {
				return nil
			}
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("%s: result: %w", method, err)
			}
			return nil
		}
	}
}
