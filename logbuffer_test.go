package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is a destination that keeps what it is given and can be held shut.
type sink struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	gate chan struct{} // when set, each Write waits for it to be closed
	got  chan struct{} // when set, signalled after each Write
}

func (s *sink) Write(p []byte) (int, error) {
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	s.buf.Write(p)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
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
