package server

import (
	"net/http"
	"time"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// clockView is the body of GET /v1/sandbox/clock: the sandbox time and its
// lead over real time, as a Go duration string and in milliseconds.
type clockView struct {
	Now      store.Time `json:"now"`
	Offset   string     `json:"offset"`
	OffsetMs int64      `json:"offsetMs"`
}

func newClockView(now time.Time, offset time.Duration) clockView {
	return clockView{Now: store.At(now), Offset: offset.Truncate(time.Millisecond).String(), OffsetMs: offset.Milliseconds()}
}

// clockMoveView is the body of POST /v1/sandbox/clock.
type clockMoveView struct {
	clockView
	From     store.Time     `json:"from"`     // the sandbox time before the move
	Ran      map[string]int `json:"ran"`      // jobs run, by kind, every kind present
	Steps    int            `json:"steps"`    // jobs run in all
	Complete bool           `json:"complete"` // false when the move stopped at its step bound before the target
}

// getClock serves GET /v1/sandbox/clock (SPEC §7). Sandbox only.
func (s *Server) getClock(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newClockView(s.store.SandboxClock()))
	return nil
}

// moveClock serves POST /v1/sandbox/clock {advanceBy | to}: the sandbox
// clock moves forward, running every sandbox job due on the way (SPEC §7).
// Sandbox only; EINVALID names advanceBy or to.
func (s *Server) moveClock(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	var in struct {
		AdvanceBy *string     `json:"advanceBy"`
		To        *store.Time `json:"to"`
	}
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	now, _ := s.store.SandboxClock()
	to, err := store.NewClockTarget(in.AdvanceBy, in.To, now)
	if err != nil {
		return err
	}
	mv, err := s.disp.Advance(r.Context(), r.env, to)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, clockMoveView{clockView: newClockView(mv.Now, mv.Offset), From: store.At(mv.From),
		Ran: mv.RanByKind(), Steps: mv.Steps, Complete: mv.Complete})
	return nil
}
