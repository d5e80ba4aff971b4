package dispatch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// Sign returns the X-Webhook-Signature of body: lowercase hex HMAC-SHA256
// keyed with the UTF-8 bytes of secret exactly as the API returned it.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature (hex) is body's signature under secret,
// comparing in constant time.
func Verify(secret string, body []byte, signature string) bool {
	got, err := hex.DecodeString(strings.TrimSpace(signature))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// SignStandard returns the Standard Webhooks webhook-signature header:
// "v1," + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the
// base64-decoded secret (a "whsec_" prefix is ignored; a secret that is not
// base64 is used as its UTF-8 bytes).
func SignStandard(secret, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, standardKey(secret))
	m.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func standardKey(secret string) []byte {
	s := strings.TrimPrefix(secret, "whsec_")
	if k, err := base64.StdEncoding.DecodeString(s); err == nil && len(k) > 0 {
		return k
	}
	return []byte(secret)
}
