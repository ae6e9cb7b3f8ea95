package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// CacheStore is Laravel's database cache store (Cache/DatabaseStore.php)
// as the queue pause keys need it: rows (key, value, expiration) with the
// cache prefix in key and expiration in unix seconds.
type CacheStore struct {
	s      *Store // the pool, dialect and endpoint
	name   tableName
	table  string // quoted
	prefix string
	// cols are the quoted key, value and expiration columns.
	cols string
}

var _ triage.CacheStore = (*CacheStore)(nil)

// foreverSeconds is how far DatabaseStore::forever puts the expiration:
// ten years of seconds.
const foreverSeconds = 315360000

// cacheShape is the table make:cache-table creates.
var cacheShape = shape{{"key", kindText}, {"value", kindText}, {"expiration", kindInteger}}

// OpenCache opens the cache table of a database store: table is the
// store's table with the connection's table prefix, prefix the cache
// prefix. A missing table is triage.ErrMissingTable.
func OpenCache(ctx context.Context, cfg Config, table, prefix string) (*CacheStore, error) {
	name, err := parseTableName(table)
	if err != nil {
		return nil, err
	}
	d, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	heard := &silence{idle: clientDeadline(cfg)}
	db, ep, err := connect(ctx, cfg, heard)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, d: d, ep: ep, heard: heard}
	cols, err := s.columns(ctx, name)
	if err == nil && len(cols) == 0 {
		err = fmt.Errorf("%w: cache table %q not found in %s; create it in the app with `php artisan make:cache-table && php artisan migrate`, or set DB_CACHE_TABLE",
			triage.ErrMissingTable, table, s.lookedIn(name))
	}
	if err == nil {
		err = s.checkShape(name, cols, cacheShape, "cache")
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &CacheStore{s: s, name: name, table: name.quoted(d), prefix: prefix,
		cols: d.quote("key") + ", " + d.quote("value") + ", " + d.quote("expiration")}, nil
}

// Close releases the connection pool.
func (c *CacheStore) Close() error { return c.s.Close() }

func (c *CacheStore) StoredKey(key string) string { return c.prefix + key }

func (c *CacheStore) Describe() string {
	return "database cache store " + c.s.ep.Redacted() + " table " + c.name.String()
}

// falsyValues are serialized values PHP reads as false: a key holding one
// pauses nothing (Worker::getPausedQueues filters the values).
var falsyValues = map[string]bool{"b:0;": true, "N;": true, "i:0;": true, `s:0:"";`: true, `s:1:"0";`: true}

// Present implements triage.CacheStore: a row counts while expiration >
// now, as DatabaseStore::many reads it. It only reads, so a dry run needs
// no write privilege.
func (c *CacheStore) Present(ctx context.Context, keys []string, now time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = c.prefix + k
	}
	q := "SELECT " + c.cols + " FROM " + c.table + " WHERE " + c.s.d.quote("key") + " IN (" + marks(len(keys)) + ")"
	err := c.s.eachRow(ctx, c.s.db, c.s.db.Rebind(q), args, func(rows *sql.Rows) error {
		var key, value string
		var expiration int64
		if err := rows.Scan(&key, &value, &expiration); err != nil {
			return fmt.Errorf("reading the cache table %s: %s", c.name, scrub(err, c.s.ep))
		}
		if expiration > now.Unix() && !falsyValues[value] {
			out[strings.TrimPrefix(key, c.prefix)] = true
		}
		return nil
	})
	return out, err
}

// Put implements triage.CacheStore with DatabaseStore's upsert on key.
// The value is written as is: DatabaseStore base64-encodes a value on
// PostgreSQL and SQLite only when it contains a NUL byte, so a value with
// one is refused rather than written in a form Laravel would misread.
func (c *CacheStore) Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error {
	if strings.ContainsRune(value, 0) {
		return fmt.Errorf("%w: a cache value with a NUL byte", triage.ErrInvalidInput)
	}
	seconds := int64(foreverSeconds)
	if ttl > 0 {
		seconds = int64(ttl / time.Second)
	}
	q := "INSERT INTO " + c.table + " (" + c.cols + ") VALUES (?, ?, ?)" + c.s.d.upsertCache
	if _, err := c.s.db.ExecContext(ctx, c.s.db.Rebind(q), c.prefix+key, value, now.Unix()+seconds); err != nil {
		return c.s.queryError(err)
	}
	return nil
}

func (c *CacheStore) Forget(ctx context.Context, key string) error {
	q := "DELETE FROM " + c.table + " WHERE " + c.s.d.quote("key") + " = ?"
	if _, err := c.s.db.ExecContext(ctx, c.s.db.Rebind(q), c.prefix+key); err != nil {
		return c.s.queryError(err)
	}
	return nil
}
