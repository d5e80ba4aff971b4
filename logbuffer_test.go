package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// sink is a destination that keeps what it is given and can be held shut.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int           // calls of Write
	gate   chan struct{} // when set, each Write waits for it to be closed
	got    chan struct{} // when set, signalled after each Write
}

func (s *sink) Write(p []byte) (int, error) {
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	s.buf.Write(p)
	s.writes++
	s.mu.Unlock()
	if s.got != nil {
		select {
		case s.got <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func (s *sink) String() string {
	got, _ := s.held()
	return got
}

// held reports what the destination holds and in how many writes it came.
func (s *sink) held() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String(), s.writes
}

// pauseClock is the log's clock in tests: a store.ManualClock whose
// pauses are handed to the test, which ends each one.
type pauseClock struct {
	*store.ManualClock
	asked chan pauseAsked
}

// pauseAsked is one pause the log asked for: how long, and the channel
// that ends it.
type pauseAsked struct {
	d   time.Duration
	end chan time.Time
}

func newPauseClock() *pauseClock {
	return &pauseClock{ManualClock: store.NewManualClock(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)),
		asked: make(chan pauseAsked, 1)}
}

func (c *pauseClock) after(d time.Duration) <-chan time.Time {
	end := make(chan time.Time, 1)
	c.asked <- pauseAsked{d, end}
	return end
}

// pause waits for the log to ask for a pause and returns how long it asked
// for and a function that ends it.
func (c *pauseClock) pause(t *testing.T) (time.Duration, func()) {
	t.Helper()
	select {
	case p := <-c.asked:
		return p.d, func() { p.end <- c.Now() }
	case <-time.After(10 * time.Second):
		t.Fatal("the log never paused")
		return 0, nil
	}
}

func TestLogBufferKeepsEveryLineWholeAndInOrder(t *testing.T) {
	dst := &sink{}
	b := newLogBuffer(dst)
	const writers, lines = 16, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(b, "writer=%d line=%d %s\n", w, i, strings.Repeat("x", i%97))
			}
		})
	}
	wg.Wait()
	b.Close()

	got := strings.Split(strings.TrimSuffix(dst.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines reached the destination, want %d", len(got), writers*lines)
	}
	next := make([]int, writers)
	for _, l := range got {
		f := strings.SplitN(l, " ", 3)
		var w, i int
		if len(f) != 3 {
			t.Fatalf("line %q is not whole", l)
		}
		if _, err := fmt.Sscanf(f[0]+" "+f[1], "writer=%d line=%d", &w, &i); err != nil || w < 0 || w >= writers {
			t.Fatalf("line %q is not whole: %v", l, err)
		}
		if i != next[w] || len(f[2]) != i%97 {
			t.Fatalf("writer %d: %q arrived where line %d was due", w, l, next[w])
		}
		next[w]++
	}
}

// A line reaches the destination without Close and without more lines
// behind it: the buffer has no timer to wait for.
func TestLogBufferWritesALoneLineAtOnce(t *testing.T) {
	dst := &sink{got: make(chan struct{}, 1)}
	b := newLogBuffer(dst)
	defer b.Close()
	for i := range 3 {
		line := fmt.Sprintf("lone line %d\n", i)
		b.Write([]byte(line))
		select {
		case <-dst.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("line %d never reached the destination before Close", i)
		}
		if !strings.HasSuffix(dst.String(), line) {
			t.Fatalf("destination holds %q, want it to end with %q", dst.String(), line)
		}
	}
}

// The lines of a busy spell go out in one write at most every logBatch; a
// line after a quiet spell goes out at once.
func TestLogBufferGathersABusySpellIntoOneWrite(t *testing.T) {
	dst := &sink{got: make(chan struct{}, 1)}
	clock := newPauseClock()
	b := startLogBuffer(dst, clock.Now, clock.after)
	defer b.Close()
	arrived := func(want string, writes int) {
		t.Helper()
		select {
		case <-dst.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing reached the destination; it holds %q", dst.String())
		}
		if got, n := dst.held(); got != want || n != writes {
			t.Fatalf("destination holds %q in %d writes, want %q in %d", got, n, want, writes)
		}
	}

	b.Write([]byte("first\n"))
	arrived("first\n", 1)

	// At the same instant: the log pauses for logBatch before writing again.
	b.Write([]byte("a\n"))
	d, end := clock.pause(t)
	if d != logBatch {
		t.Fatalf("the log paused %v, want %v", d, logBatch)
	}
	b.Write([]byte("b\n"))
	b.Write([]byte("c\n"))
	if got, n := dst.held(); got != "first\n" || n != 1 {
		t.Fatalf("during the pause the destination got %q in %d writes, want only the first line", got, n)
	}
	clock.Advance(logBatch)
	end()
	arrived("first\na\nb\nc\n", 2)

	// A line after a quiet spell does not wait.
	clock.Advance(time.Second)
	b.Write([]byte("later\n"))
	arrived("first\na\nb\nc\nlater\n", 3)
	select {
	case p := <-clock.asked:
		t.Fatalf("a line after a quiet spell waited %v", p.d)
	default:
	}

	// Close during a pause writes what is pending without waiting for it.
	b.Write([]byte("last\n"))
	clock.pause(t)
	b.Close()
	if got := dst.String(); !strings.HasSuffix(got, "later\nlast\n") {
		t.Fatalf("after Close the destination holds %q, want it to end with the pending line", got)
	}
}

// When the destination does not keep up, Write waits for it once
// logBufferMax bytes are pending instead of holding ever more in memory.
func TestLogBufferWaitsForASlowDestination(t *testing.T) {
	dst := &sink{gate: make(chan struct{})}
	b := newLogBuffer(dst)
	line := []byte(strings.Repeat("y", 1023) + "\n")

	returned := make(chan struct{})
	go func() {
		defer close(returned)
		for range 3 * logBufferMax / len(line) {
			b.Write(line)
		}
	}()
	select {
	case <-returned:
		t.Fatalf("%d bytes were accepted while the destination took none", 3*logBufferMax)
	case <-time.After(200 * time.Millisecond):
	}
	b.mu.Lock()
	pending := len(b.pending)
	b.mu.Unlock()
	if pending > logBufferMax+len(line) {
		t.Fatalf("%d bytes pending, want at most %d", pending, logBufferMax+len(line))
	}
	close(dst.gate)
	<-returned
	b.Close()
	if n := len(dst.String()); n != 3*logBufferMax/len(line)*len(line) {
		t.Fatalf("destination got %d bytes, want %d", n, 3*logBufferMax/len(line)*len(line))
	}
}

func TestLogBufferWritesThroughAfterClose(t *testing.T) {
	dst := &sink{}
	b := newLogBuffer(dst)
	b.Write([]byte("before\n"))
	b.Close()
	if got := dst.String(); got != "before\n" {
		t.Fatalf("after Close the destination holds %q, want the line written before it", got)
	}
	b.Write([]byte("after\n"))
	if got := dst.String(); got != "before\nafter\n" {
		t.Fatalf("a line written after Close: destination holds %q", got)
	}
	b.Close() // a second Close is harmless
}
