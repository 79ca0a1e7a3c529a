package cluster

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// proxy is a TCP fault proxy in front of one gRPC endpoint: it forwards
// connections to target, and can delay every chunk it forwards, cut every
// open connection (loss), and refuse new ones while partitioned. It is
// home-made (some 100 lines) rather than Toxiproxy: its Go server would
// bring an HTTP API, a second process model and a dozen dependencies for
// the three toxics used here.
type proxy struct {
	l      net.Listener
	target string

	mu          sync.Mutex
	delay       time.Duration
	partitioned bool
	conns       map[net.Conn]struct{}
	// late holds, per client connection, when the bytes it sends are
	// released (hold): they reach the target then, even after the
	// client died.
	late map[net.Conn]time.Time
	wg   sync.WaitGroup
}

func newProxy(target string) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{l: l, target: target, conns: make(map[net.Conn]struct{}), late: make(map[net.Conn]time.Time)}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.partitioned {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *proxy) serve(c net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	if p.conns == nil || p.partitioned {
		p.mu.Unlock()
		_ = up.Close()
		p.drop(c)
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(up, c) }()
	go func() { defer wg.Done(); p.pipe(c, up) }()
	wg.Wait()
	p.drop(c)
	p.drop(up)
	p.mu.Lock()
	delete(p.late, c)
	p.mu.Unlock()
}

// lateUntil returns when the bytes client connection c sends are
// released (zero: not held).
func (p *proxy) lateUntil(c net.Conn) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.late[c]
}

// hold delays every byte the connections open now send towards the
// target until release (or d from now at the latest), and delivers them
// then even if their client has died meanwhile (its connection closed):
// the old process's last messages arrive after its successor's first
// ones. Connections opened later are not held.
func (p *proxy) hold(d time.Duration) {
	at := time.Now().Add(d)
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		p.late[c] = at
	}
}

// release delivers the held bytes now.
func (p *proxy) release() {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.late {
		p.late[c] = now
	}
}

// pipeLate reads src (a held client connection) into memory until its
// client closes it or it is released, then writes it all to dst and
// closes both.
func (p *proxy) pipeLate(dst, src net.Conn, first []byte) {
	held := append([]byte(nil), first...)
	buf := make([]byte, 32<<10)
	for time.Now().Before(p.lateUntil(src)) {
		_ = src.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
		n, err := src.Read(buf)
		held = append(held, buf[:n]...)
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			for time.Now().Before(p.lateUntil(src)) {
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
	_, _ = dst.Write(held)
	time.Sleep(200 * time.Millisecond) // the target reads it before the close
	_ = dst.Close()
	_ = src.Close()
}

// pipe copies src to dst, delaying each chunk by the current delay; a
// held client connection's bytes go to pipeLate, and the other
// direction of a held connection leaves the target's side open for it.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if !p.lateUntil(src).IsZero() {
			p.pipeLate(dst, src, buf[:n])
			return
		}
		if !p.lateUntil(dst).IsZero() {
			_ = dst.Close()
			return // the target's side stays open: pipeLate closes it
		}
		if n > 0 {
			p.mu.Lock()
			d := p.delay
			p.mu.Unlock()
			if d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	// Half-close is not worth it here: end both directions.
	_ = dst.Close()
	_ = src.Close()
	_, _ = io.Copy(io.Discard, src)
}

func (p *proxy) drop(c net.Conn) {
	_ = c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// setDelay delays every forwarded chunk by d (0: none).
func (p *proxy) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// cut closes every open connection: the messages in flight are lost.
func (p *proxy) cut() {
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
}

// partition cuts every connection and refuses new ones until heal.
func (p *proxy) partition() {
	p.mu.Lock()
	p.partitioned = true
	p.mu.Unlock()
	p.cut()
}

func (p *proxy) heal() {
	p.mu.Lock()
	p.partitioned = false
	p.delay = 0
	p.mu.Unlock()
}

// close stops the proxy and every connection, and waits for them.
func (p *proxy) close() {
	_ = p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
