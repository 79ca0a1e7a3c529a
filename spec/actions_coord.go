package spec

// This file holds the actions of the coordinator, the maintainers, the
// LogCoordinator and the network (DrainRegistration.tla, in the module's
// order).

// --- The coordinator and the maintainers ---

// CoordLearnVersion is TLA+ CoordLearnVersion: the coordinator reads the
// version of the process it tracks from the membership.
func (m *Model) CoordLearnVersion(s *State) (State, bool) {
	var t State
	return value(m.coordLearnVersion(s, &t), &t)
}

// coordLearnVersion is CoordLearnVersion in place (see actions.go).
func (m *Model) coordLearnVersion(s, t *State) bool {
	if s.CoordVersion != VersionUnknown || s.CoordEpoch != s.Epoch {
		return false
	}
	*t = *s
	t.CoordVersion = s.Version
	return true
}

// CoordSendDraining is TLA+ CoordSendDraining: the coordinator asks a
// new-version T to go DRAINING at the epoch it tracks.
func (m *Model) CoordSendDraining(s *State) (State, bool) {
	var t State
	return value(m.coordSendDraining(s, &t), &t)
}

// coordSendDraining is CoordSendDraining in place (see actions.go).
func (m *Model) coordSendDraining(s, t *State) bool {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordVersion != VersionNew || s.CoordLiveness != Alive {
		return false
	}
	*t = *s
	return m.send(t, Cmd(s.CoordEpoch, Draining))
}

// CoordSendStopping is TLA+ CoordSendStopping: the coordinator asks T to
// go STOPPING once DRAINING is observed and no maintainer work is left
// (under SkipDraining, at any time before STOPPING is observed).
func (m *Model) CoordSendStopping(s *State) (State, bool) {
	var t State
	return value(m.coordSendStopping(s, &t), &t)
}

// coordSendStopping is CoordSendStopping in place (see actions.go).
func (m *Model) coordSendStopping(s, t *State) bool {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordVersion != VersionNew {
		return false
	}
	if m.has(SkipDraining) {
		if s.CoordLiveness == Stopping {
			return false
		}
	} else if s.CoordLiveness != Draining || s.Work != 0 {
		return false
	}
	*t = *s
	return m.send(t, Cmd(s.CoordEpoch, Stopping))
}

// CoordSendQuery is TLA+ CoordSendQuery: (logcoord transport) the
// coordinator's periodic task sends its query for T's count, after
// STOPPING is observed, until a zero is accepted or DrainNode answered.
func (m *Model) CoordSendQuery(s *State) (State, bool) {
	var t State
	return value(m.coordSendQuery(s, &t), &t)
}

// coordSendQuery is CoordSendQuery in place (see actions.go).
func (m *Model) coordSendQuery(s, t *State) bool {
	if m.heartbeat || s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordLiveness != Stopping || s.CoordCount == 0 {
		return false
	}
	*t = *s
	return m.send(t, Query)
}

// CoordLegacyRestart is TLA+ CoordLegacyRestart: the legacy hard-restart
// answer for a legacy process (under LegacyOnUnknown, also for one of
// unknown version).
func (m *Model) CoordLegacyRestart(s *State) (State, bool) {
	var t State
	return value(m.coordLegacyRestart(s, &t), &t)
}

// coordLegacyRestart is CoordLegacyRestart in place (see actions.go).
func (m *Model) coordLegacyRestart(s, t *State) bool {
	if s.DrainedEpoch != None || s.LegacyEpoch != None {
		return false
	}
	if s.CoordVersion != VersionLegacy && !(m.has(LegacyOnUnknown) && s.CoordVersion == VersionUnknown) {
		return false
	}
	*t = *s
	t.LegacyEpoch = s.CoordEpoch
	return true
}

// MaintainerReportProgress is TLA+ MaintainerReportProgress: the
// maintainers move their work off T.
func (m *Model) MaintainerReportProgress(s *State) (State, bool) {
	var t State
	return value(m.maintainerReportProgress(s, &t), &t)
}

// maintainerReportProgress is MaintainerReportProgress in place (see actions.go).
func (m *Model) maintainerReportProgress(s, t *State) bool {
	if s.Work <= 0 || s.CoordLiveness != Draining {
		return false
	}
	*t = *s
	t.Work--
	return true
}

// CoordRecvHeartbeat is TLA+ CoordRecvHeartbeat(m, keep): the coordinator
// observes T's heartbeat.
func (m *Model) CoordRecvHeartbeat(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.coordRecvHeartbeat(s, &t, id, keep), &t)
}

// coordRecvHeartbeat is CoordRecvHeartbeat in place (see actions.go).
func (m *Model) coordRecvHeartbeat(s, t *State, id msgID, keep bool) bool {
	msg := m.msgs[id]
	if msg.Kind != KindHb {
		return false
	}
	*t = *s
	consume(t, id, keep)
	m.observe(t, s, msg)
	return true
}

// CoordRecvResponse is TLA+ CoordRecvResponse(m, keep): the coordinator
// observes T's SetNodeLivenessResponse (liveness only).
func (m *Model) CoordRecvResponse(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.coordRecvResponse(s, &t, id, keep), &t)
}

// coordRecvResponse is CoordRecvResponse in place (see actions.go).
func (m *Model) coordRecvResponse(s, t *State, id msgID, keep bool) bool {
	msg := m.msgs[id]
	if msg.Kind != KindResp {
		return false
	}
	*t = *s
	consume(t, id, keep)
	m.observe(t, s, msg)
	return true
}

