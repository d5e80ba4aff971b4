package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"
)

// rawGet fetches path without the client's transparent decompression, so
// the test sees the bytes on the wire.
func rawGet(t *testing.T, in *instance, path, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", in.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", in.Key)
	req.Header.Set("X-Api-Secret", in.Secret)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestGzip: a client that accepts gzip gets a large JSON answer
// (/openapi.json, a list) compressed, with Vary: Accept-Encoding, and the
// same bytes once decompressed; a small answer, a client that does not
// ask, or one that refuses with q=0, gets it plain.
func TestGzip(t *testing.T) {
	t.Parallel()
	in := start(t)
	plainResp, plain := rawGet(t, in, "/openapi.json", "")
	if plainResp.Header.Get("Content-Encoding") != "" || len(plain) < 50_000 {
		t.Fatalf("plain: Content-Encoding %q, %d bytes", plainResp.Header.Get("Content-Encoding"), len(plain))
	}
	resp, zipped := rawGet(t, in, "/openapi.json", "br;q=1.0, gzip;q=0.8")
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("Content-Encoding %q, Vary %q", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unzipped, plain) {
		t.Fatalf("decompressed document differs from the plain one")
	}
	t.Logf("/openapi.json: %d bytes plain, %d gzipped", len(plain), len(zipped))

	for range 12 {
		in.vault("v")
	}
	if resp, _ := rawGet(t, in, "/vaults", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" || resp.StatusCode != 200 {
		t.Errorf("GET /vaults (12 vaults): %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	if resp, b := rawGet(t, in, "/healthz", "gzip"); resp.Header.Get("Content-Encoding") != "" || string(b) != `{"status":"ok"}`+"\n" && string(b) != `{"status":"ok"}` {
		t.Errorf("small answer: Content-Encoding %q, body %q", resp.Header.Get("Content-Encoding"), b)
	}
	// A weight of 0 refuses the coding however it is written (RFC 9110
	// §12.4.2); a weight above 0 accepts it.
	for _, refused := range []string{"gzip;q=0", "gzip;q=0.0", "gzip; q=0.000", "gzip;Q=0", "br, gzip ; q = 0.00"} {
		if resp, _ := rawGet(t, in, "/openapi.json", refused); resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: Content-Encoding %q", refused, resp.Header.Get("Content-Encoding"))
		}
	}
	if resp, _ := rawGet(t, in, "/openapi.json", "gzip;q=0.001"); resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip;q=0.001: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	if resp, _ := rawGet(t, in, "/vaults/nope", "gzip"); resp.StatusCode != 404 || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("small error: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
}

// TestGzipNotForRanges: a range request gets its bytes plain, since a
// Content-Range counts bytes of the identity form (RFC 9110 §14.4).
func TestGzipNotForRanges(t *testing.T) {
	t.Parallel()
	in := start(t)
	req, err := http.NewRequest("GET", in.URL+"/sdk-assets/app.js", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("Range", "bytes=0-4999")
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusPartialContent || resp.Header.Get("Content-Encoding") != "" || len(b) != 5000 {
		t.Errorf("range: %d, Content-Encoding %q, %d bytes, want 206 with 5000 plain bytes", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(b))
	}
}
