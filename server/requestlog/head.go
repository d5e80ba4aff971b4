package requestlog

import (
	"bytes"
	"strconv"
)

// LongString is the length from which a JSON string of a request body is
// not kept in the log: its content becomes a note of its size. Images sent
// as base64 (POST …/verify, a few of them in one body) are megabytes; kept
// whole, the first one filled the 4 KiB a body keeps and every field
// after it went missing. 1 KiB of text is kept as it is.
const LongString = 1 << 10

// noteEnd ends the note of a long string's size, "[N bytes, not kept]".
const noteEnd = " bytes, not kept]"

// isNote reports whether the content of a JSON string is a note of a long
// string's size (Head): it shows nothing of what the string was.
func isNote(content []byte) bool {
	digits, ok := bytes.CutSuffix(content, []byte(noteEnd))
	if !ok || len(digits) < 2 || digits[0] != '[' {
		return false
	}
	for _, c := range digits[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Head keeps what the log shows of a request body as the handler reads
// it: the whole body when it fits in MaxBody bytes; else its first MaxBody
// bytes, except that in a JSON body (one that starts with '{' or '[') a
// string longer than LongString is kept as a note of its size, so that the
// fields after it are kept too. Nothing is copied once MaxBody bytes are
// kept. The zero Head is ready to use.
type Head struct {
	b     []byte // what is kept of a body over MaxBody
	whole []byte // the body, while it fits in MaxBody
	n     int64  // bytes written

	started, json bool
	inString      bool
	escaped       bool  // the last byte of the string read was a backslash
	start         int   // where the current string's content begins in b
	size          int64 // bytes of the current string's content
}

// Bytes returns what was kept.
func (h *Head) Bytes() []byte {
	if h.n <= MaxBody {
		return h.whole
	}
	return h.b
}

// Full reports whether MaxBody bytes are kept.
func (h *Head) Full() bool { return len(h.b) >= MaxBody }

// Write keeps what it should of p, the next bytes of the body. It never
// fails.
func (h *Head) Write(p []byte) (int, error) {
	n := len(p)
	if h.n += int64(n); h.n <= MaxBody {
		h.whole = append(h.whole, p...)
	} else {
		h.whole = nil
	}
	if !h.started {
		if t := bytes.TrimLeft(p, " \t\r\n"); len(t) > 0 {
			h.started, h.json = true, t[0] == '{' || t[0] == '['
		}
	}
	if !h.json {
		h.keep(p)
		return n, nil
	}
	for len(p) > 0 && !h.Full() {
		if !h.inString {
			i := bytes.IndexByte(p, '"')
			if i < 0 {
				h.keep(p)
				break
			}
			h.keep(p[:i+1])
			p = p[i+1:]
			h.inString, h.escaped, h.start, h.size = true, false, len(h.b), 0
			continue
		}
		// Inside a string: up to its closing quote.
		end := -1
		for i := 0; i < len(p); i++ {
			if h.escaped {
				h.escaped = false
				continue
			}
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				break
			}
			i += j
			if p[i] == '\\' {
				h.escaped = true
				continue
			}
			end = i
			break
		}
		content := p
		if end >= 0 {
			content = p[:end]
		}
		if h.size+int64(len(content)) <= LongString {
			h.keep(content)
		} else if h.size <= LongString {
			h.b = h.b[:min(h.start, len(h.b))] // too long: drop what was kept of it
		}
		h.size += int64(len(content))
		if end < 0 {
			break
		}
		if h.size > LongString {
			h.keep([]byte("[" + strconv.FormatInt(h.size, 10) + noteEnd))
		}
		h.keep([]byte{'"'})
		h.inString = false
		p = p[end+1:]
	}
	return n, nil
}

// keep appends as much of p as MaxBody has room for.
func (h *Head) keep(p []byte) {
	if h.b == nil {
		h.b = make([]byte, 0, 512) // most bodies in one allocation
	}
	if room := MaxBody - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
}
