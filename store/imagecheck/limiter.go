package imagecheck

import (
	"errors"
	"image"
	"sync"
)

// ErrBusy is returned when an image cannot be decoded now because the
// decode budget is spent and the queue for it is full: the caller answers
// 503 with Retry-After.
var ErrBusy = errors.New("too many images are being decoded; try again shortly")

// Limiter bounds the memory that concurrent decodes take, so that a burst
// of large uploads queues instead of exhausting memory (SPEC §3.4:
// concurrent decoding is bounded per process). Each decode reserves the
// memory its header says it needs (at most the whole budget); a decode
// that does not fit waits in line, first come first served, and one that
// finds the line full is refused with ErrBusy. One Limiter serves a
// process; its methods are safe for concurrent use.
type Limiter struct {
	budget, maxQueue int64

	mu    sync.Mutex
	used  int64
	queue []*waiter
}

type waiter struct {
	n     int64
	ready chan struct{}
}

// NewLimiter returns a limiter of budget bytes of decode memory with room
// for maxQueue decodes waiting.
func NewLimiter(budget int64, maxQueue int) *Limiter {
	return &Limiter{budget: max(budget, 1), maxQueue: int64(max(maxQueue, 0))}
}

// Check is the package's Check, decoding within the limiter's budget.
// Besides a *fielderr.Error it returns ErrBusy.
func (l *Limiter) Check(field string, data []byte, allowPDF bool) (Image, error) {
	return check(field, data, allowPDF, l, false)
}

// Decode is the package's Decode, decoding within the limiter's budget.
// Besides a *fielderr.Error it returns ErrBusy.
func (l *Limiter) Decode(field, value string, allowPDF bool) (Image, error) {
	return decode(field, value, allowPDF, l, false)
}

// Use decodes data, a JPEG or PNG, under the same checks as Check (its
// header first: size, dimensions, the memory it needs) and within the
// limiter's budget, and hands the decoded image to use while that memory
// is still reserved. Besides a *fielderr.Error (for a PDF or any other format
// too) it returns ErrBusy.
func (l *Limiter) Use(field string, data []byte, use func(image.Image)) error {
	if len(data) > MaxBytes {
		return invalid(field, "%s is %d bytes; at most 10 MiB (%d bytes) is allowed", field, len(data), MaxBytes)
	}
	ct := sniffImage(data)
	if ct != TypeJPEG && ct != TypePNG {
		return invalid(field, "%s must be a JPEG or PNG image", field)
	}
	_, _, err := decodeRaster(field, ct, data, l, false, use)
	return err
}

// Acquire reserves n bytes of decode memory, waiting in line while the
// budget is spent, and returns the function that gives them back. It
// returns ErrBusy at once when the line is full.
func (l *Limiter) Acquire(n int64) (release func(), err error) { return l.acquire(n) }

// Waiting returns how many decodes wait in line.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

func (l *Limiter) acquire(n int64) (func(), error) {
	if l == nil {
		return func() {}, nil
	}
	n = min(max(n, 1), l.budget)
	l.mu.Lock()
	if len(l.queue) == 0 && l.used+n <= l.budget {
		l.used += n
		l.mu.Unlock()
		return l.releaser(n), nil
	}
	if int64(len(l.queue)) >= l.maxQueue {
		l.mu.Unlock()
		return nil, ErrBusy
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	l.queue = append(l.queue, w)
	l.mu.Unlock()
	<-w.ready // granted by a release, which counted w in used
	return l.releaser(n), nil
}

// releaser returns the function that gives n bytes back once and lets the
// waiters at the head of the line that now fit go.
func (l *Limiter) releaser(n int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.used -= n
			for len(l.queue) > 0 && l.used+l.queue[0].n <= l.budget {
				w := l.queue[0]
				l.queue = l.queue[1:]
				l.used += w.n
				close(w.ready)
			}
		})
	}
}
