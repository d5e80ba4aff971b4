package store_test

import (
	"encoding/base64"
	"os"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagecheck"
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
