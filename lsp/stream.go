package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// maxMessage bounds one message's body; larger ones are skipped with an error response.
const maxMessage = 64 << 20

// maxHeaderLine bounds one header line and maxHeader one message's header block (the LSP's
// headers are two short lines). Bytes past a line's limit are read and dropped up to its newline,
// never buffered; the message is then skipped with an error response, as an oversized body is.
const (
	maxHeaderLine = 4 << 10
	maxHeader     = 64 << 10
)

// stream is the LSP base protocol (Content-Length framed JSON) as a jsonrpc2.ObjectStream that
// survives bad input. sourcegraph/jsonrpc2 closes the connection when a message fails to decode;
// the LSP wants an error response and the server to keep serving, so ReadObject answers a
// malformed message itself (parse error or invalid request, id null unless one can be read) and
// goes on to the next one. Only the end of input or a broken pipe ends the stream.
type stream struct {
	r   *bufio.Reader
	rwc io.ReadWriteCloser

	// wmu serialises writes: the connection's own and the error responses ReadObject sends.
	wmu sync.Mutex

	// logf reports what was skipped (stderr of the server; never stdout, which is the channel).
	logf func(format string, args ...any)
}

func newStream(rwc io.ReadWriteCloser, logf func(string, ...any)) *stream {
	return &stream{r: bufio.NewReaderSize(rwc, 64<<10), rwc: rwc, logf: logf}
}

// WriteObject implements jsonrpc2.ObjectStream.
func (s *stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return s.writeFrame(data)
}

func (s *stream) writeFrame(data []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(data))
	buf.Write(data)
	_, err := s.rwc.Write(buf.Bytes())
	return err
}

// ReadObject implements jsonrpc2.ObjectStream: it returns the next message that decodes.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err != nil {
			if bad, ok := err.(badFrameError); ok {
				s.reject(nil, jsonrpc2.CodeParseError, string(bad))
				continue
			}
			return err
		}
		if err := json.Unmarshal(body, v); err != nil {
			// A failed decode may have filled part of v; start the next one from zero.
			rv := reflect.ValueOf(v).Elem()
			rv.Set(reflect.Zero(rv.Type()))
			s.rejectBody(body, err)
			continue
		}
		return nil
	}
}

// badFrameError is a framing problem that loses only the one message.
type badFrameError string

func (e badFrameError) Error() string { return string(e) }

// readFrame reads one header block and its body.
func (s *stream) readFrame() ([]byte, error) {
	length := -1
	sawHeader := false
	total := 0
	bad := "" // why the message is skipped, once its header block has been read
	for {
		line, long, err := s.readHeaderLine()
		if err != nil {
			return nil, err
		}
		total += len(line)
		switch {
		case long && bad == "":
			bad = fmt.Sprintf("header line over the limit of %d bytes", maxHeaderLine)
		case total > maxHeader && bad == "":
			bad = fmt.Sprintf("header over the limit of %d bytes", maxHeader)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" && !long {
			if !sawHeader {
				total = 0
				continue // stray blank line between messages
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if ok && !long && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				if bad == "" {
					bad = fmt.Sprintf("bad Content-Length header %q", line)
				}
				continue
			}
			length = n
		}
	}
	if bad == "" && length < 0 {
		bad = "message without a Content-Length header"
	}
	if bad == "" && length > maxMessage {
		bad = fmt.Sprintf("message of %d bytes is over the limit of %d", length, maxMessage)
	}
	if bad != "" {
		if length > 0 {
			if _, err := s.r.Discard(length); err != nil {
				return nil, err
			}
		}
		return nil, badFrameError(bad)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// readHeaderLine reads one header line with its newline. A line longer than maxHeaderLine is
// cut there (long is true) and the rest of it, up to its newline, is read and dropped without
// being buffered, so that a header with no newline costs no memory however long it is.
func (s *stream) readHeaderLine() (line string, long bool, err error) {
	var buf []byte
	for {
		frag, err := s.r.ReadSlice('\n')
		if !long {
			if len(buf)+len(frag) > maxHeaderLine {
				long = true
				buf = append(buf, frag[:maxHeaderLine-len(buf)]...)
			} else {
				buf = append(buf, frag...)
			}
		}
		switch {
		case err == nil:
			return string(buf), long, nil
		case err != bufio.ErrBufferFull:
			return "", long, err
		}
	}
}

// rejectBody answers a message that did not decode as a request or response.
func (s *stream) rejectBody(body []byte, err error) {
	if !json.Valid(body) {
		s.reject(nil, jsonrpc2.CodeParseError, "parse error: "+err.Error())
		return
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &probe) // an array or scalar has no id: answer with id null
	var id json.RawMessage
	if len(probe.ID) > 0 {
		id = probe.ID
	}
	s.reject(id, jsonrpc2.CodeInvalidRequest, "invalid request: "+err.Error())
}

// reject writes an error response with the given id (null when nil).
func (s *stream) reject(id json.RawMessage, code int64, msg string) {
	if s.logf != nil {
		s.logf("jsonrpc: rejected a message: %s", msg)
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: code, Message: msg}}
	data, _ := json.Marshal(resp)
	if err := s.writeFrame(data); err != nil && s.logf != nil {
		s.logf("jsonrpc: write error response: %v", err)
	}
}

// Close implements jsonrpc2.ObjectStream.
func (s *stream) Close() error { return s.rwc.Close() }
