package requestlog_test

import (
	"strings"
	"testing"

	"github.com/complybox/complybox/server/requestlog"
)

// Bodies of the benchmarks: a withdrawal (no image, the common write), an
// applicant's creation answer (no image, a longer JSON read back) and a
// verify body with small images (a tiny PNG each, under minBase64).
var (
	benchWithdrawal = []byte(`{"walletId":"0190c1d2-aaaa-7bbb-8ccc-123456789abc","assetId":"ETH","amount":"0.125","destinationAddress":"0x52908400098527886E0F7030069857D2E4169EE7","note":"payout 42","externalId":"wd-000042"}`)
	benchApplicant  = []byte(`{"id":"0190c1d2-aaaa-7bbb-8ccc-123456789abc","externalUserId":"user-1001","type":"individual","createdAtUtc":"2026-11-21T05:00:00.000Z","info":{"firstName":"Ada","lastName":"Lovelace","dateOfBirth":"1990-02-28","nationality":"GBR","email":"ada@example.com","phone":"+44 20 7946 0958","address":{"street":"12 Example Road","town":"London","postCode":"N1 9GU","country":"GBR"}},"review":{"reviewStatus":"init","reviewResult":null},"documents":[],"steps":[{"kind":"identity_doc","status":"pending"},{"kind":"selfie","status":"pending"}],"sdkLink":"https://kyc.example/sdk/abc?lang=en"}`)
	benchTinyPNG    = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	benchVerify     = []byte(`{"idDocType":"PASSPORT","country":"DEU","documentFront":"` + benchTinyPNG + `","selfie":"` + benchTinyPNG + `","livenessFrames":["` + strings.Repeat(benchTinyPNG+`","`, 2) + benchTinyPNG + `"]}`)
)

// BenchmarkHead: the request log's tap, which every request body passes
// as the handler reads it.
func BenchmarkHead(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{{"Withdrawal", benchWithdrawal}, {"Verify", benchVerify}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var h requestlog.Head
				h.Write(c.body)
			}
		})
	}
}

// BenchmarkRedact: what reading an entry costs, per body.
func BenchmarkRedact(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{{"Withdrawal", benchWithdrawal}, {"Applicant", benchApplicant}, {"Verify", benchVerify}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				requestlog.Redact("application/json", c.body)
			}
		})
	}
}