// CoordRecvAnswer is TLA+ CoordRecvAnswer(m, keep): the coordinator takes
// the LogCoordinator's answer; it accepts a known, closed report of the
// epoch it tracks, after STOPPING, if it lowers the accepted count.
func (m *Model) CoordRecvAnswer(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.coordRecvAnswer(s, &t, id, keep), &t)
}

// coordRecvAnswer is CoordRecvAnswer in place (see actions.go).
func (m *Model) coordRecvAnswer(s, t *State, id msgID, keep bool) bool {
	msg := m.msgs[id]
	if msg.Kind != KindAns {
		return false
	}
	*t = *s
	consume(t, id, keep)
	switch {
	case msg.Epoch != None && msg.Closed && s.CoordLiveness == Stopping &&
		(msg.Epoch == s.CoordEpoch || (m.has(AcceptStaleEpoch) && msg.Epoch < s.CoordEpoch)) &&
		(s.CoordCount == None || msg.Count < s.CoordCount):
		t.CoordCount = msg.Count
	case m.has(UnknownErasesCount) && msg.Epoch == None && s.CoordLiveness == Stopping:
		t.CoordCount = 0
	}
	return true
}

// CoordCompleteDrain is TLA+ CoordCompleteDrain: DrainNode returns 0.
func (m *Model) CoordCompleteDrain(s *State) (State, bool) {
	var t State
	return value(m.coordCompleteDrain(s, &t), &t)
}

// coordCompleteDrain is CoordCompleteDrain in place (see actions.go).
func (m *Model) coordCompleteDrain(s, t *State) bool {
	if s.DrainedEpoch != None || s.LegacyEpoch != None || s.CoordLiveness != Stopping || s.Work != 0 {
		return false
	}
	if !(s.CoordCount == 0 || m.has(IgnoreBrokerCount) || (m.has(TrustLivenessResponse) && s.CoordCount == None)) {
		return false
	}
	*t = *s
	t.DrainedEpoch = s.CoordEpoch
	return true
}

// --- The LogCoordinator ---

// LogCoordRecvReport is TLA+ LogCoordRecvReport(m, keep): the
// LogCoordinator caches T's report, monotonically within an epoch.
func (m *Model) LogCoordRecvReport(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.logCoordRecvReport(s, &t, id, keep), &t)
}

// logCoordRecvReport is LogCoordRecvReport in place (see actions.go).
func (m *Model) logCoordRecvReport(s, t *State, id msgID, keep bool) bool {
	msg := m.msgs[id]
	if msg.Kind != KindReport {
		return false
	}
	*t = *s
	consume(t, id, keep)
	c := s.Cache
	if c.Epoch == None || msg.Epoch > c.Epoch ||
		(msg.Epoch == c.Epoch && (!c.Closed || (msg.Closed && msg.Count < c.Count))) {
		t.Cache = CacheEntry{Epoch: msg.Epoch, Count: msg.Count, Closed: msg.Closed}
	}
	return true
}

// LogCoordAnswer is TLA+ LogCoordAnswer(m, keep): the LogCoordinator
// takes the coordinator's query while it has an entry for T and replies
// with it. It reads only its cache.
func (m *Model) LogCoordAnswer(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.logCoordAnswer(s, &t, id, keep), &t)
}

// logCoordAnswer is LogCoordAnswer in place (see actions.go).
func (m *Model) logCoordAnswer(s, t *State, id msgID, keep bool) bool {
	if m.msgs[id].Kind != KindQuery || s.Cache.Epoch == None {
		return false
	}
	*t = *s
	return m.reply(t, id, keep, Ans(s.Cache.Epoch, s.Cache.Count, s.Cache.Closed))
}

// LogCoordAnswerUnknown is TLA+ LogCoordAnswerUnknown(m, keep): the same
// query while nothing is cached: the answer is unknown.
func (m *Model) LogCoordAnswerUnknown(s *State, id msgID, keep bool) (State, bool) {
	var t State
	return value(m.logCoordAnswerUnknown(s, &t, id, keep), &t)
}

// logCoordAnswerUnknown is LogCoordAnswerUnknown in place (see actions.go).
func (m *Model) logCoordAnswerUnknown(s, t *State, id msgID, keep bool) bool {
	if m.msgs[id].Kind != KindQuery || s.Cache.Epoch != None {
		return false
	}
	*t = *s
	return m.reply(t, id, keep, Ans(None, None, false))
}

// LogCoordExpire is TLA+ LogCoordExpire: the cached entry's TTL runs out
// (a restarted process's, or a live one's whose refresh is late).
func (m *Model) LogCoordExpire(s *State) (State, bool) {
	var t State
	return value(m.logCoordExpire(s, &t), &t)
}

// logCoordExpire is LogCoordExpire in place (see actions.go).
func (m *Model) logCoordExpire(s, t *State) bool {
	if s.Cache.Epoch == None {
		return false
	}
	*t = *s
	t.Cache = noReport
	return true
}

// --- The network ---

// NetLose is TLA+ NetLose(m): a message in flight is lost.
func (m *Model) NetLose(s *State, id msgID) (State, bool) {
	var t State
	return value(m.netLose(s, &t, id), &t)
}

// netLose is NetLose in place (see actions.go).
func (m *Model) netLose(s, t *State, id msgID) bool {
	*t = *s
	t.netDel(id)
	return true
}
