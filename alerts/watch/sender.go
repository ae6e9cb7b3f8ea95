package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/notify"
)

// senderQueue bounds the digests waiting for one channel. A channel that is
// this far behind has been failing for many ticks; newer digests are then
// dropped (and said so) rather than growing memory.
const senderQueue = 64

// DefaultFlushTimeout is how long a stopping watcher waits for the digests
// still queued to go out.
const DefaultFlushTimeout = 5 * time.Second

// senders deliver digests to each notifier on its own goroutine, in order,
// through the Dispatcher: a channel that hangs or fails delays nothing but
// itself.
type senders struct {
	queues []chan alerts.Digest
	names  []string
	wg     sync.WaitGroup
	cancel context.CancelFunc
	warn   func(string)
}

func startSenders(nts []notify.Notifier, d notify.Dispatcher, warn func(string)) *senders {
	ctx, cancel := context.WithCancel(context.Background())
	s := &senders{cancel: cancel, warn: warn}
	for _, n := range nts {
		q := make(chan alerts.Digest, senderQueue)
		s.queues = append(s.queues, q)
		s.names = append(s.names, n.Name())
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			unsent := 0
			for digest := range q {
				if ctx.Err() != nil {
					unsent++ // stopped: what is left is counted, not sent
					continue
				}
				if err := d.Send(ctx, n, digest); err != nil {
					// DeliveryError names the channel; each failing
					// channel reports on its own.
					warn(err.Error())
				}
			}
			if unsent > 0 {
				warn(fmt.Sprintf("%s: %d %s not delivered: the watcher stopped", n.Name(), unsent, alerts.Plural(unsent, "digest", "digests")))
			}
		}()
	}
	return s
}

// send queues d for every channel without waiting.
func (s *senders) send(d alerts.Digest) {
	if d.Empty() {
		return
	}
	for i, q := range s.queues {
		select {
		case q <- d:
		default:
			s.warn(s.names[i] + ": " + "not delivered: the channel is " +
				"too far behind (its queue is full), dropped a digest")
		}
	}
}

// stop lets the queued digests go out for up to grace, then cancels what is
// still being sent and waits for the goroutines. The grace runs on a real
// timer: it bounds how long the process takes to exit, which no injected
// clock can stand in for.
func (s *senders) stop(grace time.Duration) {
	for _, q := range s.queues {
		close(q)
	}
	t := time.AfterFunc(grace, s.cancel)
	s.wg.Wait()
	t.Stop()
	s.cancel()
}
