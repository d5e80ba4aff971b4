package main

import (
	"testing"
)

// TestCallbackSecretMustBeBase64: a [kyc] callback_secret that Standard
// Webhooks libraries cannot base64-decode, or that is shorter than 24
// bytes, is refused at start-up naming the key (SPEC §5: receivers built on
// that spec verify unchanged). Empty (generated) and whsec_-prefixed
// secrets are accepted.
func TestCallbackSecretMustBeBase64(t *testing.T) {
	for _, bad := range []string{
		"my-callback-secret", // the audit's example: not base64
		"c2hvcnQ=",           // base64 of 5 bytes
		"whsec_c2hvcnQ=",     // prefixed, still 5 bytes
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw!",
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw-_Ab", // URL-safe alphabet: the libraries decode standard base64
		"whsec_",
		"Zm9v YmFy",
	} {
		t.Run(bad, func(t *testing.T) {
			_, _, err := loadConfig(configFlags{path: writeConfig(t, "[kyc]\ncallback_secret = \""+bad+"\"\n")}, nil)
			wantErr(t, err, "kyc.callback_secret")
		})
	}
	for _, good := range []string{
		"",
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",       // 24 bytes
		"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // the Standard Webhooks test vector
		"q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80=", // 32 bytes, as complybox generates
	} {
		t.Run("OK"+good, func(t *testing.T) {
			if _, _, err := loadConfig(configFlags{path: writeConfig(t, "[kyc]\ncallback_secret = \""+good+"\"\n")}, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}
