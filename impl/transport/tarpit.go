package transport

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Tarpit slows down a peer that keeps sending malformed messages: each
// call a handler answers InvalidArgument takes a token from the peer's
// bucket (Rate per second, Burst at once; package golang.org/x/time/rate),
// and when the bucket is empty the answer waits for the next token. A
// peer whose messages are good never waits, and the waiting costs no
// CPU, so a synchronous flood is held to Rate bad messages a second per
// peer while the node's registrations go on. A peer is its TLS identity
// when the connection has one (mutual TLS: [PeerIdentity]), else its
// remote IP address without the port: a flooder that opens a new
// connection for each message still draws on one bucket. The zero value
// is not usable: use [NewTarpit].
type Tarpit struct {
	limit rate.Limit
	burst int

	// keyOf is the peer of a call: peerKey (a benchmark sets the
	// connection's address, the key of old, to compare).
	keyOf func(context.Context) string
	// now is the clock of the peers' idle time: time.Now (a test sets
	// its own to pin the minute down).
	now func() time.Time

	mu    sync.Mutex
	peers map[string]*tarpitPeer
}

type tarpitPeer struct {
	lim  *rate.Limiter
	last time.Time
}

// maxTarpitPeers bounds the peers a Tarpit remembers; past it, peers idle
// for a minute are forgotten.
const maxTarpitPeers = 4096

// NewTarpit returns a Tarpit allowing each peer perSecond malformed
// messages a second, burst (at least 1) at once.
func NewTarpit(perSecond float64, burst int) *Tarpit {
	burst = max(burst, 1)
	return &Tarpit{limit: rate.Limit(perSecond), burst: burst, keyOf: peerKey, now: time.Now, peers: make(map[string]*tarpitPeer)}
}

func (t *Tarpit) limiter(key string) *rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	p := t.peers[key]
	if p == nil {
		if len(t.peers) >= maxTarpitPeers {
			for k, q := range t.peers {
				if now.Sub(q.last) > time.Minute {
					delete(t.peers, k)
				}
			}
		}
		p = &tarpitPeer{lim: rate.NewLimiter(t.limit, t.burst)}
		t.peers[key] = p
	}
	p.last = now
	return p.lim
}

// Interceptor returns the unary server interceptor that applies t.
func (t *Tarpit) Interceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if status.Code(err) != codes.InvalidArgument {
			return resp, err
		}
		if werr := t.limiter(t.keyOf(ctx)).Wait(ctx); werr != nil {
			// The next token comes after the caller's deadline (Wait
			// does not wait then): hold the answer until the deadline.
			<-ctx.Done()
			return nil, ctxStatus(ctx.Err())
		}
		return resp, err
	}
}

// peerKey is the tarpit's key of the caller: "id:" and its TLS identity,
// else "ip:" and its remote IP, else "addr:" and its remote address
// (a Unix socket's, say).
func peerKey(ctx context.Context) string {
	if id, ok := PeerIdentity(ctx); ok && id.String() != "" {
		return "id:" + id.String()
	}
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	if ap, err := netip.ParseAddrPort(p.Addr.String()); err == nil {
		return "ip:" + ap.Addr().Unmap().String()
	}
	return "addr:" + p.Addr.String()
}

// The tarpit drainproofd's servers use: 50 malformed messages a second
// per peer, 20 at once.
const (
	TarpitRate  = 50
	TarpitBurst = 20
)
