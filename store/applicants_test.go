package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

func TestCountryCodes(t *testing.T) {
	if n := store.CountryCount(); n != 249 {
		t.Fatalf("%d ISO 3166-1 alpha-3 codes, want 249", n)
	}
	for _, c := range []string{"DEU", "GBR", "USA", "ALA", "ZWE", "SSD", "BES"} {
		if !store.IsCountry(c) {
			t.Errorf("%s rejected", c)
		}
	}
	for _, c := range []string{"deu", "DE", "XXX", "EU ", "LA ", "A D", "", "DEUT", "EUR"} {
		if store.IsCountry(c) {
			t.Errorf("%q accepted", c)
		}
	}
}

func TestCreateApplicantStore(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	in := store.ApplicantInput{"externalUserId": json.RawMessage(`"u1"`), "lastName": json.RawMessage(`"Doe"`), "gender": json.RawMessage(`{"x":1}`)}
	a, created, err := s.CreateApplicant(store.Sandbox, in)
	if err != nil || !created || a.Info["lastName"] == nil || *a.Info["lastName"] != "Doe" {
		t.Fatalf("create: %+v %v %v", a, created, err)
	}
	if _, err := s.Applicant(store.Production, "u1"); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("production sees a sandbox applicant: %v", err)
	}
	again, created, err := s.CreateApplicant(store.Sandbox, store.ApplicantInput{"externalUserId": json.RawMessage(`"u1"`)})
	if err != nil || created || again.ID != a.ID {
		t.Fatalf("second create: %v %v", created, err)
	}
}

// FuzzApplicantInput feeds arbitrary JSON objects to CreateApplicant and
// PatchApplicant: they must answer a store error or an applicant, never
// panic, and never an internal error.
func FuzzApplicantInput(f *testing.F) {
	for _, seed := range []string{
		`{"externalUserId":"a"}`,
		`{"externalUserId":"b","type":"company","companyName":"X","legalForm":"GmbH","country":"DEU"}`,
		`{"externalUserId":"c","dateOfBirth":"2000-02-29","nationality":"FRA","email":"a@b.co","phone":"+1 555 0100"}`,
		`{"externalUserId":"d","dateOfBirth":"1999-02-29"}`,
		`{"externalUserId":"e","gender":[1,2],"address":{"a":null}}`,
		`{"externalUserId":"f","verificationLevelName":"full-kyc-level","gender":"other"}`,
		`{"externalUserId":"g","firstName":null,"lastName":""}`,
		`{"externalUserId":12}`,
		`{"externalUserId":"h","type":null,"verificationLevelName":null}`,
	} {
		f.Add([]byte(seed))
	}
	s, _ := mustOpen(f, "", store.Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		var in store.ApplicantInput
		if json.Unmarshal(body, &in) != nil {
			return
		}
		check := func(err error) {
			var e *store.Error
			if err != nil && (!errors.As(err, &e) || e.Code == store.EINTERNAL) {
				t.Fatalf("%s: %v", body, err)
			}
		}
		a, _, err := s.CreateApplicant(store.Sandbox, in)
		check(err)
		if err == nil {
			_, err = s.PatchApplicant(store.Sandbox, a.ExternalUserID, in)
			check(err)
		}
	})
}

func TestConfiguredLevels(t *testing.T) {
	clock := store.NewManualClock(time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
	custom := store.Level{Name: "basic-kyc-level", ApplicantType: "individual", Steps: []store.LevelStep{{Kind: "selfie"}}, PersonalInfoFields: []string{"lastName"}}
	bad := store.Level{Name: "broken", ApplicantType: "individual", Steps: []store.LevelStep{{Kind: "dance"}}}
	if err := bad.Validate(); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("Validate: %v", err)
	}
	s, _ := mustOpen(t, "", store.Options{Now: clock.Now, Settings: store.Settings{Levels: []store.Level{custom, bad}}})
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
