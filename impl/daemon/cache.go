package daemon

import (
	"time"

	"github.com/drainproof/drainproof/impl/logcoord"
)

func newCache(ttl time.Duration) *logcoord.Cache {
	return logcoord.New(logcoord.Config{TTL: ttl.Milliseconds()})
}
