package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/decimal"
	"github.com/complybox/complybox/store/fielderr"
	"github.com/complybox/complybox/store/imagecheck"
)

// TestLeafErrorsAreInvalid: a field error of a leaf package reaches the
// caller as EINVALID validation_failed naming the same field with the same
// message, so the API body does not depend on where a check lives.
func TestLeafErrorsAreInvalid(t *testing.T) {
	want := func(t *testing.T, err error, field, message string) {
		t.Helper()
		var e *store.Error
		if !errors.As(err, &e) {
			t.Fatalf("error = %v (%T), want *store.Error", err, err)
		}
		if e.Code != store.EINVALID || e.Reason != "validation_failed" || e.Field != field || e.Message != message {
			t.Fatalf("got %+v, want EINVALID validation_failed naming %s: %q", e, field, message)
		}
	}
	t.Run("Image", func(t *testing.T) {
		_, leaf := imagecheck.Decode("selfie", "!!", false)
		var fe *fielderr.Error
		if !errors.As(leaf, &fe) {
			t.Fatalf("imagecheck.Decode: %v", leaf)
		}
		_, err := store.DecodeImage("selfie", "!!", false)
		want(t, err, "selfie", fe.Message)
	})
	t.Run("Decimal", func(t *testing.T) {
		_, leaf := decimal.ParseUnits("usd_price", "1e3", 0)
		var fe *fielderr.Error
		if !errors.As(leaf, &fe) {
			t.Fatalf("decimal.ParseUnits: %v", leaf)
		}
		err := store.Asset{Symbol: "X", Network: "x", Decimals: 2, USDPrice: "1e3"}.Validate()
		want(t, err, "usd_price", fe.Message)
	})
	t.Run("URL", func(t *testing.T) {
		s, _ := mustOpen(t, "", store.Options{})
		leaf := s.URLPolicy().Check(context.Background(), "url", "ftp://127.0.0.1/")
		var fe *fielderr.Error
		if !errors.As(leaf, &fe) {
			t.Fatalf("urlpolicy.Check: %v", leaf)
		}
		want(t, s.CheckWebhookURL(context.Background(), "url", "ftp://127.0.0.1/"), "url", fe.Message)
		if err := s.CheckWebhookURL(context.Background(), "url", "http://127.0.0.1:9/hook"); err != nil {
			t.Fatalf("loopback http under the default policy: %v", err)
		}
	})
}
