package modelcheck

import (
	"context"
	"time"
)

// checkLiveness is filled in by the liveness search.
func (c *checker[S]) checkLiveness(ctx context.Context, start time.Time, res *Result[S]) error {
	return nil
}
