package retry_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/impl/retry"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock records the backoffs and takes no time; cancel, if set, is
// called at the sleep numbered cancelAt (1-based).
type fakeClock struct {
	sleeps   []time.Duration
	cancelAt int
	cancel   context.CancelFunc
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	if c.cancel != nil && len(c.sleeps) == c.cancelAt {
		c.cancel()
	}
	return ctx.Err()
}

// tracedError wraps its cause, as a traced error of the client library.
type tracedError struct{ cause error }

func (e tracedError) Error() string { return "[CDC:ErrNewStore]new store failed: " + e.cause.Error() }
func (e tracedError) Unwrap() error { return e.cause }

// F-R1 fix (b), upstream TestIsCreateTiStoreRetryable in our words.
func TestIsRetryable(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"live caller, plain Canceled: internal cancellation, retry", live, context.Canceled, true},
		{"live caller, traced Canceled: internal cancellation, retry", live, tracedError{context.Canceled}, true},
		{"live caller, fmt-wrapped Canceled: retry", live, fmt.Errorf("open: %w", context.Canceled), true},
		{"caller cancelled, plain Canceled: stop", done, context.Canceled, false},
		{"caller cancelled, traced Canceled: stop", done, tracedError{context.Canceled}, false},
		{"live caller, other error: retry", live, errors.New("pd unavailable"), true},
		{"caller cancelled, other error: retryable (Do stops on ctx anyway)", done, errors.New("x"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, retry.IsRetryable(tt.ctx, tt.err))
		})
	}
}

func TestDo(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		policy    retry.Policy
		results   []error // op's results in order; the last one repeats
		cancelAt  int     // cancel the caller's ctx at this backoff (0: never)
		wantCalls int
		wantErr   []error // errors.Is targets; nil means success
	}{
		{"first try succeeds", retry.Policy{}, []error{nil}, 0, 1, nil},
		{"internal cancellation retried while caller live", retry.Policy{},
			[]error{tracedError{context.Canceled}, context.Canceled, nil}, 0, 3, nil},
		{"caller cancelled during backoff stops", retry.Policy{},
			[]error{tracedError{context.Canceled}}, 2, 2, []error{context.Canceled}},
		{"attempts bounded", retry.Policy{MaxAttempts: 4}, []error{boom}, 0, 4,
			[]error{retry.ErrAttemptsExhausted, boom}},
		{"default bound is 50", retry.Policy{}, []error{boom}, 0, 50,
			[]error{retry.ErrAttemptsExhausted, boom}},
		{"custom final error stops at once", retry.Policy{Retryable: func(context.Context, error) bool { return false }},
			[]error{boom}, 0, 1, []error{boom}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := &fakeClock{cancelAt: tt.cancelAt}
			if tt.cancelAt > 0 {
				clock.cancel = cancel
			}
			p := tt.policy
			p.Clock = clock
			calls := 0
			err := retry.Do(ctx, p, func(context.Context) error {
				r := tt.results[min(calls, len(tt.results)-1)]
				calls++
				return r
			})
			require.Equal(t, tt.wantCalls, calls)
			if tt.wantErr == nil {
				require.NoError(t, err)
			}
			for _, target := range tt.wantErr {
				require.ErrorIs(t, err, target)
			}
			wantSleeps := calls - 1 // a backoff between attempts
			if tt.cancelAt > 0 {
				wantSleeps = tt.cancelAt // the cancelled backoff ends the run
			}
			require.Len(t, clock.sleeps, wantSleeps)
		})
	}
}

func TestDoStopsBeforeFirstAttemptWhenCallerDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := retry.Do(ctx, retry.Policy{Clock: &fakeClock{}}, func(context.Context) error { calls++; return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, calls)
}

func TestBackoffCappedAndJittered(t *testing.T) {
	p := retry.Policy{}
	want := []time.Duration{200, 400, 800, 1600, 3200, 4000, 4000}
	for i, w := range want {
		require.Equal(t, w*time.Millisecond, p.Backoff(i+1), "backoff after attempt %d", i+1)
	}
	// Jitter keeps each wait in [d/2, d).
	for _, r := range []float64{0, 0.5, 0.999} {
		clock := &fakeClock{}
		_ = retry.Do(context.Background(), retry.Policy{MaxAttempts: 8, Clock: clock, Rand: func() float64 { return r }},
			func(context.Context) error { return errors.New("x") })
		require.Len(t, clock.sleeps, 7)
		for i, d := range clock.sleeps {
			full := p.Backoff(i + 1)
			require.GreaterOrEqual(t, d, full/2)
			require.Less(t, d, full)
		}
	}
}

func TestRealClockSleepStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, retry.RealClock{}.Sleep(ctx, time.Hour), context.Canceled)
	require.NoError(t, retry.RealClock{}.Sleep(context.Background(), 0))
}

// TestBackoffIsTheCappedDoubling: the backoff after the n-th failure is
// exactly min(BaseDelay·2^(n-1), MaxDelay), computed here without
// overflow, for caps that a doubling of the base meets exactly, falls
// short of by one, and caps near the largest Duration, where doubling in
// a Duration would overflow to a negative wait (a retry with no backoff).
func TestBackoffIsTheCappedDoubling(t *testing.T) {
	policies := []retry.Policy{
		{BaseDelay: 1, MaxDelay: 8},
		{BaseDelay: 1, MaxDelay: 7},
		{BaseDelay: 1, MaxDelay: 9},
		{BaseDelay: 3, MaxDelay: 2}, // a base above the cap starts at the cap
		{BaseDelay: time.Hour, MaxDelay: math.MaxInt64},
		{BaseDelay: math.MaxInt64 / 3, MaxDelay: math.MaxInt64 - 1},
	}
	for _, p := range policies {
		for n := 1; n <= 80; n++ {
			want := new(big.Int).Lsh(big.NewInt(int64(p.BaseDelay)), uint(n-1))
			if want.Cmp(big.NewInt(int64(p.MaxDelay))) > 0 {
				want.SetInt64(int64(p.MaxDelay))
			}
			if got := p.Backoff(n); int64(got) != want.Int64() {
				t.Fatalf("base %d, cap %d: Backoff(%d) = %d, want %d", p.BaseDelay, p.MaxDelay, n, got, want)
			}
		}
	}
}

// TestJitterIsTheDocumentedFraction: the wait before attempt n+1 is
// d/2 + Rand()·d/2 with d = Backoff(n), as Policy.Rand documents: with
// the default 200ms base, Rand 0 waits half of each backoff and Rand ½
// three quarters of it.
func TestJitterIsTheDocumentedFraction(t *testing.T) {
	ms := time.Millisecond
	for r, want := range map[float64][]time.Duration{
		0:   {100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms},
		0.5: {150 * ms, 300 * ms, 600 * ms, 1200 * ms, 2400 * ms},
	} {
		clock := &fakeClock{}
		p := retry.Policy{MaxAttempts: 6, Clock: clock, Rand: func() float64 { return r }}
		_ = retry.Do(context.Background(), p, func(context.Context) error { return errors.New("x") })
		require.Equal(t, want, clock.sleeps, "waits with Rand %v", r)
	}
}
