package transport

import (
	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// LivenessToPB returns l on the wire.
func LivenessToPB(l node.Liveness) pb.Liveness {
	switch l {
	case node.Draining:
		return pb.Liveness_DRAINING
	case node.Stopping:
		return pb.Liveness_STOPPING
	}
	return pb.Liveness_ALIVE
}

// LivenessFromPB returns the wire's l, and false for a value no
// liveness has.
func LivenessFromPB(l pb.Liveness) (node.Liveness, bool) {
	switch l {
	case pb.Liveness_ALIVE:
		return node.Alive, true
	case pb.Liveness_DRAINING:
		return node.Draining, true
	case pb.Liveness_STOPPING:
		return node.Stopping, true
	}
	return node.NoLiveness, false
}

// ReportToPB returns the event service's count report r on the wire
// (LogCoordinator.Report), its sequence number included.
func ReportToPB(r node.Report) *pb.CountReport {
	return &pb.CountReport{Node: string(r.From), Epoch: r.Epoch, Count: r.Count, AdmissionClosed: r.AdmissionClosed, Seq: r.Seq}
}

// reportFromPB returns the wire's report m (its fields checked by the
// caller).
func reportFromPB(m *pb.CountReport) node.Report {
	return node.Report{From: node.ID(m.GetNode()), Epoch: m.GetEpoch(), Count: m.GetCount(),
		AdmissionClosed: m.GetAdmissionClosed(), Seq: m.GetSeq()}
}
