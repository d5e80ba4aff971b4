package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// jsonSamples are strings that take every path of encoding/json's string
// encoder: plain ASCII, HTML characters, quotes and backslashes, control
// characters, DEL, U+2028/9, multi-byte UTF-8 and invalid UTF-8.
var jsonSamples = []string{"", "plain", "0.000001", "<b>&amp;</b>", "1 < 2", "3 > 2", "AT&T", `quo"te \back\slash`, "ctl\x01\n\t\r\b\f", "\x7f",
	"line\u2028sep\u2029", "héllo wörld", "🎉 emoji", "bad \xff\xfe utf8", "Tether USD (ERC-20)"}

func pickString(r *rand.Rand) string { return jsonSamples[r.IntN(len(jsonSamples))] }

func pickPtr(r *rand.Rand) *string {
	if r.IntN(3) == 0 {
		return nil
	}
	s := pickString(r)
	return &s
}

func pickTime(r *rand.Rand) Time {
	if r.IntN(4) == 0 {
		return Time{}
	}
	return At(time.UnixMilli(r.Int64N(4_000_000_000_000)).In(time.FixedZone("x", 3600)))
}

func randomTransaction(r *rand.Rand) Transaction {
	return Transaction{
		TransactionID: pickString(r), Type: pickString(r), Status: pickString(r), PreviousStatus: pickPtr(r),
		VaultID: pickString(r), VaultExternalID: pickString(r), VaultName: pickString(r), AssetID: pickString(r),
		AssetSymbol: pickString(r), AssetNetwork: pickString(r), SourceWalletID: pickPtr(r), DestinationWalletID: pickPtr(r),
		Amount: pickString(r), SourceAddress: pickString(r), DestinationAddress: pickString(r), DestinationTag: pickPtr(r),
		TxHash: pickPtr(r), NetworkFee: pickPtr(r), FeeCurrency: pickPtr(r), AmountUSD: pickPtr(r), FeeUSD: pickPtr(r),
		Note: pickPtr(r), FailureReason: pickPtr(r), CreatedAt: pickTime(r), UpdatedAt: pickTime(r), CompletedAt: pickTime(r),
	}
}

func sameJSON(t *testing.T, what string, got []byte, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// TestAppendJSONAsEncodingJSON: the hand-written encoders write, byte for
// byte, what encoding/json writes for the same values, so records and
// event payloads do not depend on which encoder made them.
func TestAppendJSONAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		x := randomTransaction(r)
		sameJSON(t, "transaction", x.appendJSON(nil), x)
		sameJSON(t, "transaction.created data", x.createdData().appendJSON([]byte{}), x.createdData())
		b := balanceData{VaultAccountID: pickString(r), AssetID: pickString(r)}
		sameJSON(t, "balance.updated data", b.appendJSON(nil), b)
		for _, s := range jsonSamples {
			sameJSON(t, "string", appendJSONString(nil, s), s)
		}
	}
}

// TestEventEnvelopeAsEncodingJSON: newEvent's payload is the envelope as
// encoding/json writes it, whether its data encodes itself or not.
func TestEventEnvelopeAsEncodingJSON(t *testing.T) {
	type envelope struct {
		ID         string `json:"id"`
		EventType  string `json:"eventType"`
		EntityType string `json:"entityType"`
		EntityID   string `json:"entityId"`
		Timestamp  Time   `json:"timestamp"`
		Data       any    `json:"data"`
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		at := time.UnixMilli(r.Int64N(4_000_000_000_000) + 1)
		x := randomTransaction(r)
		for _, data := range []any{x.createdData(), balanceData{pickString(r), pickString(r)}, map[string]int{"n": r.IntN(9)}, nil} {
			ev, err := newEvent(pickString(r), pickString(r), pickString(r), at, data)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "envelope", ev.Payload, envelope{ev.ID, ev.EventType, ev.EntityType, ev.EntityID, ev.Timestamp, data})
		}
	}
}

// TestRestamp: a restamped event's envelope is the envelope newEvent makes
// of the new time, whether the time's text keeps its length (in place) or
// not (a year past 9999), and whatever its names hold.
func TestRestamp(t *testing.T) {
	from := At(time.Date(2026, 11, 26, 1, 2, 3, 4e6, time.UTC))
	for _, at := range []Time{At(from.Add(1500 * time.Millisecond)), At(time.Date(10001, 1, 2, 3, 4, 5, 6e6, time.UTC))} {
		for _, name := range jsonSamples {
			ev, err := newEvent("balance.updated", "balance", name+`","timestamp":"x`, from.Time, balanceData{VaultAccountID: name, AssetID: "a"})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := appendEnvelope(nil, ev.ID, ev.EventType, ev.EntityType, ev.EntityID, at, []byte(`{"vaultAccountId":`+string(appendJSONString(nil, name))+`,"assetId":"a"}`))
			ev.restamp(at)
			if !bytes.Equal(ev.Payload, want) || ev.Timestamp != at {
				t.Errorf("restamped to %s:\n%s\nwant\n%s", at, ev.Payload, want)
			}
		}
	}
}
