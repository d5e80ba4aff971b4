package requestlog

import (
	"bytes"
	"encoding/base64"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted is what a secret value becomes.
const Redacted = "[redacted]"

// minBase64 is the length from which a string of base64 characters is
// decoded to see whether it is a file (isBlob): enough for a file's
// signature.
const minBase64 = 16

// SecretName reports whether a field, header or parameter name holds a
// secret: any name with secret, password, token, authorization or
// shortcode in it (signingSecret, callbackSecret, X-Api-Secret,
// sessionToken, shortCode: a short code opens its session, SPEC §3.4).
func SecretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"secret", "password", "token", "authorization", "csrf", "shortcode"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// imageName reports whether a member, form field or parameter name is one
// the API takes an image in, base64 or a data: URL: documentFront,
// documentBack, selfie, proofOfAddress and livenessFrames (an array of
// images) of POST …/verify, image of POST …/documents and the hosted UI's
// upload. Their values are redacted whatever their length, where other
// values are only when they look like a blob (minBase64). Case is ignored:
// the API refuses such a body, but the log shows what was sent.
func imageName(name string) bool {
	for _, n := range [...]string{"documentFront", "documentBack", "selfie", "proofOfAddress", "livenessFrames", "image"} {
		if len(name) == len(n) && strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// imageNote is what an image value of n characters becomes.
func imageNote(n int) string { return "[redacted image, " + strconv.Itoa(n) + " chars]" }

// Redact returns a body, possibly cut short anywhere, as text safe to show:
// in JSON the values of secret fields and image members (imageName), long
// base64 strings and data: URLs are replaced and hosted-UI tokens cut out
// of links; in a multipart form file parts are replaced; a binary body is
// replaced whole.
func Redact(contentType string, b []byte) string {
	mt, params, _ := mime.ParseMediaType(contentType)
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		return redactMultipart(b, params["boundary"])
	case mt == "application/x-www-form-urlencoded":
		return RedactQuery(string(b))
	case len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[' || trimmed[0] == '"'):
		return string(redactJSON(trimmed))
	case strings.HasPrefix(mt, "image/") || mt == "application/octet-stream" || mt == "application/pdf" || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0:
		return "[binary body redacted]"
	}
	return string(redactBlobs(redactString(b)))
}

// redactBlobs replaces every run of base64 characters that is a file
// (isBlob) in a text that is not JSON (an image sent as text/plain, say)
// with a note of its length.
func redactBlobs(s []byte) []byte {
	var out []byte
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isBase64Byte(s[i]) {
			run++
			continue
		}
		if run >= minBase64 && isBlob(string(s[i-run:i])) {
			if out == nil {
				out = append(make([]byte, 0, len(s)), s[:i-run]...)
			}
			out = append(out, blob(run)...)
		} else if out != nil {
			out = append(out, s[i-run:i]...)
		}
		if out != nil && i < len(s) {
			out = append(out, s[i])
		}
		run = 0
	}
	if out == nil {
		return s
	}
	return out
}

// RedactQuery redacts the secret parameters, image parameters and base64
// blobs of a query string.
func RedactQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		switch {
		case SecretName(name):
			parts[i] = k + "=" + url.QueryEscape(Redacted)
		case imageName(name) && v != "":
			parts[i] = k + "=" + url.QueryEscape(imageNote(len(v)))
		case isBlob(v):
			parts[i] = k + "=" + url.QueryEscape(blob(len(v)))
		default:
			// The same, percent-encoded (a form's + and / arrive as %2B
			// and %2F), or a data: URL.
			if d, err := url.QueryUnescape(v); err == nil && (strings.HasPrefix(d, "data:") || isBlob(d)) {
				parts[i] = k + "=" + url.QueryEscape(blob(len(d)))
			}
		}
	}
	return strings.Join(parts, "&")
}

func blob(n int) string { return "[redacted base64, " + strconv.Itoa(n) + " chars]" }

// redactJSON rewrites JSON, complete or cut short, string by string: the
// structure is followed only as far as needed to know each string's field.
func redactJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	var (
		stack     []byte   // '{' or '['
		keys      [][]byte // the field name in force at each level
		key       []byte
		expectKey bool
	)
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '{', '[':
			stack = append(stack, c)
			keys = append(keys, key)
			expectKey = c == '{'
		case '}', ']':
			if n := len(stack); n > 0 {
				stack, key, keys = stack[:n-1], keys[n-1], keys[:n-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
			expectKey = false
		case '"':
			end, closed := stringEnd(b, i)
			s := b[i:end]
			if expectKey {
				key = s
				out = append(out, s...)
			} else {
				content := s[1:]
				if closed {
					content = content[:len(content)-1]
				}
				out = appendValue(out, key, content)
			}
			i = end
			continue
		}
		out = append(out, c)
		i++
	}
	return out
}

// stringEnd is the index just past the JSON string starting at b[i] and
// true, or len(b) and false when the body was cut inside it.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

