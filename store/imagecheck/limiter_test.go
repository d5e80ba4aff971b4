package imagecheck_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/complybox/complybox/store/imagecheck"
)

// waitFor spins until cond holds (no sleeps, no timing).
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
	}
}

// TestLimiter: decodes hold their memory from the budget; one that does not
// fit waits in line, one that finds the line full is refused with ErrBusy
// at once, and releases let the line go in order.
func TestLimiter(t *testing.T) {
	l := imagecheck.NewLimiter(100, 2)
	r1, err := l.Acquire(60)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.Acquire(40) // fits exactly
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, n := range []int64{50, 1000} { // 1000 is capped at the whole budget
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := l.Acquire(n)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			release()
		}()
		waitFor(func() bool { return l.Waiting() == i+1 })
	}
	if _, err := l.Acquire(1); !errors.Is(err, imagecheck.ErrBusy) {
		t.Fatalf("with the budget spent and the line full: %v, want ErrBusy", err)
	}
	mu.Lock()
	if len(order) != 0 {
		t.Fatalf("%v ran while the budget was spent", order)
	}
	mu.Unlock()
	r1()
	r1() // twice is harmless
	r2()
	wg.Wait()
	if len(order) != 2 || order[0] != 0 || order[1] != 1 {
		t.Errorf("order %v, want [0 1]", order)
	}
	if l.Waiting() != 0 {
		t.Errorf("%d still waiting", l.Waiting())
	}
	r, err := l.Acquire(100) // everything was given back
	if err != nil {
		t.Fatal(err)
	}
	r()
}

// TestLimiterBoundsDecodes: a real check of a valid image holds decode
// memory while it decodes, so with the budget taken and no room to wait it
// is refused with ErrBusy, and it succeeds once the budget is free.
func TestLimiterBoundsDecodes(t *testing.T) {
	img := pngBytes(t, 300, 300)
	l := imagecheck.NewLimiter(1<<20, 0)
	hold, err := l.Acquire(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Check("selfie", img, false); !errors.Is(err, imagecheck.ErrBusy) {
		t.Fatalf("while the budget is held: %v, want ErrBusy", err)
	}
	hold()
	if _, err := l.Check("selfie", img, false); err != nil {
		t.Fatal(err)
	}
}
