package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// codecSamples are deliveries in every shape the dispatcher leaves them:
// new, delivered, failed with a retry scheduled, dead, retried by hand.
func codecSamples() []diskDelivery {
	at := func(s string) Time { v, _ := time.Parse(time.RFC3339Nano, s); return At(v) }
	str := func(s string) *string { return &s }
	code := func(c int) *int { return &c }
	base := DeliverySummary{ID: "0193a7c0-0000-7000-8000-000000000001", EventID: "0193a7c0-0000-7000-8000-000000000002",
		EventType: "transaction.created", EntityType: "transaction", EntityID: "tx-1", Destination: DestCustody,
		Status: DeliveryPending, CreatedAt: at("2026-11-24T10:00:00.123Z"), NextAttemptAt: at("2026-11-24T10:00:00.123Z")}
	fresh := diskDelivery{DeliverySummary: base, Seq: 7, EventSeq: 9, ScheduleKey: []byte{0, 1, 2, 0xff, '|'}}

	delivered := fresh
	delivered.Status, delivered.AttemptCount = DeliveryDelivered, 1
	delivered.NextAttemptAt, delivered.ScheduleKey = Time{}, nil
	delivered.LastAttemptAt, delivered.DeliveredAt = at("2026-11-24T10:00:01.5Z"), at("2026-11-24T10:00:01.5Z")
	delivered.Attempts = []Attempt{{ID: "a1", AttemptNumber: 1, RequestURL: "https://hooks.example.com/x?y=ü",
		HTTPStatusCode: code(200), ResponseBody: str(""), DurationMs: 3, AttemptedAt: at("2026-11-24T10:00:01.5Z"), Success: true}}

	failed := fresh
	failed.Status, failed.AttemptCount, failed.LastError = DeliveryFailed, 2, str("receiver answered HTTP 503")
	failed.Attempts = []Attempt{
		{ID: "a1", AttemptNumber: 1, RequestURL: "https://h", ErrorMessage: str("timed out after 5s"), DurationMs: 5000,
			AttemptedAt: at("2026-11-24T10:00:01Z")},
		{ID: "a2", AttemptNumber: 2, RequestURL: "https://h", HTTPStatusCode: code(503), ResponseBody: str(`{"busy":true}`),
			ErrorMessage: str("receiver answered HTTP 503"), DurationMs: 1, AttemptedAt: at("2026-11-24T10:00:11Z")},
	}

	dead := failed
	dead.Status, dead.RoundStart, dead.ScheduleKey, dead.NextAttemptAt = DeliveryDead, 5, nil, Time{}
	dead.AttemptCount = 10
	dead.LastAttemptAt = at("1969-07-20T20:17:40.001Z") // before 1970: negative milliseconds

	test := fresh
	test.Test, test.EventType = true, "webhook.test"
	return []diskDelivery{fresh, delivered, failed, dead, test, {}}
}

// TestDeliveryCodec: the binary form gives back exactly what the JSON form
// gave back (the records' previous encoding), so a delivery reads the same
// whichever form it was stored in.
func TestDeliveryCodec(t *testing.T) {
	for i, d := range codecSamples() {
		js, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON, fromJSONRecord, fromBinary diskDelivery
		if err := json.Unmarshal(js, &fromJSON); err != nil {
			t.Fatal(err)
		}
		if err := unmarshalDelivery(js, &fromJSONRecord); err != nil {
			t.Fatalf("sample %d: a JSON record does not decode: %v", i, err)
		}
		b := marshalDelivery(&d)
		if b[0] != deliveryCodecV1 {
			t.Fatalf("sample %d: first byte %#x, want the version %#x", i, b[0], deliveryCodecV1)
		}
		if err := unmarshalDelivery(b, &fromBinary); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		// JSON gives [] for an empty list where the binary form gives nil;
		// nothing tells them apart (Delivery answers [] for both).
		if len(fromJSON.Attempts) == 0 {
			fromJSON.Attempts, fromJSONRecord.Attempts = nil, nil
		}
		if !reflect.DeepEqual(fromBinary, fromJSON) {
			t.Errorf("sample %d:\nbinary %+v\njson   %+v", i, fromBinary, fromJSON)
		}
		if !reflect.DeepEqual(fromJSONRecord, fromJSON) {
			t.Errorf("sample %d: a JSON record decodes to %+v, want %+v", i, fromJSONRecord, fromJSON)
		}
		if len(b) >= len(js) {
			t.Errorf("sample %d: %d bytes binary, %d JSON: the binary form should be smaller", i, len(b), len(js))
		}
	}
}

// TestDeliveryCodecCorrupt: a damaged record is an error, never a panic or
// a half-read delivery taken for whole.
func TestDeliveryCodecCorrupt(t *testing.T) {
	for i, d := range codecSamples() {
		b := marshalDelivery(&d)
		for n := range len(b) {
			var got diskDelivery
			if err := unmarshalDelivery(b[:n], &got); err == nil {
				t.Fatalf("sample %d cut to %d of %d bytes decoded without an error", i, n, len(b))
			}
		}
		var got diskDelivery
		if err := unmarshalDelivery(append(b, 0), &got); err == nil {
			t.Errorf("sample %d with a trailing byte decoded without an error", i)
		}
		bad := append([]byte{}, b...)
		bad[0] = 0x7f
		if err := unmarshalDelivery(bad, &got); err == nil {
			t.Errorf("sample %d with an unknown version decoded without an error", i)
		}
	}
	// An attempt count far past what the record holds is refused before
	// anything is allocated for it.
	// An empty delivery ends with the attempt count and four zero fields.
	empty := marshalDelivery(&diskDelivery{})
	huge := append(empty[:len(empty)-5:len(empty)-5], 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0)
	var got diskDelivery
	if err := unmarshalDelivery(empty, &got); err != nil {
		t.Fatal(err)
	}
	if err := unmarshalDelivery(huge, &got); err == nil {
		t.Error("an attempt count of 2^32 decoded without an error")
	}
}
