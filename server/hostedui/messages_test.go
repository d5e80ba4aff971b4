package hostedui

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestMessagesComplete: every reject label has a sentence in every
// language, every English key has a German one, and no message the
// applicant reads uses a code (issue 11, defect 4).
func TestMessagesComplete(t *testing.T) {
	t.Parallel()
	m := sdkMessages()
	for _, lang := range sdkLanguages() {
		for _, l := range store.RejectLabels() {
			s := m[lang]["label."+l]
			if s == "" || strings.Contains(s, "_") {
				t.Errorf("%s: label %s has no plain sentence: %q", lang, l, s)
			}
		}
		for k := range m["en"] {
			if _, ok := m[lang][k]; !ok {
				t.Errorf("%s lacks %s", lang, k)
			}
		}
	}
}

// TestFieldProblem pins the image rules of package imagecheck that the
// hosted UI turns into plain words: if the store's wording changes, this
// fails rather than the applicant reading "could not be read".
func TestFieldProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data  []byte
		photo bool
		want  string
	}{
		{[]byte("not an image"), false, "err.image.type"},
		{[]byte("%PDF-1.7\nx\n%%EOF"), true, "err.image.type.photo"},
		{tinyPNG(t), false, "err.image.small"},
	} {
		_, err := store.DecodeImage("front", "data:image/png;base64,"+b64(c.data), !c.photo)
		e := store.AsError(err)
		if got := fieldProblem("front", e.Message); got != c.want {
			t.Errorf("%q: %s for %q, want %s", c.data[:4], got, e.Message, c.want)
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// tinyPNG is a valid 10×10 PNG, under the 200×200 minimum.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 10, 10))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
