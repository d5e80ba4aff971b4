package main

import (
	"io"
	"sync"
	"time"
)

// logBufferMax is how many bytes of log lines may wait for the destination
// before a Write waits for it instead.
const logBufferMax = 1 << 20

// logBatch is the least time between two writes to the destination: the
// lines that come sooner gather for one write(2). A line after a quiet
// spell goes out at once.
const logBatch = 2 * time.Millisecond

// logBuffer is the writer behind serve's log. Write copies the line and
// returns; one goroutine writes what has gathered to the destination, so a
// busy server makes one write(2) for many lines and no handler holds the
// log's lock across a system call. Its writes are at least logBatch apart:
// a line after a quiet spell goes out as soon as the goroutine runs, and
// the lines of a busy spell gather meanwhile (without the pause, a server
// answering 20k reads a second made 0.7 log write(2)s per request;
// docs/performance.md, stop 36). Close writes the rest. A destination that
// does not keep up makes Write wait once logBufferMax bytes are pending, so
// memory stays bounded and no line is dropped.
type logBuffer struct {
	dst io.Writer

	mu      sync.Mutex // guards pending and closed
	pending []byte
	closed  bool

	wmu   sync.Mutex // held while writing to dst, so lines keep their order
	spare []byte     // the last buffer written, reused; guarded by wmu

	wake      chan struct{} // capacity 1: lines are pending
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	now   func() time.Time                     // time.Now; tests set a clock
	after func(time.Duration) <-chan time.Time // time.After; likewise
}

// newLogBuffer returns a logBuffer writing to dst; Close stops it.
func newLogBuffer(dst io.Writer) *logBuffer {
	return startLogBuffer(dst, time.Now, time.After)
}

// startLogBuffer is newLogBuffer with the clock the batching reads.
func startLogBuffer(dst io.Writer, now func() time.Time, after func(time.Duration) <-chan time.Time) *logBuffer {
	b := &logBuffer{dst: dst, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		now: now, after: after}
	go b.run()
	return b
}

// Write queues a copy of p for the destination. It never fails: a failing
// destination has nowhere to report to.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	first := len(b.pending) == 0
	b.pending = append(b.pending, p...)
	now := b.closed || len(b.pending) > logBufferMax
	b.mu.Unlock()
	switch {
	case now:
		b.flush()
	case first:
		select {
		case b.wake <- struct{}{}:
		default: // already signalled
		}
	}
	return len(p), nil
}

// flush writes everything pending to the destination.
func (b *logBuffer) flush() {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	out := b.pending
	b.pending = b.spare[:0]
	b.mu.Unlock()
	if len(out) > 0 {
		_, _ = b.dst.Write(out)
	}
	if cap(out) > 64<<10 {
		out = nil // a burst's buffer is not kept
	}
	b.spare = out
}

func (b *logBuffer) run() {
	defer close(b.done)
	var last time.Time // when the last write to the destination began
	for {
		select {
		case <-b.wake:
		case <-b.quit:
			b.flush()
			return
		}
		if wait := logBatch - b.now().Sub(last); wait > 0 {
			select {
			case <-b.after(wait):
			case <-b.quit:
				b.flush()
				return
			}
		}
		last = b.now() // before the write, which a test may be waiting for
		b.flush()
	}
}

// Close writes what is pending and stops the goroutine; later Writes go
// straight to the destination.
func (b *logBuffer) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.quit)
		<-b.done
	})
	return nil
}
