package sim

import "github.com/drainproof/drainproof/impl/node"

// Observation is T's state as the model sees it, read without side
// effects: the event service's count and admission gate, and the stores.
type Observation struct {
	Epoch           uint64
	Liveness        node.Liveness
	AdmissionClosed bool
	Count           int64
	// Counts and GateClosed are each broker's count and gate bit (TLA+
	// count[b], gateClosed[b]), by cluster index; a broker not created
	// yet counts 0, and its bit is the service's flag (it is closed when
	// the broker is created after the close).
	Counts     []int64
	GateClosed []bool
	Subscribed []bool
	SchemaRef  []bool
}

// Observe reads T's observable state.
func (c *Cluster) Observe() Observation {
	p := c.proc
	p.observer.Store(true)
	count, closed := p.svc.Sample()
	p.observer.Store(false)
	o := Observation{Epoch: c.epoch, Liveness: p.live.Load(), AdmissionClosed: closed, Count: count,
		Counts: make([]int64, c.cfg.Clusters), GateClosed: make([]bool, c.cfg.Clusters),
		Subscribed: make([]bool, c.cfg.Dispatchers), SchemaRef: make([]bool, c.cfg.Dispatchers)}
	for k := range o.GateClosed {
		o.GateClosed[k] = closed
	}
	for _, g := range p.svc.BrokerCounts() {
		for k := range o.Counts {
			if ClusterID(k) == g.Cluster {
				o.Counts[k], o.GateClosed[k] = g.Count, g.GateClosed
			}
		}
	}
	for d := range o.Subscribed {
		es, ss := c.stores(d)
		o.Subscribed[d] = es.Subscribed(Dispatcher(d))
		o.SchemaRef[d] = ss.Refs(table(d)) > 0
	}
	return o
}
