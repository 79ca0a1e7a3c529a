package logcoord

import (
	"github.com/drainproof/drainproof/tla/names"
	"sync"

	"github.com/drainproof/drainproof/impl/bugs"
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// Answer is the LogCoordinator's EventBrokerDispatcherCountResponse to the
// coordinator (TLA+ Ans). Known false is the "unknown" answer; then Epoch,
// Count and AdmissionClosed are zero.
type Answer struct {
	Target          node.ID
	Known           bool
	Epoch           uint64
	Count           int64
	AdmissionClosed bool
}

// Unknown returns the "unknown" answer for target.
func Unknown(target node.ID) Answer { return Answer{Target: target} }

// Config configures a [Cache].
type Config struct {
	// TTL is how many ticks an entry stays fresh after its last refresh;
	// 0 means entries never expire by age.
	TTL int64
	// Tracer, if set, receives the model actions about TraceNode
	// (docs/trace.md, see trace.go). Nil: no tracing.
	Tracer trace.Tracer
	// TraceNode is the node whose entry is traced (every node if empty).
	TraceNode node.ID

	_ struct{}
}

// entry is a node's cached report. receivedAt dates it: the arrival of
// the newest sample (by Report.Seq) the cache has had from the process,
// never of an older one delivered late.
type entry struct {
	report     node.Report
	receivedAt int64
	seq        uint64 // the newest Report.Seq received for report.Epoch
}

// Cache is the LogCoordinator's cache of event broker reports, one entry
// per node.
type Cache struct {
	cfg Config

	mu      sync.Mutex
	entries map[node.ID]entry
}

// New returns an empty cache.
func New(cfg Config) *Cache {
	return &Cache{cfg: cfg, entries: make(map[node.ID]entry)}
}

// OnReport caches r, received at now (TLA+ LogCoordRecvReport, L2),
// monotonically within an epoch, and reports whether the entry took r's
// value: the first report, a newer epoch, any report of the epoch while
// the entry's admission is open, a closed report of a lower count. A
// report of the entry's epoch that it does not take still refreshes the
// entry's time.
func (c *Cache) OnReport(r node.Report, now int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := c.onReport(r, now)
	c.trace(names.LogCoordRecvReport, r.From, r.TraceMsg())
	return changed
}

func (c *Cache) onReport(r node.Report, now int64) bool {
	old, ok := c.entries[r.From]
	switch {
	case !ok || r.Epoch > old.report.Epoch:
		c.entries[r.From] = entry{report: r, receivedAt: now, seq: r.Seq}
		return true
	case r.Epoch < old.report.Epoch:
		return false
	}
	// The same epoch: the value stays monotone (L2: any report replaces
	// an open entry; a closed one only falls). The entry's age is that of
	// the newest sample: a report no newer than what the cache has had (an
	// earlier sample, or a copy of the newest one, delivered late: a Seq
	// not above the cached one; for unnumbered reports one the monotone
	// order puts before the cached value) does not make the entry look
	// fresh (TiCDC #6155, where an observation dated at receipt let a
	// stale zero look fresh).
	older := r.Seq != 0 && r.Seq <= old.seq ||
		r.Seq == 0 && old.report.AdmissionClosed && (!r.AdmissionClosed || r.Count > old.report.Count)
	changed := !old.report.AdmissionClosed ||
		(r.AdmissionClosed && r.Count < old.report.Count)
	if changed {
		old.report = r
	}
	if !older || bugs.RefreshOnOlderReportOn() {
		old.receivedAt = max(old.receivedAt, now)
	}
	old.seq = max(old.seq, r.Seq)
	c.entries[r.From] = old
	return changed
}

// Answer answers the coordinator's query about target at now (TLA+
// LogCoordAnswer, L3: it takes the query and replies): the cached report, or "unknown" when nothing fresh
// is cached (TLA+ LogCoordAnswerUnknown). An expired entry is deleted
// (TLA+ LogCoordExpire), the entry of a live process too: the TTL does not
// know whether the process lives, so a live node's service must report
// again and again, changed or not, to keep its entry.
func (c *Cache) Answer(target node.ID, now int64) Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[target]
	if ok && c.cfg.TTL > 0 && now-e.receivedAt > c.cfg.TTL {
		delete(c.entries, target)
		c.trace(names.LogCoordExpire, target, nil)
		ok = false
	}
	a := Unknown(target)
	if ok {
		a = Answer{Target: target, Known: true, Epoch: e.report.Epoch, Count: e.report.Count,
			AdmissionClosed: e.report.AdmissionClosed}
	}
	if ok {
		c.traceReply(names.LogCoordAnswer, target, QueryTraceMsg(), a.TraceMsg())
	} else {
		c.traceReply(names.LogCoordAnswerUnknown, target, QueryTraceMsg(), a.TraceMsg())
	}
	return a
}

// Expire deletes every entry older than the TTL at now and returns how
// many it deleted (TLA+ LogCoordExpire).
func (c *Cache) Expire(now int64) int {
	if c.cfg.TTL <= 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for id, e := range c.entries {
		if now-e.receivedAt > c.cfg.TTL {
			delete(c.entries, id)
			c.trace(names.LogCoordExpire, id, nil)
			n++
		}
	}
	return n
}

// RemoveNode drops n's entry: n left membership (L4).
func (c *Cache) RemoveNode(n node.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[n]; ok {
		delete(c.entries, n)
		c.trace(names.LogCoordExpire, n, nil)
	}
}

// Entry returns n's cached report and whether there is one (expired or
// not).
func (c *Cache) Entry(n node.ID) (node.Report, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[n]
	return e.report, ok
}
