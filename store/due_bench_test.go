package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// BenchmarkDueSandboxLead measures a Due scan when the sandbox clock is a
// month ahead and production holds n jobs due within that month: with a
// schedule per environment the scan reads none of them
// (TestDueReadsOnlyItsEnvironment counts it).
func BenchmarkDueSandboxLead(b *testing.B) {
	for _, n := range []int{0, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, clock := mustOpen(b, "", store.Options{})
			for i := range n {
				if _, err := s.Schedule(clock.Now().Add(time.Duration(i+1)*time.Minute), store.JobExpiry, store.Production, fmt.Sprint(i), ""); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.AdvanceClock(store.Sandbox, store.ClockTarget{By: 30 * 24 * time.Hour}, s.RunJob); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, _, err := s.Due(clock.Now(), 16, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
