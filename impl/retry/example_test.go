package retry_test

import (
	"context"
	"fmt"
	"time"

	"github.com/drainproof/drainproof/impl/retry"
)

// instant is a Clock that takes no time.
type instant struct{}

func (instant) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// A store creation whose client cancels itself internally twice (a PD
// client being rebuilt) succeeds on the third attempt, because the
// caller's context is still live.
func ExampleDo() {
	attempts := 0
	err := retry.Do(context.Background(), retry.Policy{Clock: instant{}}, func(context.Context) error {
		attempts++
		if attempts < 3 {
			return fmt.Errorf("new store failed: %w", context.Canceled)
		}
		return nil
	})
	fmt.Println(attempts, err)
	// Output: 3 <nil>
}
