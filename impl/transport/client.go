package transport

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// DefaultCallTimeout is the deadline [Dial]'s interceptor gives a call
// whose context has none.
const DefaultCallTimeout = 2 * time.Second

// Dial returns a client connection to addr (host:port; the connection is
// made lazily, at the first call). Every unary call made on it gets a
// deadline: its context's, or DefaultCallTimeout if it has none. opts
// come after the defaults (transport credentials, more interceptors).
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(DeadlineInterceptor(DefaultCallTimeout)),
	}
	return grpc.NewClient(addr, append(base, opts...)...)
}

// DeadlineInterceptor returns a unary client interceptor that gives a
// call whose context has no deadline the deadline d from now.
func DeadlineInterceptor(d time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
