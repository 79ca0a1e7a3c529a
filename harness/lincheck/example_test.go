package lincheck_test

import (
	"context"
	"fmt"
	"time"

	"github.com/drainproof/drainproof/harness/lincheck"
)

// Record a history of eight clients against a real event service and
// check it.
func Example() {
	h, err := lincheck.Record(context.Background(), lincheck.Config{Clients: 8, Ops: 400, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := lincheck.Check(h, time.Minute)
	fmt.Println(res.Outcome, res.Ops)
	// Output: ok 405
}

// Check a hand-written history: a registration succeeds after
// CloseAdmission returned, which no sequential order explains (R8).
func ExampleCheck() {
	h := &lincheck.History{Version: lincheck.HistoryVersion, Clients: 2, Ops: []lincheck.Op{
		{Client: 0, Call: 1, Return: 2, Kind: lincheck.KindClose},
		{Client: 1, Call: 3, Return: 4, Kind: lincheck.KindRegister, ID: "d0"},
	}}
	if err := h.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(lincheck.Check(h, 0).Outcome)
	// Output: illegal
}
