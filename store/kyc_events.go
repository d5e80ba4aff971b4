package store

import (
	"encoding/base64"
	"strings"
	"time"
)

// ReviewResult is the verdict part of applicantReviewed (SPEC 3.7).
type ReviewResult struct {
	ReviewAnswer      NullString `json:"reviewAnswer"`
	ReviewRejectType  NullString `json:"reviewRejectType"`
	RejectLabels      []string   `json:"rejectLabels"`
	ModerationComment NullString `json:"moderationComment"`
}

// ApplicantReviewed is the data of an applicantReviewed event (SPEC 3.7).
type ApplicantReviewed struct {
	ApplicantID          string       `json:"applicantId"`
	ExternalUserID       string       `json:"externalUserId"`
	ParentExternalUserID string       `json:"parentExternalUserId,omitempty"`
	LevelName            string       `json:"levelName"`
	ReviewStatus         string       `json:"reviewStatus"`
	ReviewResult         ReviewResult `json:"reviewResult"`
	Environment          Env          `json:"environment"`
}

// event enqueues an applicant event to the KYC callback. Every type carries
// applicantId, externalUserId, levelName, reviewStatus and environment;
// extra adds type-specific keys.
func (t *txn) event(env Env, a *diskApplicant, eventType string, extra map[string]any) error {
	return t.enqueue(env, DestKYC, eventType, "applicant", a.ExternalID, applicantEventData(env, a, eventType, extra))
}

// applicantEventData is the data of an applicant event (also of the samples
// of SendSampleEvent, so their shape is the real one).
func applicantEventData(env Env, a *diskApplicant, eventType string, extra map[string]any) any {
	var data any
	if eventType == "applicantReviewed" {
		labels := a.Review.RejectLabels
		if labels == nil {
			labels = []string{}
		}
		data = ApplicantReviewed{
			ApplicantID: a.ID, ExternalUserID: a.ExternalID, LevelName: a.Level, ReviewStatus: a.Review.ReviewStatus,
			ParentExternalUserID: a.parentExternalID(), // UBO hook (store/kyb_ubos.go)
			ReviewResult: ReviewResult{ReviewAnswer: a.Review.ReviewAnswer, ReviewRejectType: a.Review.ReviewRejectType,
				RejectLabels: labels, ModerationComment: a.Review.ModerationComment},
			Environment: env,
		}
	} else {
		m := map[string]any{"applicantId": a.ID, "externalUserId": a.ExternalID, "levelName": a.Level,
			"reviewStatus": a.Review.ReviewStatus, "environment": env}
		for k, v := range extra {
			m[k] = v
		}
		data = m
	}
	return data
}

// historyEventTypes is the seed's partner-visible list (seed 2.4).
func historyEventTypes() []string {
	return []string{"applicant.created", "applicant.updated", "applicant.reset", "applicant.blocklisted",
		"applicant.blocklist_removed", "applicant.sent_to_review", "applicant.email_status_sent",
		"applicant.monitoring_enabled", "applicant.monitoring_disabled", "applicant.verified", "applicant.approved",
		"applicant.rejected", "applicant.deactivated", "applicant.activated",
		"enrollment.created", "enrollment.submitted", "enrollment.completed", "enrollment.expired",
		"aml.run", "adverse_media.run", "managed_compliance.decided"}
}

// HistoryQuery selects review-history entries.
type HistoryQuery struct {
	Since     time.Time // zero: from the start
	Limit     int       // 1..200; 0 means 50
	EventType string    // "" for every partner-visible type
	Cursor    string    // "": from the newest; else the previous page's nextCursor
}

// HistoryPage is the body of GET …/review-history.
type HistoryPage struct {
	Items      []HistoryEntry `json:"items"`
	TotalItems int            `json:"totalItems"`
	NextCursor *string        `json:"nextCursor"` // null on the last page
}

