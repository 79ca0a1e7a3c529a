package eventservice

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// This file is the request loop (R7): the baton that lets one holder at a
// time run requests, the Run goroutine, and the hand-off of a request from
// Do or Submit through the queue (queue.go).

// Start runs the request loop ([Service.Run]) on a new goroutine and
// returns at once: from then on Do, Heartbeat, Cleanup and Snapshot reach
// the loop, without the race of a `go svc.Run(ctx)` followed by a Do,
// which may find the loop not yet started (ErrNotRunning). wait waits for
// the loop to end (ctx done) and returns Run's error. Start, like Run,
// may be called once.
func (s *Service) Start(ctx context.Context) (wait func() error) {
	s.begin()
	done := make(chan error, 1)
	go func() { done <- s.loop(ctx) }()
	return func() error {
		err := <-done
		done <- err // wait may be called again
		return err
	}
}

// Run is the serial request loop. It runs queued requests one at a time
// until ctx is done, then returns ctx's error; requests still queued are
// dropped and their waiters get ErrStopped. Store calls made by the loop
// (by Run's goroutine or a Do caller's) get ctx, so a store blocked at
// shutdown is released; Run returns only once no request is running.
// Run (or Start) must be called at most once. Calls that wait for the
// loop return ErrNotRunning before Run is called; to call them right
// after starting the loop on another goroutine, use Start.
func (s *Service) Run(ctx context.Context) error {
	s.begin()
	return s.loop(ctx)
}

// begin marks the loop started, once.
func (s *Service) begin() {
	if !s.running.CompareAndSwap(false, true) {
		panic("eventservice: Run called twice")
	}
}

// loop is Run after begin.
func (s *Service) loop(ctx context.Context) error {
	defer close(s.stopped)
	defer func() {
		// Wait for a caller running requests, then refuse every later
		// push (ErrStopped) before stopped is closed.
		s.exec.Lock()
		s.live.Store(false)
		s.q.stop()
		s.exec.Unlock()
	}()
	s.exec.Lock()
	s.loopCtx = ctx
	s.live.Store(ctx.Err() == nil)
	s.exec.Unlock()
	defer context.AfterFunc(ctx, func() { s.live.Store(false) })()
	var tick <-chan time.Time
	if s.cfg.CleanupInterval > 0 {
		t := time.NewTicker(s.cfg.CleanupInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.q.bell:
			if err := s.drainHeld(ctx, tick); err != nil {
				return err
			}
		case <-tick:
			s.cleanupHeld()
		}
	}
}

// drainHeld runs drain holding exec.
func (s *Service) drainHeld(ctx context.Context, tick <-chan time.Time) error {
	s.exec.Lock()
	finished := false
	defer s.release(&finished)
	err := s.drain(ctx, tick)
	finished = true
	return err
}

// cleanupHeld runs the inactivity cleanup holding exec.
func (s *Service) cleanupHeld() {
	s.exec.Lock()
	finished := false
	defer s.release(&finished)
	s.cleanupInactive()
	finished = true
}

// release gives exec back; it is deferred by every holder of exec that
// runs requests, finished being set once they ran. If they did not, a
// store call, Emit or OnError panicked: the registry may be half-way
// through a request, and callers may be waiting for requests that will
// not run, so, as in the Run goroutine, the panic must end the process
// rather than be recovered by whoever called Do (singleflight does the
// same). release re-raises it on a new goroutine, which nobody can
// recover. A runtime.Goexit (a test's FailNow in a store) is let through.
func (s *Service) release(finished *bool) {
	if !*finished {
		if p := recover(); p != nil {
			crash(p)
		}
	}
	s.exec.Unlock()
}

// crash re-raises p, recovered from a request, on a new goroutine, with
// the stack where it was recovered, and never returns.
func crash(p any) {
	stack := debug.Stack()
	go panic(fmt.Sprintf("eventservice: panic while running a request: %v\n\n%s", p, stack))
	select {} // the process is going down
}

