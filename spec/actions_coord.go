package spec

// This file holds the actions of the coordinator, the maintainers, the
// LogCoordinator and the network (DrainRegistration.tla, in the module's
// order).

// --- The coordinator and the maintainers ---

// CoordLearnVersion is TLA+ CoordLearnVersion: the coordinator reads the
// version of the process it tracks from the membership.
func (m *Model) CoordLearnVersion(s *State) (State, bool) {
	if s.CoordVersion != VersionUnknown || s.CoordEpoch != s.Epoch {
		return State{}, false
	}
	t := *s
	t.CoordVersion = s.Version
	return t, true
}

// CoordSendDraining is TLA+ CoordSendDraining: the coordinator asks a
// new-version T to go DRAINING at the epoch it tracks.
func (m *Model) CoordSendDraining(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordVersion != VersionNew || s.CoordLiveness != Alive {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Cmd(s.CoordEpoch, Draining)) {
		return State{}, false
	}
	return t, true
}

// CoordSendStopping is TLA+ CoordSendStopping: the coordinator asks T to
// go STOPPING once DRAINING is observed and no maintainer work is left
// (under SkipDraining, at any time before STOPPING is observed).
func (m *Model) CoordSendStopping(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordVersion != VersionNew {
		return State{}, false
	}
	if m.has(SkipDraining) {
		if s.CoordLiveness == Stopping {
			return State{}, false
		}
	} else if s.CoordLiveness != Draining || s.Work != 0 {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Cmd(s.CoordEpoch, Stopping)) {
		return State{}, false
	}
	return t, true
}

// CoordLegacyRestart is TLA+ CoordLegacyRestart: the legacy hard-restart
// answer for a legacy process (under LegacyOnUnknown, also for one of
// unknown version).
func (m *Model) CoordLegacyRestart(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None {
		return State{}, false
	}
	if s.CoordVersion != VersionLegacy && !(m.has(LegacyOnUnknown) && s.CoordVersion == VersionUnknown) {
		return State{}, false
	}
	t := *s
	t.LegacyEpoch = s.CoordEpoch
	return t, true
}

// MaintainerReportProgress is TLA+ MaintainerReportProgress: the
// maintainers move their work off T.
func (m *Model) MaintainerReportProgress(s *State) (State, bool) {
	if s.Work <= 0 || s.CoordLiveness != Draining {
		return State{}, false
	}
	t := *s
	t.Work--
	return t, true
}

// CoordRecvHeartbeat is TLA+ CoordRecvHeartbeat(m, keep): the coordinator
// observes T's heartbeat.
func (m *Model) CoordRecvHeartbeat(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindHb {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	m.observe(&t, s, msg)
	return t, true
}

// CoordRecvResponse is TLA+ CoordRecvResponse(m, keep): the coordinator
// observes T's SetNodeLivenessResponse (liveness only).
func (m *Model) CoordRecvResponse(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindResp {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	m.observe(&t, s, msg)
	return t, true
}

// CoordRecvAnswer is TLA+ CoordRecvAnswer(m, keep): the coordinator takes
// the LogCoordinator's answer; it accepts a known, closed report of the
// epoch it tracks, after STOPPING, if it lowers the accepted count.
func (m *Model) CoordRecvAnswer(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindAns {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	switch {
	case msg.Epoch != None && msg.Closed && s.CoordLiveness == Stopping &&
		(msg.Epoch == s.CoordEpoch || (m.has(AcceptStaleEpoch) && msg.Epoch < s.CoordEpoch)) &&
		(s.CoordCount == None || msg.Count < s.CoordCount):
		t.CoordCount = msg.Count
	case m.has(UnknownErasesCount) && msg.Epoch == None && s.CoordLiveness == Stopping:
		t.CoordCount = 0
	}
	return t, true
}

// CoordCompleteDrain is TLA+ CoordCompleteDrain: DrainNode returns 0.
func (m *Model) CoordCompleteDrain(s *State) (State, bool) {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordLiveness != Stopping || s.Work != 0 {
		return State{}, false
	}
	if !(s.CoordCount == 0 || m.has(IgnoreBrokerCount) || (m.has(TrustLivenessResponse) && s.CoordCount == None)) {
		return State{}, false
	}
	t := *s
	t.DrainedEpoch = s.CoordEpoch
	return t, true
}

// --- The LogCoordinator ---

// LogCoordRecvReport is TLA+ LogCoordRecvReport(m, keep): the
// LogCoordinator caches T's report, monotonically within an epoch.
func (m *Model) LogCoordRecvReport(s *State, id msgID, keep bool) (State, bool) {
	msg := m.msgs[id]
	if msg.Kind != KindReport {
		return State{}, false
	}
	t := *s
	consume(&t, id, keep)
	c := s.Cache
	if c.Epoch == None || msg.Epoch > c.Epoch ||
		(msg.Epoch == c.Epoch && (!c.Closed || (msg.Closed && msg.Count < c.Count))) {
		t.Cache = CacheEntry{Epoch: msg.Epoch, Count: msg.Count, Closed: msg.Closed}
	}
	return t, true
}

// logCoordQueries is the common guard of the two answers: the coordinator
// queries after STOPPING is observed, until a zero is accepted.
func (m *Model) logCoordQueries(s *State) bool {
	return !m.heartbeat && s.DrainedEpoch == None && s.CoordLiveness == Stopping && s.CoordCount != 0
}

// LogCoordAnswer is TLA+ LogCoordAnswer: the query reaches the
// LogCoordinator while it has an entry for T: it answers with it.
func (m *Model) LogCoordAnswer(s *State) (State, bool) {
	if !m.logCoordQueries(s) || s.Cache.Epoch == None {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Ans(s.Cache.Epoch, s.Cache.Count, s.Cache.Closed)) {
		return State{}, false
	}
	return t, true
}

// LogCoordAnswerUnknown is TLA+ LogCoordAnswerUnknown: the same query
// while nothing is cached: the answer is unknown.
func (m *Model) LogCoordAnswerUnknown(s *State) (State, bool) {
	if !m.logCoordQueries(s) || s.Cache.Epoch != None {
		return State{}, false
	}
	t := *s
	if !m.send(&t, Ans(None, None, false)) {
		return State{}, false
	}
	return t, true
}

// LogCoordExpire is TLA+ LogCoordExpire: the cached entry's TTL runs out
// (a restarted process's, or a live one's whose refresh is late).
func (m *Model) LogCoordExpire(s *State) (State, bool) {
	if s.Cache.Epoch == None {
		return State{}, false
	}
	t := *s
	t.Cache = noReport
	return t, true
}

// --- The network ---

// NetLose is TLA+ NetLose(m): a message in flight is lost.
func (m *Model) NetLose(s *State, id msgID) (State, bool) {
	t := *s
	t.netDel(id)
	return t, true
}
