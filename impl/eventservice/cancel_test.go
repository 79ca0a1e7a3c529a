package eventservice

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCancelledRegisterReleasesBlockedStore is the transport's case of
// a blocked store call: a REGISTER whose RegisterTable blocks and whose
// caller gives up (a gRPC deadline) must return promptly, leave the
// count as before (R1, R3: the registration is rolled back), and not
// stall the requests of other dispatchers queued behind it. Before the
// request's context reached the store call, the store got Run's context
// only: the Do never returned and the loop stayed blocked.
func TestCancelledRegisterReleasesBlockedStore(t *testing.T) {
	for _, queued := range []bool{false, true} {
		name := "baton"
		if queued {
			name = "queued"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			ss := h.schemaStore("c1")
			hold := ss.BlockRegisterTable()
			released := false
			release := func() {
				if !released {
					released = true
					hold.Release()
				}
			}
			defer release()
			before := h.count()
			d0 := make(chan error, 1)
			if queued {
				// d0 holds the loop in its store call (its caller waits
				// for good), so d1 waits in the queue behind it.
				go func() { d0 <- h.svc.Do(context.Background(), reg("d0", 9)) }()
				<-hold.Entered()
			}

			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- h.svc.Do(ctx, reg("d1", 1)) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(3 * time.Second):
				release() // let the goroutines end, for goleak
				t.Fatalf("a REGISTER whose context ended 100ms in has not returned after 3s")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Do = %v, want the context's deadline error", err)
			}
			if el := time.Since(start); el > time.Second {
				t.Errorf("Do returned after %v, want promptly after its 100ms deadline", el)
			}
			if queued {
				// d0 goes on; d1, whose caller gave up while it waited,
				// must not run after it.
				ss.Unblock()
				release()
				if err := <-d0; err != nil {
					t.Fatalf("d0: %v", err)
				}
			}
			// Another dispatcher's request is not stalled behind it: a
			// table trigger (no store call) with its own short deadline.
			ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
			defer cancel2()
			if err := h.svc.Do(ctx2, trig("c1", "t1")); err != nil {
				release()
				t.Fatalf("a later REGISTER of another dispatcher: %v (stalled behind the blocked one)", err)
			}
			ss.Unblock()
			release()
			// The count is right: d1 left no trace, t1 counts once (and
			// d0, if registered, once).
			want := before + 1
			if queued {
				want++ // d0
			}
			if got := h.count(); got != want {
				t.Errorf("count = %d after the cancelled REGISTER, want %d", got, want)
			}
			b, _ := h.broker("c1")
			for _, d := range b.Dispatchers {
				if d.ID == "d1" {
					t.Errorf("the cancelled dispatcher d1 is registered")
				}
			}
			h.checkQuiescent()
		})
	}
}
