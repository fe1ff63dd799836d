package openaiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

var testModel = Model{Name: "test-stand-in", OwnedBy: "tests", CompletionID: "cmpl-test"}

func TestReadRequestNormalisesStopAndLogprobs(t *testing.T) {
	for _, tc := range []struct {
		name, body   string
		wantStop     []string
		wantLogprobs int
		wantCont     bool
	}{
		{"no stop", `{"prompt":"p"}`, nil, 0, false},
		{"stop as a string", `{"prompt":"p","stop":"\n\n"}`, []string{"\n\n"}, 0, false},
		{"stop as a list keeps empty strings and drops others", `{"prompt":"p","stop":["a","",3,"b"]}`, []string{"a", "", "b"}, 0, false},
		{"logprobs and continuous usage", `{"prompt":"p","logprobs":2,"stream_options":{"continuous_usage_stats":true}}`, nil, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			req, ok := testModel.ReadRequest(w, httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(tc.body)))
			if !ok {
				t.Fatalf("rejected: %d %s", w.Code, w.Body)
			}
			if req.Prompt != "p" || !slices.Equal(req.Stop, tc.wantStop) || req.Logprobs != tc.wantLogprobs || req.ContinuousUsage != tc.wantCont {
				t.Errorf("got %+v; want stop %q, logprobs %d, continuous %v", req, tc.wantStop, tc.wantLogprobs, tc.wantCont)
			}
		})
	}
}

func TestReadRequestRejectsBadBodies(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{`, "test-stand-in: bad request body"},
		{"prompt list", `{"prompt":["a","b"]}`, "test-stand-in: prompt must be one string"},
		{"no prompt", `{}`, "test-stand-in: prompt must be one string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if _, ok := testModel.ReadRequest(w, httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(tc.body))); ok {
				t.Fatal("accepted")
			}
			var body struct {
				Error struct {
					Message, Type string
					Code          int
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if w.Code != 400 || body.Error.Code != 400 || body.Error.Type != "test-stand-in" || !strings.HasPrefix(body.Error.Message, tc.want) {
				t.Errorf("got %d %+v; want 400 with message %q", w.Code, body.Error, tc.want)
			}
		})
	}
}

func TestServeRoutes(t *testing.T) {
	completed := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testModel.Serve(w, r, func(http.ResponseWriter, *http.Request) { completed++ })
	})
	for _, tc := range []struct {
		method, path string
		wantCode     int
		wantBody     string
	}{
		{http.MethodGet, "/v1/models", 200, `"owned_by":"tests"`},
		{http.MethodGet, "/models", 200, `"id":"test-stand-in"`},
		{http.MethodPost, "/v1/completions", 200, ""},
		{http.MethodGet, "/v1/completions", 404, "test-stand-in: no route GET /v1/completions"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}")))
		if w.Code != tc.wantCode || !strings.Contains(w.Body.String(), tc.wantBody) {
			t.Errorf("%s %s: got %d %s; want %d with %q", tc.method, tc.path, w.Code, w.Body, tc.wantCode, tc.wantBody)
		}
	}
	if completed != 1 {
		t.Errorf("completions handler ran %d times, want 1", completed)
	}
}

func TestStreamWritesEventsThenDone(t *testing.T) {
	w := httptest.NewRecorder()
	s := StartStream(w)
	s.Send(testModel.Event("ab", nil, nil))
	s.Send(testModel.Event("c", "stop", Logprobs([]string{"c"}, []float64{-0.5}, nil)))
	s.Send(testModel.UsageEvent(Usage(3, 2, 1)))
	s.Done()
	if ct := w.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	events := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
	if len(events) != 4 || events[3] != "data: [DONE]" {
		t.Fatalf("events %q; want 3 data events and [DONE]", events)
	}
	type event struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Text         string         `json:"text"`
			FinishReason *string        `json:"finish_reason"`
			Logprobs     map[string]any `json:"logprobs"`
		} `json:"choices"`
		Usage *struct {
			Prompt  int `json:"prompt_tokens"`
			Total   int `json:"total_tokens"`
			Details struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	ev := make([]event, 3)
	for i, e := range events[:3] {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok {
			t.Fatalf("event %q lacks data:", e)
		}
		if err := json.Unmarshal([]byte(data), &ev[i]); err != nil {
			t.Fatal(err)
		}
	}
	if ev[0].ID != "cmpl-test" || ev[0].Model != "test-stand-in" || ev[0].Choices[0].Text != "ab" || ev[0].Choices[0].FinishReason != nil || ev[0].Choices[0].Logprobs != nil {
		t.Errorf("first event %+v", ev[0])
	}
	if c := ev[1].Choices[0]; c.FinishReason == nil || *c.FinishReason != "stop" || c.Logprobs["tokens"] == nil {
		t.Errorf("last piece %+v; want finish stop with logprobs", c)
	}
	if u := ev[2].Usage; len(ev[2].Choices) != 0 || u == nil || u.Prompt != 3 || u.Total != 5 || u.Details.Cached != 1 {
		t.Errorf("usage event %+v", ev[2])
	}
}
