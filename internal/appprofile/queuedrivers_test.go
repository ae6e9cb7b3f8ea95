package appprofile

import (
	"slices"
	"testing"
)

// TestQueueConnectionsFailoverList reads the Laravel 13 skeleton's own
// config/queue.php: its failover connection lists database, then
// deferred, in the order FailoverQueue tries them.
func TestQueueConnectionsFailoverList(t *testing.T) {
	cfg := fixtureApp(t, "../../testdata/laravel13-app", "DB_CONNECTION=pgsql")
	var failover *QueueConnection
	for i, qc := range cfg.Queues {
		if qc.Name == "failover" {
			failover = &cfg.Queues[i]
		}
		if qc.Name != "failover" && len(qc.Connections) != 0 {
			t.Errorf("connection %s: Connections = %q, want none", qc.Name, qc.Connections)
		}
	}
	if failover == nil {
		t.Fatalf("no failover connection in %v", cfg.Queues)
	}
	if failover.Driver != "failover" || !slices.Equal(failover.Connections, []string{"database", "deferred"}) {
		t.Errorf("failover = driver %q, connections %q; want failover, [database deferred]", failover.Driver, failover.Connections)
	}
}
