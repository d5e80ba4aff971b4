package store_test

import (
	"testing"

	"github.com/complybox/complybox/store"
)

func TestConfiguredLevels(t *testing.T) {
	custom := store.Level{Name: "basic-kyc-level", ApplicantType: "individual", Steps: []store.LevelStep{{Kind: "selfie"}}, PersonalInfoFields: []string{"lastName"}}
	bad := store.Level{Name: "broken", ApplicantType: "individual", Steps: []store.LevelStep{{Kind: "dance"}}}
	if err := bad.Validate(); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("Validate: %v", err)
	}
	s, _ := mustOpen(t, "", store.Options{Settings: store.Settings{Levels: []store.Level{custom, bad}}})
	l, err := s.Level(store.Sandbox, "basic-kyc-level")
	if err != nil || len(l.Steps) != 1 || l.Steps[0].Kind != "selfie" || l.ID == "" {
		t.Fatalf("configured level replaces the built-in one: %+v %v", l, err)
	}
	if _, err := s.Level(store.Sandbox, "broken"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("invalid configured level stored: %v", err)
	}
	all, _ := s.Levels(store.Production)
	if len(all) != 3 {
		t.Fatalf("%d levels in production", len(all))
	}
}
