package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// cacheTableDDL is what `php artisan make:cache-table` migrates, per dialect.
var cacheTableDDL = map[string]string{
	"postgres": `CREATE TABLE "cache" ("key" varchar(255) NOT NULL PRIMARY KEY, "value" text NOT NULL, "expiration" integer NOT NULL)`,
	"mysql":    "CREATE TABLE `cache` (`key` varchar(255) NOT NULL PRIMARY KEY, `value` mediumtext NOT NULL, `expiration` int NOT NULL) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci",
	"sqlite":   `CREATE TABLE "cache" ("key" varchar NOT NULL PRIMARY KEY, "value" text NOT NULL, "expiration" integer NOT NULL)`,
}

// TestCacheStoreConformance: the database cache store writes the rows
// DatabaseStore writes (upsert on key, b:1;, now+forever or now+ttl), reads
// a row only while expiration > now, and deletes on Forget, on every
// dialect.
func TestCacheStoreConformance(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ep := sqltest.NewEndpoint(t, driver)
			if _, err := sqlstore.OpenCache(ctx, sqlstore.Config{Endpoint: ep}, "cache", "p-"); !errors.Is(err, triage.ErrMissingTable) {
				t.Errorf("no table: %v, want ErrMissingTable", err)
			}
			raw, err := sqlstore.OpenRaw(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.ExecContext(ctx, cacheTableDDL[driver]); err != nil {
				t.Fatal(err)
			}
			cs, err := sqlstore.OpenCache(ctx, sqlstore.Config{Endpoint: ep}, "cache", "harness13-cache-")
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			now := time.Unix(1_796_152_732, 0)
			key := "illuminate:queue:paused:database:emails"
			keyCol := `"key"`
			if driver == "mysql" {
				keyCol = "`key`"
			}
			row := func() (value string, expiration int64, found bool) {
				t.Helper()
				err := raw.QueryRowxContext(ctx, raw.Rebind(`SELECT value, expiration FROM cache WHERE `+keyCol+` = ?`),
					"harness13-cache-"+key).Scan(&value, &expiration)
				if err != nil {
					return "", 0, false
				}
				return value, expiration, true
			}
			if err := cs.Put(ctx, key, triage.PausedValue, 0, now); err != nil {
				t.Fatal(err)
			}
			if v, exp, ok := row(); !ok || v != "b:1;" || exp != now.Unix()+315360000 {
				t.Errorf("forever row %q %d %v, want b:1; %d", v, exp, ok, now.Unix()+315360000)
			}
			// The upsert replaces the row: a timed pause over a forever one.
			if err := cs.Put(ctx, key, triage.PausedValue, 90*time.Second, now); err != nil {
				t.Fatal(err)
			}
			if v, exp, ok := row(); !ok || v != "b:1;" || exp != now.Unix()+90 {
				t.Errorf("timed row %q %d %v", v, exp, ok)
			}
			for _, tc := range []struct {
				at   time.Time
				want bool
			}{{now, true}, {now.Add(89 * time.Second), true}, {now.Add(90 * time.Second), false}} {
				got, err := cs.Present(ctx, []string{key, "illuminate:queues:paused"}, tc.at)
				if err != nil {
					t.Fatal(err)
				}
				if got[key] != tc.want || got["illuminate:queues:paused"] {
					t.Errorf("at +%s: %v, want %s %v", tc.at.Sub(now), got, key, tc.want)
				}
			}
			if cs.StoredKey(key) != "harness13-cache-"+key {
				t.Errorf("stored key %q", cs.StoredKey(key))
			}
			if err := cs.Forget(ctx, key); err != nil {
				t.Fatal(err)
			}
			if _, _, ok := row(); ok {
				t.Error("row left after Forget")
			}
			if err := cs.Forget(ctx, key); err != nil {
				t.Errorf("forgetting a missing key: %v", err)
			}
			// Artisan's own row (observed on 13.31) reads as paused.
			if _, err := raw.ExecContext(ctx, raw.Rebind(`INSERT INTO cache VALUES (?, ?, ?)`), "harness13-cache-"+key, "b:1;", 2111512732); err != nil {
				t.Fatal(err)
			}
			if got, err := cs.Present(ctx, []string{key}, now); err != nil || !got[key] {
				t.Errorf("artisan's row: %v %v", got, err)
			}
		})
	}
}
