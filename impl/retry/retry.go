package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults of [Policy], the values of the upstream CreateTiStore retry.
const (
	// DefaultMaxAttempts is the number of attempts when MaxAttempts is 0.
	DefaultMaxAttempts = 50
	// DefaultBaseDelay is the first backoff when BaseDelay is 0.
	DefaultBaseDelay = 200 * time.Millisecond
	// DefaultMaxDelay caps the backoff when MaxDelay is 0.
	DefaultMaxDelay = 4 * time.Second
)

// ErrAttemptsExhausted is wrapped by the error [Do] returns when the last
// allowed attempt failed with a retryable error; the last error is wrapped
// too.
var ErrAttemptsExhausted = errors.New("retry: attempts exhausted")

// Clock waits. Sleep returns nil after d, or ctx's error as soon as ctx is
// done.
type Clock interface {
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the [Clock] of the wall: a timer, stopped early when ctx is
// done.
type RealClock struct{}

// Sleep implements [Clock].
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Policy configures [Do]. The zero value is usable: every zero field takes
// its default.
type Policy struct {
	// MaxAttempts bounds the attempts (DefaultMaxAttempts if 0).
	MaxAttempts int
	// BaseDelay is the backoff after the first failure (DefaultBaseDelay
	// if 0); it doubles after each further failure.
	BaseDelay time.Duration
	// MaxDelay caps the backoff (DefaultMaxDelay if 0).
	MaxDelay time.Duration
	// Clock waits between attempts (RealClock if nil).
	Clock Clock
	// Rand returns a number in [0, 1) for the jitter (math/rand/v2 if
	// nil). The backoff before attempt n+1 is d/2 + Rand()*d/2 where
	// d = min(BaseDelay<<(n-1), MaxDelay).
	Rand func() float64
	// Retryable decides whether an error is worth another attempt
	// (IsRetryable if nil). ctx is the caller's context.
	Retryable func(ctx context.Context, err error) bool

	_ struct{}
}

func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.Clock == nil {
		p.Clock = RealClock{}
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Retryable == nil {
		p.Retryable = IsRetryable
	}
	return p
}

// Backoff returns the wait after the n-th failed attempt (n ≥ 1) before
// jitter: min(BaseDelay·2^(n-1), MaxDelay), with p's defaults applied.
func (p Policy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	d := min(p.BaseDelay, p.MaxDelay)
	for i := 1; i < n; i++ {
		if d > p.MaxDelay/2 {
			// Doubling would pass the cap, or overflow a Duration when
			// the cap is near the largest one (a negative wait: no
			// backoff at all).
			return p.MaxDelay
		}
		d *= 2
	}
	return d
}

// IsRetryable is the store-creation retry rule: an error whose cause is
// context.Canceled is retryable only while the caller's ctx is live (the
// cancellation came from inside the client); every other error is
// retryable.
func IsRetryable(ctx context.Context, err error) bool {
	if errors.Is(err, context.Canceled) {
		return ctx.Err() == nil
	}
	return true
}

// Do calls op with ctx until it returns nil, and returns nil then. It
// stops and returns:
//   - ctx's error (joined with op's last error, if any) as soon as ctx is
//     done, before an attempt or during a backoff;
//   - op's error unchanged if p.Retryable says it is final;
//   - an error wrapping ErrAttemptsExhausted and op's last error after
//     p.MaxAttempts attempts.
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	p = p.withDefaults()
	var last error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, last)
		}
		last = op(ctx)
		if last == nil {
			return nil
		}
		if !p.Retryable(ctx, last) {
			return last
		}
		if attempt >= p.MaxAttempts {
			return fmt.Errorf("%w after %d attempts: %w", ErrAttemptsExhausted, attempt, last)
		}
		d := p.Backoff(attempt)
		d = d/2 + time.Duration(p.Rand()*float64(d/2))
		if err := p.Clock.Sleep(ctx, d); err != nil {
			return errors.Join(err, last)
		}
	}
}
