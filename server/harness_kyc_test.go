package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/complybox/complybox/dispatch"
)

// pngImage returns a w×h PNG with noise from seed, so sha256s differ.
func pngImage(t testing.TB, w, h int, seed uint64) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, seed+1))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(r.IntN(256)), uint8(x), uint8(y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// jpegImage returns a w×h JPEG with noise from seed.
func jpegImage(t testing.TB, w, h int, seed uint64) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, seed+7))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(r.IntN(256)), uint8(y), uint8(x), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// verifyBody is a complete direct-verification body for basic-kyc-level.
func verifyBody(t testing.TB, seed uint64) map[string]any {
	return map[string]any{
		"idDocType":     "PASSPORT",
		"country":       "DEU",
		"documentFront": b64(pngImage(t, 240, 220, seed)),
		"selfie":        "data:image/jpeg;base64," + b64(jpegImage(t, 220, 240, seed+100)),
	}
}

// createApplicant creates an individual on basic-kyc-level with lastName.
func (in *instance) createApplicant(extID, lastName string) map[string]any {
	in.t.Helper()
	return in.expect(201, "POST", "/v1/applicants", map[string]any{
		"externalUserId": extID, "firstName": "Ada", "lastName": lastName, "dateOfBirth": "1990-04-01", "nationality": "GBR",
	}).m(in.t)
}

// kycReceiver points the KYC callback at a fresh receiver and returns it
// with the callback signing secret.
func (in *instance) kycReceiver() (*receiver, string) {
	in.t.Helper()
	rc := newReceiver(in.t, in.Clock, nil)
	if err := in.Store.SetCallbackURL(context.Background(), rc.URL); err != nil {
		in.t.Fatal(err)
	}
	secret, err := in.Store.CallbackSecret()
	if err != nil {
		in.t.Fatal(err)
	}
	return rc, secret
}

// reviewed waits for the next applicantReviewed webhook, checks its
// signature and returns its data.
func (rc *receiver) reviewed(t testing.TB, secret string) map[string]any {
	t.Helper()
	got := rc.nextOfType(t, "applicantReviewed")
	if !dispatch.Verify(secret, got.Body, got.Header.Get("X-Webhook-Signature")) {
		t.Fatalf("applicantReviewed signature does not verify")
	}
	var env struct {
		EventType, EntityType, EntityID string
		Data                            map[string]any
	}
	if err := json.Unmarshal(got.Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.EntityType != "applicant" {
		t.Fatalf("entityType %q", env.EntityType)
	}
	env.Data["_entityId"] = env.EntityID
	return env.Data
}

// historyTypes returns the event types of an applicant's review history.
func (in *instance) historyTypes(extID string) []string {
	in.t.Helper()
	var h struct {
		Items []struct{ EventType, ActorType string }
	}
	in.expect(200, "GET", "/v1/applicants/"+extID+"/review-history?limit=200", nil).json(in.t, &h)
	var out []string
	for _, it := range h.Items {
		out = append(out, it.EventType+":"+it.ActorType)
	}
	return out
}

// rawJSON embeds s verbatim in a request body.
type rawJSON string

// MarshalJSON implements json.Marshaler.
func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }
