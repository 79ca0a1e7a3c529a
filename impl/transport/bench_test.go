package transport

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drainproof/drainproof/impl/eventservice"
	"github.com/drainproof/drainproof/impl/transport/pb"
)

// BenchmarkRegisterRemove measures REGISTER+REMOVE pairs of ordinary
// dispatchers with 1 and 8 clients, through gRPC on loopback and through
// the in-process API (eventservice.Service.Do) of the same kind of
// service, in the same run. One op is one pair; pairs/s is reported.
//
//	go test -run '^$' -bench RegisterRemove -benchtime 2s ./impl/transport
func BenchmarkRegisterRemove(b *testing.B) {
	for _, clients := range []int{1, 8} {
		for _, via := range []string{"inproc", "grpc"} {
			b.Run(fmt.Sprintf("%s/clients=%d", via, clients), func(b *testing.B) {
				r := newRig(b)
				pair := func(ctx context.Context, c, i int) error {
					id := fmt.Sprintf("c%d-d%d", c, i%64)
					if via == "inproc" {
						if err := r.svc.Do(ctx, eventservice.Request{Action: eventservice.Register, Cluster: "c1", Changefeed: "cf",
							Dispatcher: eventservice.DispatcherID(id), Table: eventservice.TableID(1 + c), StartTs: 1}); err != nil {
							return err
						}
						return r.svc.Do(ctx, eventservice.Request{Action: eventservice.Remove, Cluster: "c1", Dispatcher: eventservice.DispatcherID(id)})
					}
					if _, err := r.es.Dispatch(ctx, regPB(id, int64(1+c))); err != nil {
						return err
					}
					_, err := r.es.Dispatch(ctx, &pb.DispatcherRequest{Action: pb.Action_REMOVE, Cluster: "c1", Dispatcher: id})
					return err
				}
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, clients)
				for c := range clients {
					n := b.N / clients
					if c < b.N%clients {
						n++
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						for i := range n {
							if err := pair(ctx, c, i); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pairs/s")
				if n, _ := r.svc.Sample(); n != 0 {
					b.Fatalf("count %d after the pairs, want 0", n)
				}
			})
		}
	}
}
