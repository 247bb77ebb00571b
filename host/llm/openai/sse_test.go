package openai

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	sr := newSSEReader(r)
	var out []sseEvent
	for {
		ev, err := sr.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"lf terminated", "data: a\n\ndata: b\n\n", []sseEvent{{Data: "a"}, {Data: "b"}}},
		{"crlf terminated", "data: a\r\n\r\ndata: b\r\n\r\n", []sseEvent{{Data: "a"}, {Data: "b"}}},
		{"lone cr terminated", "data: a\r\rdata: b\r\r", []sseEvent{{Data: "a"}, {Data: "b"}}},
		{"multi-line data joins with lf", "data: a\ndata: b\n\n", []sseEvent{{Data: "a\nb"}}},
		{"only one leading space is stripped", "data:  a\ndata:b\n\n", []sseEvent{{Data: " a\nb"}}},
		{"comments and unknown fields carry nothing", ": keep-alive\nid: 7\nretry: 10\ndata: x\n\n: ping\n\n", []sseEvent{{Data: "x"}}},
		{"event name is kept", "event: error\ndata: {}\n\ndata: y\n\n", []sseEvent{{Name: "error", Data: "{}"}, {Data: "y"}}},
		{"leading bom is ignored", "\ufeffdata: a\n\n", []sseEvent{{Data: "a"}}},
		{"blank lines without data dispatch nothing", "\n\n\ndata: a\n\n", []sseEvent{{Data: "a"}}},
		{"unterminated event at eof is dropped", "data: a\n\ndata: [DONE]\n", []sseEvent{{Data: "a"}}},
		{"unterminated line at eof is dropped", "data: a\n\ndata: [DONE]", []sseEvent{{Data: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, reader := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"byte by byte", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got, err := readAll(t, reader.r)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%s: err = %v, want io.EOF", reader.name, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("%s: events = %#v, want %#v", reader.name, got, tt.want)
				}
			}
		})
	}
}

func TestSSEReadErrorIsReturned(t *testing.T) {
	boom := errors.New("connection reset")
	_, err := readAll(t, io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}
