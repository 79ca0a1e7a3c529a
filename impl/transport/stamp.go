package transport

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/drainproof/drainproof/impl/trace"
)

// StampKey is the gRPC metadata key that carries a trace stamp
// (docs/trace.md, "The stamps"): on a request, the stamp of the sender's
// last trace line before the call (its send line, or a later line of the
// same process); on a response, in the header, the stamp of the
// server's last line once the handler returned (its reply line, or a
// later one). Either is a true happens-before edge: the line was
// written before the message left.
const StampKey = "drainproof-stamp"

// MaxStampLen bounds a stamp's text on the wire.
const MaxStampLen = 300

// FormatStamp returns s as the wire carries it: "CLOCK PROCESS".
func FormatStamp(s trace.Stamp) string {
	return strconv.FormatUint(s.Clock, 10) + " " + s.Proc
}

// ParseStamp returns the stamp of a wire value written by FormatStamp,
// or an error saying what is wrong with it.
func ParseStamp(v string) (trace.Stamp, error) {
	if len(v) > MaxStampLen {
		return trace.Stamp{}, fmt.Errorf("trace stamp of %d bytes (at most %d)", len(v), MaxStampLen)
	}
	c, p, ok := strings.Cut(v, " ")
	if !ok || p == "" || strings.ContainsAny(p, " \n\"\\") {
		return trace.Stamp{}, fmt.Errorf("trace stamp %q: want \"CLOCK PROCESS\"", v)
	}
	n, err := strconv.ParseUint(c, 10, 64)
	if err != nil || n == 0 {
		return trace.Stamp{}, fmt.Errorf("trace stamp %q: clock %q is not a positive integer", v, c)
	}
	return trace.Stamp{Proc: p, Clock: n}, nil
}

// stampOf returns the single stamp of md, if any.
func stampOf(md metadata.MD) (trace.Stamp, bool, error) {
	vs := md.Get(StampKey)
	switch len(vs) {
	case 0:
		return trace.Stamp{}, false, nil
	case 1:
		s, err := ParseStamp(vs[0])
		return s, err == nil, err
	}
	return trace.Stamp{}, false, fmt.Errorf("%d trace stamps on one message (want at most 1)", len(vs))
}

// StampClientInterceptor returns a unary client interceptor for a
// traced process (w a process trace.Writer): each call carries the
// stamp of w's last line (none before the first), written through first
// (trace.Writer.Stamp: a kill cannot lose a line another process saw), and the stamp of the
// response's header, if any, is handed to w.Receive before the call
// returns, so the line that takes the response depends on the server's
// reply line. A malformed stamp in a response fails the call
// (InvalidArgument): a trace that silently lost an edge would be
// validated in a wrong order.
func StampClientInterceptor(w *trace.Writer) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if s := w.Stamp(); s.Proc != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, StampKey, FormatStamp(s))
		}
		var hdr metadata.MD
		err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&hdr))...)
		s, ok, serr := stampOf(hdr)
		if serr != nil {
			return status.Errorf(codes.InvalidArgument, "%s: response: %v", method, serr)
		}
		if ok {
			w.Receive(s)
		}
		return err
	}
}

// StampServerInterceptor returns a unary server interceptor for a traced
// process (w a process trace.Writer): a request's stamp is handed to
// w.Receive before the handler runs (the handler's receive line depends
// on the sender's line), and the response's header carries the stamp of
// w's last line after the handler, written through first. A malformed stamp is refused with
// InvalidArgument before the handler runs.
func StampServerInterceptor(w *trace.Writer) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		s, ok, err := stampOf(md)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "%s: %v", info.FullMethod, err)
		}
		if ok {
			w.Receive(s)
		}
		resp, herr := handler(ctx, req)
		if l := w.Stamp(); l.Proc != "" {
			_ = grpc.SetHeader(ctx, metadata.Pairs(StampKey, FormatStamp(l))) // fails only once the header is sent
		}
		return resp, herr
	}
}
