package store_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/complybox/complybox/store"
)

// pngBase64 returns a w×h PNG whose pixels depend on seed, base64-encoded.
func pngBase64(tb testing.TB, w, h int, seed byte) string {
	tb.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(i) ^ seed
	}
	img.Set(0, 0, color.NRGBA{seed, seed, seed, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func newApplicant(tb testing.TB, s *store.Store, extID, level string) {
	tb.Helper()
	in := store.ApplicantInput{"externalUserId": json.RawMessage(`"` + extID + `"`)}
	if level != "" {
		in["verificationLevelName"] = json.RawMessage(`"` + level + `"`)
	}
	if _, _, err := s.CreateApplicant(store.Sandbox, in); err != nil {
		tb.Fatal(err)
	}
}

// TestAddDocumentLevelChangedMeanwhile: the applicant's level is checked in
// the transaction that stores the document, not in an earlier read: when it
// changes to a level without the document's step while the image is being
// decoded, the upload is refused naming kind and nothing is stored.
func TestAddDocumentLevelChangedMeanwhile(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	newApplicant(t, s, "u1", "full-kyc-level")
	store.BeforeApply(s, func() {
		if _, err := s.AssignLevel(store.Sandbox, "u1", "basic-kyc-level"); err != nil {
			t.Error(err)
		}
	})
	_, err := s.AddDocument(store.Sandbox, "u1", store.DocumentInput{Kind: store.StepPOA, Image: pngBase64(t, 200, 200, 1)})
	if e := store.AsError(err); err == nil || e.Code != store.EINVALID || e.Field != "kind" {
		t.Fatalf("AddDocument after the level lost its poa step: %v, want EINVALID naming kind", err)
	}
	a, err := s.Applicant(store.Sandbox, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Documents) != 0 || a.VerificationLevelName != "basic-kyc-level" {
		t.Fatalf("level %s, documents %+v; want basic-kyc-level and none", a.VerificationLevelName, a.Documents)
	}
}

// TestVerifyLevelChangedMeanwhile: direct verification applies the level in
// force when it writes: moved from full-kyc-level to basic-kyc-level while
// its images are decoded, the applicant keeps only the documents of basic's
// steps (no proof of address) and, complete for basic, is submitted and
// reviewed at once in the sandbox.
func TestVerifyLevelChangedMeanwhile(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	newApplicant(t, s, "u1", "full-kyc-level")
	changed := false
	store.BeforeApply(s, func() {
		if changed {
			return
		}
		changed = true
		if _, err := s.AssignLevel(store.Sandbox, "u1", "basic-kyc-level"); err != nil {
			t.Error(err)
		}
	})
	out, err := s.Verify(store.Sandbox, "u1", store.VerifyInput{IDDocType: "PASSPORT", Country: "DEU",
		DocumentFront: pngBase64(t, 200, 200, 1), Selfie: pngBase64(t, 200, 200, 2), ProofOfAddress: pngBase64(t, 200, 200, 3)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Applicant(store.Sandbox, "u1")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range a.Documents {
		kinds = append(kinds, d.Kind)
	}
	if a.VerificationLevelName != "basic-kyc-level" || len(kinds) != 2 || kinds[0] != store.StepIdentityDoc || kinds[1] != store.StepSelfie {
		t.Fatalf("level %s, documents %v; want basic-kyc-level with identity_doc and selfie only", a.VerificationLevelName, kinds)
	}
	if out.ReviewStatus != store.ReviewCompleted || out.LevelName != "basic-kyc-level" {
		b, _ := json.Marshal(out)
		t.Fatalf("status %s; want basic-kyc-level reviewed at once", b)
	}
}
