package store_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestDeliveryStoredAsJSON: a delivery written by a version before the
// binary form (JSON) reads the same, is attempted, and is stored in the
// binary form from its next change on.
func TestDeliveryStoredAsJSON(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	env := store.Sandbox
	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Enqueue(env, store.DestCustody, "wallet.created", "wallet", "w1", map[string]string{"walletId": "w1"}); err != nil {
		t.Fatal(err)
	}
	items, _, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{Limit: 10})
	if err != nil || len(items) != 1 {
		t.Fatalf("deliveries: %v %v", items, err)
	}
	id := items[0].ID
	if rec := s.DeliveryRecord(env, id); len(rec) == 0 || rec[0] == '{' {
		t.Fatalf("a new delivery is stored as %q, want the binary form", rec)
	}
	want, err := s.Delivery(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreDeliveryAsJSON(env, id); err != nil {
		t.Fatal(err)
	}
	if rec := s.DeliveryRecord(env, id); rec[0] != '{' {
		t.Fatalf("the old form was not written: %q", rec)
	}
	got, err := s.Delivery(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read from JSON:\n%+v\nwant\n%+v", got, want)
	}

	jobs, _, err := s.Due(clock.Now(), 10, nil)
	if err != nil || len(jobs) != 1 || jobs[0].ID != id {
		t.Fatalf("due: %+v %v", jobs, err)
	}
	if _, err := s.RecordAttempt(jobs[0], store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200,
		At: clock.Now(), Success: true}); err != nil {
		t.Fatal(err)
	}
	if rec := s.DeliveryRecord(env, id); rec[0] == '{' {
		t.Fatalf("still JSON after an attempt: %q", rec)
	}
	got, err = s.Delivery(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.DeliveryDelivered || got.AttemptCount != 1 || len(got.Attempts) != 1 || got.Payload != want.Payload {
		t.Errorf("after the attempt: %+v", got)
	}
	delivered, _, err := s.Deliveries(env, store.DeliveryFilter{Status: store.DeliveryDelivered}, store.Page{Limit: 10})
	if err != nil || len(delivered) != 1 || delivered[0].ID != id {
		t.Errorf("the status index after the attempt: %+v %v", delivered, err)
	}
}
