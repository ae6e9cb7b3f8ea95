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

// TestRedisClusterConnection: a Redis connection of database.redis.clusters
// is a cluster one (its queue keys get hash tags), unless a plain
// connection of that name exists, which RedisManager resolves first.
func TestRedisClusterConnection(t *testing.T) {
	cfg := mustResolve(t, laravelApp(t, map[string]string{
		"artisan":             "",
		"database/app.sqlite": "",
		"config/database.php": `<?php
return [
    'default' => 'sqlite',
    'connections' => ['sqlite' => ['driver' => 'sqlite', 'database' => database_path('app.sqlite')]],
    'redis' => [
        'options' => ['cluster' => env('REDIS_CLUSTER', 'redis'), 'prefix' => 'shop_'],
        'clusters' => [
            'default' => [['host' => 'node-1', 'port' => 7000]],
            'cache' => [['host' => 'node-2', 'port' => 7001]],
        ],
        'cache' => ['host' => 'plain', 'port' => 6379],
    ],
];
`,
	}, "DB_CONNECTION=sqlite"))
	rc, err := cfg.Profile.Redis("default")
	if err != nil || !rc.Cluster || rc.Host != "node-1" || rc.Port != 7000 || rc.Prefix != "shop_" {
		t.Errorf("default = %+v, %v; want the cluster's first node", rc, err)
	}
	if rc, err := cfg.Profile.Redis("cache"); err != nil || rc.Cluster || rc.Host != "plain" {
		t.Errorf("cache = %+v, %v; want the plain connection", rc, err)
	}
}
