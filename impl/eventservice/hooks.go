package eventservice

import "github.com/drainproof/drainproof/impl/bugs"

// hooks tells whether the step hooks are compiled in: only under the tag
// bugs, where the bug zoo's tests stop a goroutine between two steps of a
// registration, a close of admission or a report, to run another step in
// between. In the normal build [Service.at] is empty and inlined away.
const hooks = bugs.Built

// step names a point between two steps of the code that a hook may stop
// at. Each is a state of tla/DrainRegistration.tla's model at the
// implementation's granularity.
type step int8

const (
	// stepGated: a registration passed the service-level gate check and
	// knows its broker, before the compare-and-swap of the broker's gate
	// word (TLA+ pc "gated", before BrokerAdmit).
	stepGated step = iota
	// stepCloseBroker: CloseAdmission is about to close broker b's gate
	// bit (TLA+ ServiceCloseBroker(b)).
	stepCloseBroker
	// stepReadBroker: a report is about to read broker b's count (TLA+
	// ServiceReadBroker(b)).
	stepReadBroker
)

// hookFunc is called at each step with the broker concerned.
type hookFunc func(step, *broker)

// at calls s's hook, if any, at p (tag bugs only).
func (s *Service) at(p step, b *broker) {
	if !hooks {
		return
	}
	if f := s.hook.Load(); f != nil {
		(*f)(p, b)
	}
}
