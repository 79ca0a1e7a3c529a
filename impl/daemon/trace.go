package daemon

import (
	"google.golang.org/grpc"

	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/impl/transport"
)

// tracerOf returns w as a trace.Tracer: nil (no tracing) when w is nil,
// not a typed nil the components would take for a tracer.
func tracerOf(w *trace.Writer) trace.Tracer {
	if w == nil {
		return nil
	}
	return w
}

// stampOptions adds the trace-stamp interceptors of w (a process
// trace.Writer) to a process's server and dial options: every message
// it sends carries the stamp of its last line, every message it
// receives hands the sender's stamp to w (docs/trace.md, "The stamps").
// Untraced (w nil), the options are returned unchanged.
func stampOptions(w *trace.Writer, srv []grpc.ServerOption, dial []grpc.DialOption) ([]grpc.ServerOption, []grpc.DialOption) {
	if w == nil {
		return srv, dial
	}
	srv = append(append([]grpc.ServerOption(nil), srv...), grpc.ChainUnaryInterceptor(transport.StampServerInterceptor(w)))
	dial = append(append([]grpc.DialOption(nil), dial...), grpc.WithChainUnaryInterceptor(transport.StampClientInterceptor(w)))
	return srv, dial
}
