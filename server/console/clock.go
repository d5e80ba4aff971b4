package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// The sandbox test clock page (SPEC §7): the sandbox environment's time and
// its lead over real time, and forms that move it forward through the same
// dispatcher call as POST /v1/sandbox/clock, showing what ran. Production
// has no test clock: the page answers 403 there and the nav hides it.

// ClockMover moves an environment's test clock forward, running the work
// due on the way (dispatch.Dispatcher.Advance).
type ClockMover interface {
	Advance(ctx context.Context, env store.Env, to store.ClockTarget) (store.ClockMove, error)
}

// ClockPages are the console's test-clock page and its form.
type ClockPages struct {
	c    *Console
	move ClockMover
}

// ClockPages returns the test-clock pages moving the clock through move.
func (c *Console) ClockPages(move ClockMover) *ClockPages {
	return &ClockPages{c: c, move: move}
}

// clockStep is one of the page's one-click moves.
type clockStep struct {
	AdvanceBy string // a Go duration, as advanceBy of the API
	Label     string
}

var clockSteps = [...]clockStep{{"1h", "+1 hour"}, {"24h", "+1 day"}, {"168h", "+7 days"}}

// formMinute is the layout of an <input type="datetime-local"> value.
const formMinute = "2006-01-02T15:04"

// Show serves GET /console/clock, with the move just made when Move
// redirected here (its result rides in the query, see movedQuery).
func (p *ClockPages) Show(w http.ResponseWriter, r *Request) error {
	return p.render(w, r, http.StatusOK, movedFromQuery(r.URL.Query()), "", "")
}

// movedQuery is the query of Move's redirect: what the move did, so that
// the page after it says so and a reload only shows it again (post,
// redirect, get), never moves the clock a second time.
func movedQuery(mv store.ClockMove) url.Values {
	q := url.Values{"from": {store.At(mv.From).String()}, "to": {store.At(mv.Now).String()},
		"steps": {strconv.Itoa(mv.Steps)}, "complete": {strconv.FormatBool(mv.Complete)}}
	for _, k := range store.JobKinds() {
		q.Set("ran."+k, strconv.Itoa(mv.Ran[k]))
	}
	return q
}

// movedFromQuery reads movedQuery back; nil when the query holds no move
// (or one the page cannot read: it is only ever shown, never acted on).
func movedFromQuery(q url.Values) *store.ClockMove {
	from, okFrom := store.ParseTime(q.Get("from"))
	to, okTo := store.ParseTime(q.Get("to"))
	steps, err := strconv.Atoi(q.Get("steps"))
	if !okFrom || !okTo || err != nil {
		return nil
	}
	mv := &store.ClockMove{From: from, Now: to, Steps: steps, Complete: q.Get("complete") != "false", Ran: map[string]int{}}
	for _, k := range store.JobKinds() {
		mv.Ran[k], _ = strconv.Atoi(q.Get("ran." + k))
	}
	return mv
}

// formMin is the earliest time the "to" field offers, to the minute as the
// field takes it: now's minute when now is on it, else the next (the
// minute now is in lies before now, and a move does not go back).
func formMin(now time.Time) string {
	m := now.UTC().Truncate(time.Minute)
	if m.Before(now) {
		m = m.Add(time.Minute)
	}
	return m.Format(formMinute)
}

// render draws the clock page, with the move just made (nil: none) or a
// form error beside its field.
func (p *ClockPages) render(w http.ResponseWriter, r *Request, status int, mv *store.ClockMove, errMsg, errField string) error {
	if err := sandboxClockOnly(r.env); err != nil {
		return err
	}
	now, offset := p.c.store.SandboxClock()
	data := map[string]any{"Now": store.At(now), "Offset": offset.Truncate(time.Second).String(), "Steps": clockSteps[:],
		"Min": formMin(now), "Err": errMsg, "ErrField": errField,
		"AdvanceBy": strings.TrimSpace(r.PostForm.Get("advanceBy")), "To": strings.TrimSpace(r.PostForm.Get("to"))}
	if mv != nil {
		type ran struct {
			Kind string
			N    int
		}
		var rs []ran
		for _, k := range store.JobKinds() {
			rs = append(rs, ran{k, mv.Ran[k]})
		}
		data["Move"] = map[string]any{"From": store.At(mv.From), "Now": store.At(mv.Now), "Steps": mv.Steps,
			"Complete": mv.Complete, "Ran": rs, "Max": store.MaxClockSteps}
	}
	return p.c.render(w, r, status, "clock", "Sandbox clock", "clock", data)
}

// Move serves POST /console/clock: advanceBy (a button's or the typed
// duration) or to (a UTC date and time), as POST /v1/sandbox/clock takes
// them; it answers 303 to the page, which then says what ran. The move is
// recorded as the operator's console action.
func (p *ClockPages) Move(w http.ResponseWriter, r *Request) error {
	if err := sandboxClockOnly(r.env); err != nil {
		return err
	}
	now, _ := p.c.store.SandboxClock()
	var by *string
	var to *store.Time
	if v := strings.TrimSpace(r.PostForm.Get("advanceBy")); v != "" {
		by = &v
	}
	if v := strings.TrimSpace(r.PostForm.Get("to")); v != "" {
		t, err := parseFormTime(v)
		if err != nil {
			return p.formError(w, r, err)
		}
		to = &t
	}
	target, err := store.NewClockTarget(by, to, now)
	if err != nil {
		return p.formError(w, r, err)
	}
	mv, err := p.move.Advance(r.Context(), r.env, target)
	if err != nil {
		return p.formError(w, r, err)
	}
	details := map[string]any{"from": store.At(mv.From), "to": store.At(mv.Now), "steps": mv.Steps, "complete": mv.Complete}
	if len(mv.Ran) > 0 {
		details["ran"] = mv.Ran
	}
	if by != nil {
		details["advanceBy"] = *by
	}
	if err := p.c.record(r, r.env, "console.sandbox_clock_moved", details); err != nil {
		return err
	}
	return redirect(w, r, "/console/clock?"+movedQuery(mv).Encode(), "")
}

// formError shows the page again with an invalid input's message beside
// the form, at the status the API would answer; other errors go to the
// error page.
func (p *ClockPages) formError(w http.ResponseWriter, r *Request, err error) error {
	e := store.AsError(err)
	if e.Code != store.EINVALID {
		return err
	}
	return p.render(w, r, wire.Status(err), nil, e.Message, e.Field)
}

// parseFormTime reads the "to" field: a datetime-local value, taken as
// UTC, or any timestamp the API takes.
func parseFormTime(v string) (store.Time, error) {
	for _, layout := range []string{formMinute, formMinute + ":05", formMinute + ":05.000"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return store.At(t), nil
		}
	}
	if t, ok := store.ParseTime(v); ok {
		return store.At(t), nil
	}
	return store.Time{}, store.Invalid("to", "to must be a date and time such as 2026-01-31T18:00 (UTC)")
}

// sandboxClockOnly refuses the clock page outside the sandbox, as the API
// refuses GET and POST /v1/sandbox/clock.
func sandboxClockOnly(env store.Env) error {
	if env != store.Sandbox {
		return store.Errorf(store.EFORBIDDEN, "sandbox_only", "the test clock exists only in the sandbox environment; switch to sandbox")
	}
	return nil
}