// ReviewHistory returns the partner-visible history of an applicant, newest
// first, at most 200 entries. Returns ENOTFOUND and EINVALID for an event
// type outside the partner-visible list, a limit outside 1..200 or a cursor
// that is not one of this applicant's history.
func (s *Store) ReviewHistory(env Env, extID string, q HistoryQuery) (HistoryPage, error) {
	if q.EventType != "" && !inList(historyEventTypes(), q.EventType) {
		return HistoryPage{}, Invalid("eventType", "eventType must be one of %s", strings.Join(historyEventTypes(), ", "))
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return HistoryPage{}, Invalid("limit", "limit must be an integer from 1 to %d", MaxLimit)
	}
	// A cursor names the entry the pages before ended with and the newest
	// one the walk began with ("" in cursors of releases before), from
	// which the 200 returnable ones count: events added during a walk do
	// not push its own out.
	var after, top string
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		ids, ok := strings.CutPrefix(string(b), historyCursorPrefix)
		after, top, _ = strings.Cut(ids, ",")
		if err != nil || !ok || after == "" {
			return HistoryPage{}, Invalid("cursor", "cursor is not one this service returned")
		}
	}
	var out HistoryPage
	err := s.viewIn(env, func(t *txn) error {
		out = HistoryPage{Items: []HistoryEntry{}}
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		all, err := t.history(env, a.ID)
		if err != nil {
			return err
		}
		// The pages before ended with the cursor's entry: skip up to it,
		// whatever the filters (a cursor is a position).
		skipping := after != ""
		// newer counts the matching entries newer than the walk's
		// newest, which came after the walk began and do not count
		// towards the 200; a cursor without that entry (of a release
		// before, or one whose entry is not before its position) counts
		// from the newest, as then.
		newer, found := 0, top == ""
		for _, h := range all {
			last := skipping && h.ID == after
			if last {
				skipping = false
			}
			if !found && h.ID == top {
				found, newer = true, out.TotalItems
			}
			if !found && last {
				found, top = true, "" // not before the position: none
			}
			if h.Internal || !inList(historyEventTypes(), h.EventType) ||
				(q.EventType != "" && h.EventType != q.EventType) || (!q.Since.IsZero() && h.AtUtc.Before(q.Since)) {
				continue
			}
			out.TotalItems++
			// Only the newest maxHistoryReturned matching events are ever
			// returned, over all pages (the seed: at most 200 events per
			// applicant); totalItems still counts them all.
			switch {
			case skipping || last:
			case out.TotalItems-newer > maxHistoryReturned:
			case len(out.Items) < q.Limit:
				out.Items = append(out.Items, h)
			case out.NextCursor == nil:
				next := out.Items[len(out.Items)-1].ID
				switch {
				case q.Cursor == "":
					next += "," + out.Items[0].ID // the walk's newest
				case top != "":
					next += "," + top
				}
				cur := base64.RawURLEncoding.EncodeToString([]byte(historyCursorPrefix + next))
				out.NextCursor = &cur
			}
		}
		if skipping {
			return Invalid("cursor", "cursor was not returned by this applicant's review history: a cursor pages only the list that returned it")
		}
		return nil
	})
	return out, err
}

// ApplicantHistory returns every history entry of an applicant, internal
// ones included, newest first (for the console). Returns ENOTFOUND.
func (s *Store) ApplicantHistory(env Env, extID string) ([]HistoryEntry, error) {
	var out []HistoryEntry
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out, err = t.history(env, a.ID)
		return err
	})
	return out, err
}

// maxHistoryReturned is how many events review-history returns of one
// applicant at most, all pages together (seed: "at most 200 events per
// applicant"); SPEC §3.3 keeps the number.
const maxHistoryReturned = 200

// historyCursorPrefix marks a review-history page cursor.
const historyCursorPrefix = "history:"

// CallbackSecret returns the signing secret of the KYC callback, so a
// receiver (or a test) can check signatures.
func (s *Store) CallbackSecret() (string, error) {
	var out string
	err := s.view(func(t *txn) error {
		c, err := t.callback()
		out = c.Secret
		return err
	})
	return out, err
}
