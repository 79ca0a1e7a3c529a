package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainproof/drainproof/impl/retry"
	"github.com/drainproof/drainproof/impl/store"
)

// closeOnSleep is a retry clock that closes a store at the first backoff
// instead of waiting: the process that held the directory finishes its
// shutdown while the new one retries.
type closeOnSleep struct {
	t      *testing.T
	held   *store.PebbleEventStore
	sleeps int
}

func (c *closeOnSleep) Sleep(ctx context.Context, _ time.Duration) error {
	c.sleeps++
	if c.held != nil {
		if err := c.held.Close(); err != nil {
			c.t.Error(err)
		}
		c.held = nil
	}
	return ctx.Err()
}

// TestOpenPebbleRetriesTransientFailure: a directory still locked by the
// previous process fails the first open; the retry opens it once the
// previous process has closed it (the store-creation retry rule). Without
// retries (one attempt) the same open fails.
func TestOpenPebbleRetriesTransientFailure(t *testing.T) {
	dir := t.TempDir()
	held, err := store.NewPebbleEventStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.OpenPebbleEventStore(context.Background(), dir, store.WithOpenRetry(retry.Policy{MaxAttempts: 1})); err == nil {
		t.Fatal("a second open of a locked directory succeeded: no transient failure to retry")
	} else if !errors.Is(err, retry.ErrAttemptsExhausted) {
		t.Fatalf("one attempt: %v, want ErrAttemptsExhausted", err)
	}
	clock := &closeOnSleep{t: t, held: held}
	s, err := store.OpenPebbleEventStore(context.Background(), dir, store.WithOpenRetry(retry.Policy{MaxAttempts: 3, Clock: clock}))
	if err != nil {
		t.Fatalf("open with retries: %v", err)
	}
	defer s.Close()
	if clock.sleeps != 1 {
		t.Fatalf("%d backoffs, want 1 (one failed attempt, then success)", clock.sleeps)
	}
}
