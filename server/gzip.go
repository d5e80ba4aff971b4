package server

import (
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// gzipMin is the size from which a response is compressed: below it the
// gzip header and the CPU cost more than the bytes saved.
const gzipMin = 1024

// acceptsGzip reports whether r accepts a gzip-encoded response, and is
// not a range request: a range of the compressed form would be counted in
// bytes of the identity form (Content-Range), so ranges go out plain, as
// nginx sends them.
func acceptsGzip(r *http.Request) bool {
	if r.Header.Get("Range") != "" {
		return false
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && !refused(params) {
			return true
		}
	}
	return false
}

// refused reports whether the parameters of a coding in Accept-Encoding
// give it a weight of 0: "q=0", "q=0.000", "Q=0.0" (RFC 9110 §12.4.2).
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		name, value, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return err == nil && q <= 0
		}
	}
	return false
}

// gzipWriter compresses a JSON, HTML, CSS or JavaScript response once it
// passes gzipMin bytes; a shorter one, or one of another type (the backup's
// octet stream, images), goes out as it is. It holds up to gzipMin bytes
// until it knows which.
type gzipWriter struct {
	http.ResponseWriter
	status  int
	held    [gzipMin]byte // the first bytes, until the type and size decide
	n       int           // bytes in held
	gz      *gzip.Writer
	decided bool       // the headers are out, plain or compressed
	pool    *sync.Pool // of *gzip.Writer at BestSpeed: a new one allocates over 800 KB
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.status == 0 {
		g.status = code
	}
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.status == 0 {
		g.status = http.StatusOK
	}
	if !g.decided {
		if !compressible(g.Header()) {
			g.start(false)
		} else if g.n+len(p) < gzipMin {
			g.n += copy(g.held[g.n:], p)
			return len(p), nil
		} else {
			g.start(true)
		}
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

// start sends the headers, with Content-Encoding: gzip when compress, and
// what was held back.
func (g *gzipWriter) start(compress bool) {
	g.decided = true
	h := g.Header()
	h.Add("Vary", "Accept-Encoding")
	if compress {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		if zw, ok := g.pool.Get().(*gzip.Writer); ok {
			zw.Reset(g.ResponseWriter)
			g.gz = zw
		} else {
			g.gz, _ = gzip.NewWriterLevel(g.ResponseWriter, gzip.BestSpeed) // the level is valid: no error
		}
	}
	g.ResponseWriter.WriteHeader(g.status)
	if g.n > 0 {
		if g.gz != nil {
			g.gz.Write(g.held[:g.n])
		} else {
			g.ResponseWriter.Write(g.held[:g.n])
		}
		g.n = 0
	}
}

// close ends the response: what is held back goes out plain.
func (g *gzipWriter) close() {
	if !g.decided {
		if g.status == 0 {
			g.status = http.StatusOK
		}
		g.start(false)
	}
	if g.gz != nil {
		g.gz.Close()
		g.pool.Put(g.gz)
		g.gz = nil
	}
}

// Flush sends what is held back (plain if undecided) and flushes.
func (g *gzipWriter) Flush() {
	if !g.decided {
		g.start(false)
	}
	if g.gz != nil {
		g.gz.Flush()
	}
	http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// compressible reports whether a response with header h is worth
// compressing: text the server generates, not already encoded.
func compressible(h http.Header) bool {
	if h.Get("Content-Encoding") != "" {
		return false
	}
	ct := h.Get("Content-Type")
	return strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/") || strings.HasPrefix(ct, "application/javascript")
}
