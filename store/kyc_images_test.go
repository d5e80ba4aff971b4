package store_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagecheck"
	"github.com/complybox/complybox/store/imagequality"
)

// TestVerifyRefusesImageBomb: direct verification refuses a 7000×7000 PNG
// of zeros (190 KB, 196 MB decoded) with EINVALID naming the field, from
// its header.
func TestVerifyRefusesImageBomb(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	newApplicant(t, s, "u1", "basic-kyc-level")
	bomb, err := os.ReadFile("imagecheck/testdata/bomb-7000x7000.png")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Verify(store.Sandbox, "u1", store.VerifyInput{IDDocType: "PASSPORT", Country: "DEU",
		DocumentFront: pngBase64(t, 200, 200, 1), Selfie: base64.StdEncoding.EncodeToString(bomb)})
	if e := store.AsError(err); err == nil || e.Code != store.EINVALID || e.Field != "selfie" {
		t.Fatalf("Verify with a 49-megapixel selfie: %v, want EINVALID naming selfie", err)
	}
}

// TestUploadWhileDecoderBusy: with the process's decode budget taken and no
// room to wait, an upload is turned away with EUNAVAILABLE and a
// Retry-After instead of decoding more; it goes through once the budget is
// free.
func TestUploadWhileDecoderBusy(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	newApplicant(t, s, "u1", "basic-kyc-level")
	l := imagecheck.NewLimiter(64<<20, 0)
	store.SetDecodeLimiter(s, l)
	hold, err := l.Acquire(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	in := store.DocumentInput{Kind: store.StepSelfie, Image: pngBase64(t, 200, 200, 1)}
	_, err = s.AddDocument(store.Sandbox, "u1", in)
	if e := store.AsError(err); err == nil || e.Code != store.EUNAVAILABLE || e.RetryAfter < time.Second {
		t.Fatalf("AddDocument with the decoder busy: %v, want EUNAVAILABLE with a Retry-After", err)
	}
	hold()
	if _, err := s.AddDocument(store.Sandbox, "u1", in); err != nil {
		t.Fatal(err)
	}
}

// TestAssessImageWithinTheChecks: the hosted UI's photo checks measure an
// image decoded under the checks and the decode budget of every upload.
// A dark PNG is measured; a PDF is not; the 49-megapixel bomb is refused
// from its header, and nothing is decoded while the budget is taken.
// (The UI decoded every upload for its checks itself before, with no
// bound at all.)
func TestAssessImageWithinTheChecks(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	th := imagequality.DefaultThresholds()
	dark := image.NewGray(image.Rect(0, 0, 800, 600))
	var b bytes.Buffer
	if err := png.Encode(&b, dark); err != nil {
		t.Fatal(err)
	}
	if rep, ok := s.AssessImage(b.Bytes(), th); !ok || !slices.Contains(rep.Problems, imagequality.TooDark) || rep.Width != 800 {
		t.Fatalf("a black 800×600 PNG: %+v %v, want it measured too dark", rep, ok)
	}
	if _, ok := s.AssessImage([]byte("%PDF-1.4\n%%EOF"), th); ok {
		t.Fatal("a PDF was measured")
	}
	bomb, err := os.ReadFile("imagecheck/testdata/bomb-7000x7000.png")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.AssessImage(bomb, th); ok {
		t.Fatal("the 49-megapixel bomb was decoded and measured")
	}
	l := imagecheck.NewLimiter(64<<20, 0)
	store.SetDecodeLimiter(s, l)
	hold, err := l.Acquire(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.AssessImage(b.Bytes(), th); ok {
		t.Fatal("an image was decoded while the decode budget was taken")
	}
	hold()
	if _, ok := s.AssessImage(b.Bytes(), th); !ok {
		t.Fatal("not measured once the budget was free")
	}
}
