package store

import (
	"bytes"
	"encoding/json"
)

// Actor types of history entries.
const (
	ActorSystem   = "system"
	ActorSDK      = "sdk"
	ActorPartner  = "partner"
	ActorOperator = "operator"
)

// HistoryEntry is one event in a subject's history (an applicant, a level,
// a credential). Internal entries are stored but never shown to partners.
type HistoryEntry struct {
	ID        string         `json:"id"`
	AtUtc     Time           `json:"atUtc"`
	EventType string         `json:"eventType"`
	ActorType string         `json:"actorType"`
	Details   map[string]any `json:"details"`
	Internal  bool           `json:"-"`
}

type diskHistory struct {
	HistoryEntry
	Internal bool `json:"internal,omitempty"`
}

// historyKey is subject, a zero byte, then the bucket sequence, so one
// subject's entries are contiguous and in order.
func historyKey(subject string, seq uint64) []byte {
	return append(append([]byte(subject), 0), itob(seq)...)
}

// appendHistory records an entry for subject in environment env.
func (t *txn) appendHistory(env Env, subject string, h HistoryEntry) error {
	b := t.env(env, "history")
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	if h.ID == "" {
		h.ID = newID()
	}
	if h.AtUtc.IsZero() {
		h.AtUtc = At(t.now)
	}
	if h.Details == nil {
		h.Details = map[string]any{}
	}
	if t.retag != nil { // hosted UI hook (hostedui_forms.go)
		t.retag(&h)
	}
	v, err := json.Marshal(diskHistory{HistoryEntry: h, Internal: h.Internal})
	if err != nil {
		return err
	}
	return b.Put(historyKey(subject, seq), v)
}

// lastHistory returns the key and the stored entry of subject's newest
// history entry; false when it has none.
func (t *txn) lastHistory(env Env, subject string) ([]byte, diskHistory, bool) {
	prefix := append([]byte(subject), 0)
	c := t.env(env, "history").Cursor()
	var k, v []byte
	if after, _ := c.Seek(append([]byte(subject), 1)); after == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	var d diskHistory
	if k == nil || !bytes.HasPrefix(k, prefix) || json.Unmarshal(v, &d) != nil {
		return nil, d, false
	}
	d.HistoryEntry.Internal = d.Internal
	if d.Details == nil {
		d.Details = map[string]any{}
	}
	return k, d, true
}

// appendInternal records an internal (never partner-visible) entry.
func (t *txn) appendInternal(env Env, subject, eventType string, details map[string]any) error {
	return t.appendHistory(env, subject, HistoryEntry{EventType: eventType, ActorType: ActorSystem, Details: details, Internal: true})
}

// history returns subject's entries, newest first.
func (t *txn) history(env Env, subject string) ([]HistoryEntry, error) {
	prefix := append([]byte(subject), 0)
	var out []HistoryEntry
	c := t.env(env, "history").Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var d diskHistory
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, err
		}
		d.HistoryEntry.Internal = d.Internal
		out = append(out, d.HistoryEntry)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
