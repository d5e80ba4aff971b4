package store_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/complybox/complybox/store"
)

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

// TestCreateApplicantLevelEdited: new applicants read their level through a
// cache of decoded levels; a level edited between two creations must give
// the second applicant the level as edited, and leave the first as it was.
func TestCreateApplicantLevelEdited(t *testing.T) {
	s, _ := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	lvl, err := s.CreateLevel(env, store.Level{Name: "edited-level", ApplicantType: store.TypeIndividual,
		Steps: []store.LevelStep{{Kind: store.StepIdentityDoc}}, PersonalInfoFields: []string{"firstName"}})
	if err != nil {
		t.Fatal(err)
	}
	create := func(id string) store.Applicant {
		a, created, err := s.CreateApplicant(env, store.ApplicantInput{
			"externalUserId":        json.RawMessage(`"` + id + `"`),
			"verificationLevelName": json.RawMessage(`"` + lvl.Name + `"`),
			"firstName":             json.RawMessage(`"Ada"`),
			"lastName":              json.RawMessage(`"Lovelace"`),
		})
		if err != nil || !created {
			t.Fatalf("create %s: created %v, err %v", id, created, err)
		}
		return a
	}
	steps := func(id string) (kinds []string) {
		v, err := s.Steps(env, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range v.Steps {
			kinds = append(kinds, st.Kind)
		}
		return kinds
	}
	first := create("before-edit")
	newSteps := []store.LevelStep{{Kind: store.StepIdentityDoc}, {Kind: store.StepSelfie}}
	fields := []string{"lastName"}
	if _, err := s.PatchLevel(env, lvl.Name, store.LevelPatch{Steps: &newSteps, PersonalInfoFields: &fields}); err != nil {
		t.Fatal(err)
	}
	second := create("after-edit")
	if got := steps("after-edit"); len(got) != 2 || got[1] != store.StepSelfie {
		t.Errorf("steps after the edit %v, want identity and selfie", got)
	}
	if second.Info["lastName"] == nil || second.Info["firstName"] != nil {
		t.Errorf("info after the edit %v, want lastName only", second.Info)
	}
	if got := steps("before-edit"); len(got) != 1 {
		t.Errorf("steps of the applicant created before the edit %v, want identity only", got)
	}
	if first.Info["firstName"] == nil || first.Info["lastName"] != nil {
		t.Errorf("info before the edit %v, want firstName only", first.Info)
	}
}
