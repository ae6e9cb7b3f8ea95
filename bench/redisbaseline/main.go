// Command redisbaseline is the hand-written baseline of the Redis retry
// benchmark (bench/redis_retry.sh): the fastest honest way to put every
// failed_jobs row back on its Redis queue without exactly-once. It reads the
// rows in id order, chunk by chunk, resets each payload's "attempts" to 0,
// sends one pipeline per chunk of plain
//
//	RPUSH {prefix}queues:{queue} payload
//	RPUSH {prefix}queues:{queue}:notify 1
//
// (what RedisQueue::pushRaw's script does, with no Lua and no marker), and
// then deletes the chunk's id range from failed_jobs in one autocommitted
// statement. A crash between a chunk's pipeline and its delete pushes that
// chunk again on a re-run: that is the guarantee it does not give, and the
// cost jobtriage pays to give it.
//
//	redisbaseline -dsn postgres://user@host:5432/db?sslmode=disable -redis 127.0.0.1:6379 -prefix app_database_
//	redisbaseline -dsn mysql://root@127.0.0.1:3306/db …
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq" // registers "postgres"
	"github.com/redis/go-redis/v9"
	"github.com/tidwall/sjson"
)

// defaultChunk is the rows read, pushed in one pipeline and deleted per
// round: about 10 MB of 2 KB payloads, so round trips are negligible and
// memory stays bounded.
const defaultChunk = 5000

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "redisbaseline:", err)
		os.Exit(1)
	}
}

func run() error {
	dsn := flag.String("dsn", "", "failed_jobs database: postgres://… or mysql://user[:pass]@host:port/db")
	addr := flag.String("redis", "127.0.0.1:6379", "Redis address")
	prefix := flag.String("prefix", "", "the app's Redis key prefix")
	chunk := flag.Int("chunk", defaultChunk, "rows per read, pipeline and delete")
	flag.Parse()
	if *chunk <= 0 {
		return errors.New("-chunk must be positive")
	}
	driver, source, err := sqlSource(*dsn)
	if err != nil {
		return err
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		return err
	}
	defer db.Close()
	rdb := redis.NewClient(&redis.Options{Addr: *addr})
	defer rdb.Close()
	ctx := context.Background()
	sel, del := "SELECT id, queue, payload FROM failed_jobs WHERE id > $1 ORDER BY id LIMIT $2",
		"DELETE FROM failed_jobs WHERE id > $1 AND id <= $2"
	if driver == "mysql" {
		sel, del = "SELECT id, queue, payload FROM failed_jobs WHERE id > ? ORDER BY id LIMIT ?",
			"DELETE FROM failed_jobs WHERE id > ? AND id <= ?"
	}
	start := time.Now()
	var after int64
	total := 0
	for {
		rows, err := db.QueryContext(ctx, sel, after, *chunk)
		if err != nil {
			return err
		}
		pipe := rdb.Pipeline()
		n, last := 0, after
		for rows.Next() {
			var id int64
			var queue string
			var payload []byte
			if err := rows.Scan(&id, &queue, &payload); err != nil {
				rows.Close()
				return err
			}
			if payload, err = resetAttempts(payload); err != nil {
				rows.Close()
				return fmt.Errorf("row %d: %w", id, err)
			}
			key := *prefix + "queues:" + queue
			pipe.RPush(ctx, key, payload)
			pipe.RPush(ctx, key+":notify", 1)
			n, last = n+1, id
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		if n == 0 {
			break
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, del, after, last); err != nil {
			return err
		}
		total += n
		after = last
	}
	fmt.Printf("pushed %d jobs in %s\n", total, time.Since(start).Round(time.Millisecond))
	return nil
}

// resetAttempts sets "attempts" to 0. RedisQueue appends it as the last key,
// so the common case is a rewrite of the payload's tail; anything else goes
// through sjson.
func resetAttempts(p []byte) ([]byte, error) {
	const key = `"attempts":`
	if i := bytes.LastIndex(p, []byte(key)); i >= 0 {
		tail := p[i+len(key):]
		j := 0
		for j < len(tail) && tail[j] >= '0' && tail[j] <= '9' {
			j++
		}
		if j > 0 && string(tail[j:]) == "}" {
			return append(p[:i+len(key)], '0', '}'), nil
		}
	}
	return sjson.SetBytes(p, "attempts", 0)
}

// sqlSource turns a postgres:// or mysql:// URL into a database/sql driver
// and data source name.
func sqlSource(dsn string) (string, string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", "", fmt.Errorf("-dsn: %v", err)
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return "postgres", dsn, nil
	case "mysql", "mariadb":
		c := mysql.NewConfig()
		c.User = u.User.Username()
		c.Passwd, _ = u.User.Password()
		c.Net, c.Addr = "tcp", u.Host
		if u.Port() == "" {
			c.Addr += ":3306"
		}
		c.DBName = strings.TrimPrefix(u.Path, "/")
		return "mysql", c.FormatDSN(), nil
	}
	return "", "", fmt.Errorf("-dsn %q: want postgres:// or mysql://", u.Redacted())
}