// appendValue appends, quoted and redacted, the content of a JSON string of
// field key (the strings of an array count as its field's): an image
// member's value becomes a note of its length, unless it is empty or
// already Head's note of its size.
func appendValue(out, key, content []byte) []byte {
	name := strings.Trim(string(key), `"`)
	switch {
	case SecretName(name):
		return append(out, `"`+Redacted+`"`...)
	case bytes.HasPrefix(content, []byte("data:")):
		return append(out, `"[redacted data URL, `+strconv.Itoa(len(content))+` chars]"`...)
	case imageName(name) && len(content) > 0 && !isNote(content):
		return append(out, `"`+imageNote(len(content))+`"`...)
	case isBlob(string(content)):
		return append(out, `"`+blob(len(content))+`"`...)
	}
	out = append(out, '"')
	out = append(out, redactString(content)...)
	return append(out, '"')
}

// redactString cuts hosted-UI session tokens and short-link codes out of
// the links in a text: /sdk/{token}, /l/{code}.
func redactString(s []byte) []byte {
	if !bytes.Contains(s, []byte("/sdk/")) && !bytes.Contains(s, []byte("/l/")) {
		return s
	}
	var out []byte
	for len(s) > 0 {
		i, mark := -1, ""
		for _, m := range []string{"/sdk/", "/l/"} {
			if j := bytes.Index(s, []byte(m)); j >= 0 && (i < 0 || j < i) {
				i, mark = j, m
			}
		}
		if i < 0 {
			break
		}
		out = append(out, s[:i+len(mark)]...)
		s = s[i+len(mark):]
		j := 0
		for j < len(s) && s[j] != '/' && s[j] != '?' && s[j] != '"' && s[j] != '\\' && s[j] != ' ' && s[j] != '&' {
			j++
		}
		if j > 0 {
			out = append(out, Redacted...)
		}
		s = s[j:]
	}
	return append(out, s...)
}

// isBlob reports whether s is base64 (either alphabet; JSON may escape
// "/" as "\/") of a file: its first bytes are the signature of an image,
// a PDF, an archive, audio or video (http.DetectContentType, and the
// ISO "ftyp" box of HEIC). Those are redacted wherever they stand (SPEC §7:
// images are). Text that happens to be made of base64 characters, an id or
// a word, decodes to no file and is kept.
func isBlob(s string) bool {
	if len(s) < minBase64 || !isBase64(s) {
		return false
	}
	p := strings.TrimRight(strings.NewReplacer(`\/`, "/", "-", "+", "_", "/").Replace(s[:min(len(s), 96)]), "=")
	b, err := base64.RawStdEncoding.DecodeString(p[:len(p)/4*4]) // the first whole groups are enough
	if err != nil {
		return false
	}
	if len(b) >= 8 && string(b[4:8]) == "ftyp" {
		return true
	}
	ct := http.DetectContentType(b)
	return ct != "application/octet-stream" && !strings.HasPrefix(ct, "text/")
}

// isBase64 reports whether s is made of base64 characters, standard or URL
// safe (JSON may escape "/" as "\/").
func isBase64(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isBase64Byte(s[i]) {
			return false
		}
	}
	return true
}

// isBase64Byte reports whether c can stand in base64 of either alphabet
// (or as JSON's escaped slash).
func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' || c == '-' || c == '_' || c == '\\'
}

// redactMultipart keeps a multipart body's part headers and its text
// fields, redacted as a query would be, and replaces file parts.
func redactMultipart(b []byte, boundary string) string {
	if boundary == "" {
		return "[multipart body redacted]"
	}
	delim := []byte("--" + boundary)
	var out strings.Builder
	parts := bytes.Split(b, delim)
	for i, p := range parts {
		if i > 0 {
			out.Write(delim)
		}
		head, body, ok := bytes.Cut(p, []byte("\r\n\r\n"))
		if !ok {
			out.Write(p)
			continue
		}
		out.Write(head)
		out.WriteString("\r\n\r\n")
		h := strings.ToLower(string(head))
		name := ""
		if _, params, err := mime.ParseMediaType(strings.TrimSpace(afterHeader(h, "content-disposition:"))); err == nil {
			name = params["name"]
		}
		body = bytes.TrimSuffix(body, []byte("\r\n"))
		switch {
		case strings.Contains(h, "filename="):
			out.WriteString("[file redacted, " + strconv.Itoa(len(body)) + " bytes]\r\n")
		case SecretName(name):
			out.WriteString(Redacted + "\r\n")
		case imageName(name) && len(body) > 0:
			out.WriteString(imageNote(len(body)) + "\r\n")
		case isBlob(string(body)), bytes.HasPrefix(body, []byte("data:")):
			out.WriteString(blob(len(body)) + "\r\n")
		case !utf8.Valid(body):
			out.WriteString("[binary redacted]\r\n")
		default:
			out.Write(body)
			out.WriteString("\r\n")
		}
	}
	return out.String()
}

// afterHeader is the value of the header line starting with name (lower
// case) in a part's head, "" when absent.
func afterHeader(head, name string) string {
	for _, line := range strings.Split(head, "\r\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			return v
		}
	}
	return ""
}
