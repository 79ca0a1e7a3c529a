package sim

import "slices"

// Result counts what a run did. BrokenStreams is the protocol's failure
// measure: dispatchers still registered with T (published, held between
// store steps, or subscribed) at a restart that a completed drain
// authorised.
type Result struct {
	Seed            uint64 `json:"seed"`
	Steps           int    `json:"steps"`
	Transport       string `json:"transport"`
	DrainsCompleted int    `json:"drains_completed"`
	Restarts        int    `json:"restarts"`
	UpgradeRestarts int    `json:"upgrade_restarts"`
	CrashRestarts   int    `json:"crash_restarts"`
	LegacyRestarts  int    `json:"legacy_restarts"`
	BrokenStreams   int    `json:"broken_streams"`
	Registrations   int    `json:"registrations"`
	MessagesSent    int    `json:"messages_sent"`
	MessagesLost    int    `json:"messages_lost"`
	Duplicated      int    `json:"messages_duplicated"`
	// TraceLinesLost counts the trace lines T's killed processes lost (a
	// run traced per process: Config.Traces).
	TraceLinesLost int `json:"trace_lines_lost,omitempty"`
	// DrainSteps holds how many events each completed drain took, from
	// the poll that started its session to the one that found it
	// complete, in the order they completed (summarised by [Summarise]).
	DrainSteps []int `json:"-"`
	// OpenDrains counts the drains still open after the Steps events.
	OpenDrains int `json:"open_drains"`
	// SettledDrains counts the open drains that completed in the fault-free
	// events that followed (Config.Settle); SettleSteps holds how many
	// events each took. StalledDrains counts those still open after
	// Settle events.
	SettledDrains int   `json:"settled_drains"`
	StalledDrains int   `json:"stalled_drains"`
	SettleSteps   []int `json:"-"`
	// Store is T's event store; Delivery checks the changefeed's data.
	Store string `json:"store"`
	Delivery
}

// Add adds r's counts to s (Seed and Steps are kept, Transport too).
func (s *Result) Add(r Result) {
	s.DrainsCompleted += r.DrainsCompleted
	s.Restarts += r.Restarts
	s.UpgradeRestarts += r.UpgradeRestarts
	s.CrashRestarts += r.CrashRestarts
	s.LegacyRestarts += r.LegacyRestarts
	s.BrokenStreams += r.BrokenStreams
	s.Registrations += r.Registrations
	s.MessagesSent += r.MessagesSent
	s.MessagesLost += r.MessagesLost
	s.Duplicated += r.Duplicated
	s.TraceLinesLost += r.TraceLinesLost
	s.Delivery.add(r.Delivery)
	s.DrainSteps = append(s.DrainSteps, r.DrainSteps...)
	s.OpenDrains += r.OpenDrains
	s.SettledDrains += r.SettledDrains
	s.StalledDrains += r.StalledDrains
	s.SettleSteps = append(s.SettleSteps, r.SettleSteps...)
}

// Summary is the distribution of drain durations, in events.
type Summary struct {
	N      int `json:"n"`
	Median int `json:"median"`
	P99    int `json:"p99"`
	Max    int `json:"max"`
}

// Summarise returns the count, median, 99th percentile (nearest rank) and
// maximum of steps; all zero when steps is empty.
func Summarise(steps []int) Summary {
	if len(steps) == 0 {
		return Summary{}
	}
	s := slices.Sorted(slices.Values(steps))
	rank := func(p int) int { return s[max(0, (p*len(s)+99)/100-1)] }
	return Summary{N: len(s), Median: rank(50), P99: rank(99), Max: s[len(s)-1]}
}
