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
