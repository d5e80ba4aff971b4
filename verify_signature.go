package main

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/dispatch"
)

// errMismatch is verify-signature's failure: exit code 1.
func errMismatch() error { return &exitError{code: 1, err: errors.New("signature mismatch")} }

func newVerifySignatureCmd(a *app) *cobra.Command {
	var secret, signature, id string
	var timestamp int64
	cmd := &cobra.Command{
		Use:   "verify-signature --secret S --signature HEX [FILE]",
		Short: "Check a webhook body (FILE or stdin) against its X-Webhook-Signature",
		Long: "verify-signature checks a webhook body, read from FILE or stdin, against the\n" +
			"X-Webhook-Signature header: lowercase hex HMAC-SHA256 of the raw body keyed\n" +
			"with the signing secret exactly as the API returned it. Exit 0 on match, 1 on\n" +
			"mismatch, 2 when --signature is neither hex nor v1,<base64>.\n\n" +
			"A Standard Webhooks webhook-signature header (\"v1,<base64>\", several\n" +
			"separated by spaces) is checked too when --id (webhook-id) and --timestamp\n" +
			"(webhook-timestamp) are given.",
		Args: args(0, 1, "at most one FILE"),
		RunE: func(cmd *cobra.Command, a2 []string) error {
			if secret == "" || signature == "" {
				return usageError("verify-signature: --secret and --signature are required")
			}
			// A signature of neither form is bad input (exit 2), not a
			// mismatch.
			standard := strings.Contains(signature, ",")
			switch {
			case standard && !slices.ContainsFunc(strings.Fields(signature), isV1):
				return usageError("verify-signature: --signature has no v1,<base64> signature (a webhook-signature header), the only Standard Webhooks version")
			case standard && (id == "" || timestamp == 0):
				return usageError("verify-signature: a v1 signature needs --id and --timestamp")
			case !standard && !isHex(strings.TrimSpace(signature)):
				return usageError("verify-signature: --signature is neither hex (an X-Webhook-Signature header) nor v1,<base64> (a webhook-signature header)")
			}
			var body []byte
			var err error
			if len(a2) == 1 && a2[0] != "-" {
				body, err = os.ReadFile(a2[0])
			} else {
				body, err = io.ReadAll(cmd.InOrStdin())
			}
			if err != nil {
				return err
			}
			ok := false
			if standard {
				ok = verifyStandard(secret, id, timestamp, body, signature)
			} else {
				ok = dispatch.Verify(secret, body, signature)
			}
			if !ok {
				return errMismatch()
			}
			fmt.Fprintln(cmd.OutOrStdout(), "signature OK")
			return nil
		},
	}
	cmd.Flags().StringVar(&secret, "secret", "", "the signing secret, exactly as returned by the API")
	cmd.Flags().StringVar(&signature, "signature", "", "the X-Webhook-Signature header (hex), or a webhook-signature header (v1,…)")
	cmd.Flags().StringVar(&id, "id", "", "the webhook-id header, for a v1 signature")
	cmd.Flags().Int64Var(&timestamp, "timestamp", 0, "the webhook-timestamp header (Unix seconds), for a v1 signature")
	return cmd
}

// verifyStandard reports whether one of the space-separated signatures of a
// Standard Webhooks webhook-signature header matches, in constant time.
func verifyStandard(secret, id string, timestamp int64, body []byte, header string) bool {
	want := []byte(dispatch.SignStandard(secret, id, timestamp, body))
	ok := false
	for _, sig := range strings.Fields(header) {
		if subtle.ConstantTimeCompare([]byte(sig), want) == 1 {
			ok = true
		}
	}
	return ok
}

// isHex reports whether s is a non-empty string of hex digits, of even
// length.
func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return s != "" && err == nil
}

// isV1 reports whether f has the form of a Standard Webhooks v1
// signature: "v1," then base64 (whether its length is an HMAC-SHA256's is
// the comparison's business: a mismatch).
func isV1(f string) bool {
	b, ok := strings.CutPrefix(f, "v1,")
	sum, err := base64.StdEncoding.DecodeString(b)
	return ok && err == nil && len(sum) > 0
}