// runBatch runs the queued requests, oldest first, under exec; it
// reports false if Run's context ctx ended first (the rest of the batch
// is dropped, as Run drops the queue when it returns).
func (s *Service) runBatch(ctx context.Context) bool {
	if !s.q.waiting() {
		return true
	}
	batch := s.q.take()
	defer s.q.done(batch)
	for i := range batch {
		if !s.live.Load() { // ctx is done (cheaper to read than ctx.Err)
			return false
		}
		s.run(ctx, &batch[i])
	}
	return true
}

// drain runs the queued requests a batch at a time, oldest first, until
// the queue is empty; between batches it runs a due inactivity cleanup,
// so that a busy queue does not starve it. One wake-up of the loop thus
// serves every request that arrived while it was busy. The caller holds
// exec.
func (s *Service) drain(ctx context.Context, tick <-chan time.Time) error {
	for s.q.waiting() {
		if !s.runBatch(ctx) {
			return ctx.Err()
		}
		select {
		case <-tick:
			s.cleanupInactive()
		default:
		}
	}
	return ctx.Err()
}

// run runs j in the request loop.
func (s *Service) run(ctx context.Context, j *job) {
	if j.fn != nil {
		j.fn(ctx)
		return
	}
	var err error
	if j.ctx != nil && j.ctx.Err() != nil {
		// The caller gave up while req waited (Do returned its ctx's
		// error): running req now would register a dispatcher nobody
		// waits for.
		err = j.ctx.Err()
	} else {
		err = s.handle(ctx, j.ctx, &j.req)
	}
	switch {
	case j.w != nil:
		j.w.done <- err // capacity 1, and only this send
	case err != nil && s.cfg.OnError != nil:
		s.cfg.OnError(j.req, err)
	}
}

// call runs fn in the request loop and waits for its result.
func call[T any](ctx context.Context, s *Service, fn func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	var zero T
	if !s.running.Load() {
		return zero, ErrNotRunning
	}
	j := job{fn: func(loopCtx context.Context) {
		v, err := fn(loopCtx)
		done <- result{v, err}
	}}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if err := s.q.push(ctx, j); err != nil {
		return zero, err
	}
	select {
	case r := <-done:
		return r.v, r.err
	case <-s.stopped:
		// The job may have finished just before the loop stopped.
		select {
		case r := <-done:
			return r.v, r.err
		default:
			return zero, ErrStopped
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// doHeld runs the queued requests (at most one batch, which is all of
// them, since nobody else takes batches while exec is held), then req,
// then at most one batch queued meanwhile, so that callers who queued
// behind it need not wait for the Run goroutine to wake (requests left
// queued rang the bell when the queue became non-empty, so Run runs
// them). The caller holds exec; doHeld gives it back.
func (s *Service) doHeld(loopCtx, reqCtx context.Context, req *Request) error {
	finished := false
	defer s.release(&finished)
	if s.q.waiting() && !s.runBatch(loopCtx) {
		finished = true
		return ErrStopped // Run's context ended: the queue is being dropped
	}
	err := s.handle(loopCtx, reqCtx, req)
	if s.q.waiting() {
		s.runBatch(loopCtx)
	}
	finished = true
	return err
}

// doQueued is Do for a request that waits in the queue for the loop.
func (s *Service) doQueued(ctx context.Context, req *Request) error {
	if !s.running.Load() {
		return ErrNotRunning
	}
	w := waiters.Get().(*waiter)
	if err := s.q.push(ctx, job{req: *req, w: w, ctx: ctx}); err != nil {
		waiters.Put(w)
		return err
	}
	select {
	case err := <-w.done:
		waiters.Put(w)
		return err
	case <-s.stopped:
		// The request may have finished just before the loop stopped.
		select {
		case err := <-w.done:
			return err
		default:
			return ErrStopped
		}
	case <-ctx.Done():
		return ctx.Err() // w may still get the outcome: not reused
	}
}
