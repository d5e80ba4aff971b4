package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// TestEventStoredWithItsDelivery: an event with a delivery is stored once,
// with the delivery's sequence entry, and goes with the delivery; one
// without a delivery is kept in the events bucket (SPEC §5); a delivery
// whose event a version before layout 9 stored in the events bucket reads,
// sends and goes the same way.
func TestEventStoredWithItsDelivery(t *testing.T) {
	s, clock := mustOpen(t, "", store.Options{})
	env := store.Sandbox

	// No webhook configured: kept, not delivered.
	if err := s.Enqueue(env, store.DestCustody, "wallet.created", "wallet", "w0", map[string]string{"walletId": "w0"}); err != nil {
		t.Fatal(err)
	}
	if n, all := s.Count(env, "events"), s.Events(env); n != 1 || all != 1 {
		t.Fatalf("an event without a delivery: %d in the events bucket, %d in all; want 1, 1", n, all)
	}

	if _, err := s.SetWebhook(context.Background(), env, "http://127.0.0.1:9/hook", nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"w1", "w2"} {
		if err := s.Enqueue(env, store.DestCustody, "wallet.created", "wallet", w, map[string]string{"walletId": w}); err != nil {
			t.Fatal(err)
		}
	}
	if n, all := s.Count(env, "events"), s.Events(env); n != 1 || all != 3 {
		t.Fatalf("two events with deliveries: %d in the events bucket, %d in all; want 1, 3", n, all)
	}
	items, _, err := s.Deliveries(env, store.DeliveryFilter{}, store.Page{Limit: 10})
	if err != nil || len(items) != 2 {
		t.Fatalf("deliveries: %+v %v", items, err)
	}
	newer, older := items[0].ID, items[1].ID
	before, err := s.Delivery(env, older)
	if err != nil || !strings.Contains(before.Payload, `"walletId":"w1"`) || !strings.Contains(before.Payload, `"id":"`+before.EventID+`"`) {
		t.Fatalf("the delivery's payload: %q %v", before.Payload, err)
	}

	// The older one as a version before layout 9 stored it.
	if err := s.StoreEventAsLayout8(env, older); err != nil {
		t.Fatal(err)
	}
	if n, all := s.Count(env, "events"), s.Events(env); n != 2 || all != 3 {
		t.Fatalf("after the move: %d in the events bucket, %d in all; want 2, 3", n, all)
	}
	after, err := s.Delivery(env, older)
	if err != nil || after.Payload != before.Payload {
		t.Fatalf("the payload read from the events bucket: %q %v, want %q", after.Payload, err, before.Payload)
	}
	items, _, err = s.Deliveries(env, store.DeliveryFilter{Status: store.DeliveryPending}, store.Page{Limit: 10})
	if err != nil || len(items) != 2 || items[0].ID != newer || items[1].ID != older {
		t.Fatalf("pending deliveries, both forms: %+v %v", items, err)
	}

	// Each is sent with its own payload, then delivered.
	jobs, _, err := s.Due(clock.Now(), 10, nil)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("due: %+v %v", jobs, err)
	}
	for _, j := range jobs {
		want, err := s.Delivery(env, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Delivery == nil || string(j.Delivery.Payload) != want.Payload || want.Payload == "" {
			t.Fatalf("job %s sends %+v, want the payload %q", j.ID, j.Delivery, want.Payload)
		}
		if _, err := s.RecordAttempt(j, store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200,
			At: clock.Now(), Success: true}); err != nil {
			t.Fatal(err)
		}
	}

	// Past the retention window both go with their events; the event
	// that never had a delivery goes too.
	clock.Advance(721 * time.Hour)
	runJobs(t, s, clock)
	for _, id := range []string{newer, older} {
		if _, err := s.Delivery(env, id); store.ErrorCode(err) != store.ENOTFOUND {
			t.Errorf("delivery %s past retention: %v, want removed", id, err)
		}
	}
	if n, all := s.Count(env, "events"), s.Events(env); n != 0 || all != 0 {
		t.Errorf("past retention: %d in the events bucket, %d in all; want none", n, all)
	}
	if n := s.Count(env, "deliveries_idx"); n != 0 {
		t.Errorf("past retention: %d sequence entries left", n)
	}
}

// TestDeliveryOfAnUnnumberedFile: a file from before layouts were
// numbered keyed events by their id, and its deliveries named the event
// by id only. Upgraded, every such delivery answered 404 event_not_found
// and was never sent; it reads, is sent with its payload and goes with
// its event past retention. The first versions stored the event as a
// record holding the envelope in base64; the later ones as the envelope.
func TestDeliveryOfAnUnnumberedFile(t *testing.T) {
	for _, asRecord := range []bool{false, true} {
		t.Run(map[bool]string{false: "envelope", true: "record"}[asRecord], func(t *testing.T) { unnumberedDelivery(t, asRecord) })
	}
}

func unnumberedDelivery(t *testing.T, asRecord bool) {
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
		t.Fatalf("deliveries: %+v %v", items, err)
	}
	id := items[0].ID
	before, err := s.Delivery(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreEventAsUnnumbered(env, id, asRecord); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(env, "events"); n != 1 {
		t.Fatalf("%d events in the events bucket, want the one keyed by its id", n)
	}
	after, err := s.Delivery(env, id)
	if err != nil || after.Payload != before.Payload {
		t.Fatalf("the payload read by the event's id: %q %v, want %q", after.Payload, err, before.Payload)
	}
	jobs, _, err := s.Due(clock.Now(), 10, nil)
	if err != nil || len(jobs) != 1 || jobs[0].Delivery == nil || string(jobs[0].Delivery.Payload) != before.Payload {
		t.Fatalf("due: %+v %v, want the delivery with its payload", jobs, err)
	}
	if _, err := s.RecordAttempt(jobs[0], store.AttemptResult{RequestURL: "http://127.0.0.1:9/hook", StatusCode: 200,
		At: clock.Now(), Success: true}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(721 * time.Hour)
	runJobs(t, s, clock)
	if _, err := s.Delivery(env, id); store.ErrorCode(err) != store.ENOTFOUND {
		t.Errorf("delivery past retention: %v, want removed", err)
	}
	if n := s.Count(env, "events"); n != 0 {
		t.Errorf("past retention: %d in the events bucket; want none", n)
	}
}
