package openai

import (
	"bufio"
	"bytes"
	"io"
)

// maxSSELine bounds one event-stream line; a longer line is a malformed
// stream, not something to buffer without limit.
const maxSSELine = 16 << 20

// sseReader decodes a server-sent event stream into event payloads. Framing
// follows the event-stream format strictly: lines end in CRLF, LF or CR; an
// event dispatches only on its blank-line terminator, so an unterminated
// tail at EOF is truncation and is dropped; comment lines and fields other
// than data and event carry no payload. Comments still count as activity for
// the idle watchdog because their bytes complete a pending read, but next
// returns only on data, so they do not hold off the keep-alive limit.
type sseReader struct {
	sc        *bufio.Scanner
	data      bytes.Buffer
	hasData   bool
	event     string
	afterLine bool
}

type sseEvent struct {
	Name string // the event field; "" for the default message event
	Data string
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	sc.Split(splitSSELines)
	return &sseReader{sc: sc}
}

// next returns the next dispatched event, io.EOF at the end of the stream,
// or the read error.
func (r *sseReader) next() (sseEvent, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if !r.afterLine {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
			r.afterLine = true
		}
		if len(line) == 0 {
			if !r.hasData {
				r.event = ""
				continue
			}
			ev := sseEvent{Name: r.event, Data: string(bytes.TrimSuffix(r.data.Bytes(), []byte("\n")))}
			r.data.Reset()
			r.hasData, r.event = false, ""
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], bytes.TrimPrefix(line[i+1:], []byte(" "))
		}
		switch string(field) {
		case "data":
			r.data.Write(value)
			r.data.WriteByte('\n')
			r.hasData = true
		case "event":
			r.event = string(value)
		}
	}
	if err := r.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// splitSSELines splits on CRLF, LF or a lone CR. An unterminated final line
// is consumed without being returned.
func splitSSELines(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF {
			return len(data), nil, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	default:
		// A CR at the end of the buffer may be the first half of a CRLF.
		return 0, nil, nil
	}
}
