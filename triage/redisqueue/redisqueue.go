// Package redisqueue is the Redis queue backend, the only package that
// imports go-redis: it pushes retried jobs onto a Laravel app's Redis queues
// exactly as Illuminate\Queue\RedisQueue::pushRaw does, and counts them as
// RedisQueue::size and its 12.19 siblings do. Laravel's clients prefix keys
// transparently and go-redis does not, so every key here is built with the
// app's prefix, and no value carries it.
package redisqueue

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage"
)

// pushScript is RedisQueue's push script (RPUSH the payload, RPUSH a 1 to
// :notify for block_for) behind a marker that makes it idempotent by uuid,
// for a whole pipeline's jobs at once. One script writes markers, lists and
// notify lists, so a uuid is marked if and only if its job was queued; it
// first checks every list key is a list or absent, since an RPUSH failing
// after its markers were set would count its jobs pushed but not queued.
//
// One script per pipeline, not per job: a script call costs Redis several
// times the commands it runs (about 15 µs against 2–3 µs per job). Jobs
// come grouped by queue, each queue's in the order given and pushed by one
// RPUSH, so each list ends as a run of pushRaw calls would leave it; when
// none of a queue's jobs was pushed before, ARGV goes to RPUSH directly.
//
// KEYS: the queue and queue:notify of each group, then the marker of each
// job with a uuid, in order. ARGV[1]: the markers' lifetime in seconds;
// ARGV[2]: the number of groups; then per group its job count n, n marker
// values ("0": no marker, pushed every time; else "k" and the move's
// triage.Move.PushKey) and its n payloads, verbatim. A job is pushed unless
// its marker already holds its value (a marker from another failed_jobs row
// of the same uuid is overwritten). Returns, per job, 1 when it queued the
// job and 0 when the marker already held its value.
const pushScript = `local groups = tonumber(ARGV[2])
for i = 1, 2 * groups do
  local t = redis.call('type', KEYS[i])['ok']
  if t ~= 'list' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE ' .. KEYS[i] .. ' holds a ' .. t .. ', not a list; nothing was pushed')
  end
end
local out, ones, m, a, k = {}, {}, 0, 3, 2 * groups + 1
for g = 1, groups do
  local n = tonumber(ARGV[a])
  local flags, first = a + 1, a + 1 + n
  a = first + n
  local fresh = {}
  for i = 0, n - 1 do
    local new = true
    local v = ARGV[flags + i]
    if v ~= '0' then
      new = redis.call('get', KEYS[k]) ~= v
      if new then
        redis.call('set', KEYS[k], v, 'EX', ARGV[1])
      end
      k = k + 1
    end
    m = m + 1
    if new then
      fresh[#fresh + 1] = first + i
      out[m] = 1
    else
      out[m] = 0
    end
  end
  local f = #fresh
  if f > 0 then
    if f == n then
      redis.call('rpush', KEYS[2 * g - 1], unpack(ARGV, first, first + n - 1))
    else
      local ps = {}
      for i = 1, f do ps[i] = ARGV[fresh[i]] end
      redis.call('rpush', KEYS[2 * g - 1], unpack(ps))
    end
    for i = #ones + 1, f do ones[i] = 1 end
    redis.call('rpush', KEYS[2 * g], unpack(ones, 1, f))
  end
end
return out`

// Key names under the prefix, RedisQueue's and jobtriage's marker's.
const (
	queueKeyPart    = "queues:"
	notifySuffix    = ":notify"
	delayedSuffix   = ":delayed"
	reservedSuffix  = ":reserved"
	markerNamespace = "jobtriage:pushed:"
)

// A pipeline carries at most pipelineJobs jobs and, past the first, at most
// pipelineBytes of payloads, so the client's buffers stay the same size
// whatever the batch. Lua's unpack, which feeds a queue's RPUSH, stops at
// about 8,000 values (LUAI_MAXCSTACK): pipelineJobs stays well below it.
const (
	pipelineJobs  = 512
	pipelineBytes = 4 << 20
)

// Backend is a triage.QueueBackend over one Redis connection.
type Backend struct {
	client   redis.UniversalClient
	opts     Options
	endpoint string
	script   *redis.Script
	// loaded: SCRIPT LOAD succeeded once, so EVALSHA is expected to find
	// the script; a NOSCRIPT reply (a flushed cache) still falls back to EVAL.
	loaded atomic.Bool
	// Tests shrink the pipelines and watch each one finish.
	batchJobs  int
	batchBytes int
	afterBatch func(pushed int)
}

var _ triage.QueueBackend = (*Backend)(nil)

// Open connects and pings within the dial timeout. Its errors name the
// endpoint without the password.
func Open(ctx context.Context, o Options) (*Backend, error) {
	o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	client := newClient(o)
	b := &Backend{client: client, opts: o, endpoint: o.endpoint(), script: redis.NewScript(pushScript),
		batchJobs: pipelineJobs, batchBytes: pipelineBytes}
	pctx, cancel := context.WithTimeout(ctx, o.DialTimeout+time.Second)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		client.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to %s: %w", b.endpoint, ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// A TLS client on a plain port (or the reverse) waits like this.
			return nil, fmt.Errorf("%w: cannot connect to %s: no answer within %s (check the host, the port and TLS)", triage.ErrUnreachable, b.endpoint, o.DialTimeout+time.Second)
		}
		return nil, fmt.Errorf("%w: cannot connect to %s: %s", triage.ErrUnreachable, b.endpoint, b.scrub(err))
	}
	return b, nil
}

// RouteLog sends go-redis's own log lines (a pool that could not dial, a
// cluster whose nodes all fail) to logf instead of the library's default,
// which writes them unprefixed on stderr. go-redis has one logger per
// process and no per-client option, so the composition root calls this
// once, before any client is made.
func RouteLog(logf func(msg string)) { redis.SetLogger(logFunc(logf)) }

// logFunc is go-redis's logger interface over a function.
type logFunc func(msg string)

func (f logFunc) Printf(_ context.Context, format string, v ...any) {
	f(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// newClient builds the client of resolved options: a cluster client
// seeded with the one address, or a plain client on the database.
func newClient(o Options) redis.UniversalClient {
	var tlsConf *tls.Config
	if o.TLS {
		tlsConf = &tls.Config{ServerName: o.Host, MinVersion: tls.VersionTLS12}
	}
	if o.Cluster {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: []string{o.addr()}, Username: o.Username, Password: o.Password,
			TLSConfig: tlsConf, DialTimeout: o.DialTimeout, MaxRetries: -1,
		})
	}
	return redis.NewClient(&redis.Options{
		Addr: o.addr(), Username: o.Username, Password: o.Password, DB: o.DB,
		TLSConfig: tlsConf, DialTimeout: o.DialTimeout,
		// No silent resends: a script whose reply was lost may have run,
		// and a move without a uuid has no marker to stop a second push.
		// The caller's re-run is the retry.
		MaxRetries: -1,
	})
}

// Describe names the connection and its prefix, without credentials.
func (b *Backend) Describe() string {
	return b.endpoint + " (prefix " + b.opts.Prefix + ")"
}

// Close closes the connection pool.
func (b *Backend) Close() error { return b.client.Close() }

// scrub renders a client error without the password.
func (b *Backend) scrub(err error) string { return scrubText(err.Error(), b.opts.Password) }

// fail wraps an error of a Redis command: context errors stay matchable,
// a connection that broke or could not be made again (the server went
// away) is triage.ErrUnreachable, as a lost database server is, and any
// other error text is scrubbed.
func (b *Backend) fail(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s on %s: %w", what, b.endpoint, ctx.Err())
	}
	if lostConnection(err) {
		lost := "lost the connection to the Redis server"
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			lost = "the Redis server stopped answering"
		}
		return &lostError{msg: fmt.Sprintf("%s on %s: %s (%s)", what, b.endpoint, lost, b.scrub(err))}
	}
	return fmt.Errorf("%s on %s: %s", what, b.endpoint, b.scrub(err))
}

// lostConnection recognises a connection that broke (EOF, a reset) or
// could not be made (refused, unreachable): errors of the network, not
// replies of the server.
func lostConnection(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// lostError is a command whose connection to the server was lost; its text
// says so, and it is triage.ErrUnreachable (exit 5), and triage.ErrInDoubt
// when doubt: a push that may have run.
type lostError struct {
	msg   string
	doubt bool
}

func (e *lostError) Error() string { return e.msg }
func (e *lostError) Is(target error) bool {
	return target == triage.ErrUnreachable || (e.doubt && target == triage.ErrInDoubt)
}

// QueueKey is the prefixed list key of a queue, as RedisQueue names it:
// on a cluster, a name without a hash tag is wrapped in one
// ("queues:{default}"), as Laravel 13.5+ does so that a queue's keys share
// a slot; failed_jobs keeps the bare name. Before 13.5 a cluster queue
// needed a hash tag in its name, so an untagged name from a cluster app
// is 13.5's.
func (b *Backend) QueueKey(queue string) string {
	if _, tagged := hashTag(queue); b.opts.Cluster && !tagged {
		return b.opts.Prefix + queueKeyPart + "{" + queue + "}"
	}
	return b.opts.Prefix + queueKeyPart + queue
}

// MarkerKey is the prefixed key that records a pushed uuid, with the queue
// key's hash tag, if any, so the script's keys share one cluster slot.
func (b *Backend) MarkerKey(queue, uuid string) string {
	base := b.opts.Prefix + markerNamespace
	tag, ok := hashTag(b.QueueKey(queue))
	if !ok {
		return base + uuid
	}
	if t, ok := hashTag(base); ok && t == tag {
		return base + uuid // the prefix carries the tag already
	}
	return base + "{" + tag + "}:" + uuid
}

// hashTag is Redis Cluster's rule: the text between the first "{" and the
// first "}" after it, when that text is not empty.
func hashTag(key string) (string, bool) {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return "", false
	}
	return key[i+1 : i+1+j], true
}

// checkPayload refuses what Laravel's pop script would lose: it decodes the
// payload with cjson and adds one to "attempts" after the LPOP, so invalid
// JSON or a missing or non-numeric attempts makes the job vanish inside
// Redis. Duplicate keys are read as cjson reads them: the last one wins.
func checkPayload(payload []byte) error {
	if !gjson.ValidBytes(payload) {
		return errors.New("the payload is not valid JSON")
	}
	obj := gjson.ParseBytes(payload)
	if !obj.IsObject() {
		return errors.New("the payload is not a JSON object")
	}
	var attempts, id gjson.Result
	obj.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "attempts":
			attempts = v
		case "id":
			id = v
		}
		return true
	})
	if attempts.Type != gjson.Number {
		return errors.New(`the payload has no numeric "attempts": Laravel's pop script would lose the job`)
	}
	if _, err := strconv.ParseInt(attempts.Raw, 10, 64); err != nil {
		return fmt.Errorf(`the payload's "attempts" %s is not an integer`, attempts.Raw)
	}
	if !id.Exists() || id.Type == gjson.Null || (id.Type == gjson.String && id.Str == "") {
		return errors.New(`the payload has no "id" (RedisQueue gives every job one)`)
	}
	return nil
}

// moveName names a move in errors: its uuid, or its place in the call.
func moveName(i int, m triage.Move) string {
	if m.UUID != "" {
		return "job " + m.UUID
	}
	return fmt.Sprintf("move %d (no uuid) on queue %q", i, m.Queue)
}

// Push queues the moves in order, as RedisQueue::pushRaw would, each at most
// once by uuid (a move without one is pushed every time); every payload is
// checked before anything is pushed. It returns when Redis has applied every
// script in memory: whether that survives a Redis crash is the server's
// persistence setting, as for Laravel's own pushes.
func (b *Backend) Push(ctx context.Context, moves []triage.Move, now time.Time) (triage.PushResult, error) {
	var rep triage.PushResult
	for i, m := range moves {
		if m.Queue == "" {
			return rep, fmt.Errorf("%w: %s has no queue", triage.ErrInvalidInput, moveName(i, m))
		}
		// A payload the retry made for Redis was checked there
		// (triage.RetryPayload with forRedis); any other is checked here.
		if !m.RedisChecked {
			if err := checkPayload(m.Payload); err != nil {
				return rep, fmt.Errorf("%w: refusing to push %s to Redis: %v; nothing was pushed", triage.ErrInvalidInput, moveName(i, m), err)
			}
		}
	}
	if len(moves) == 0 {
		return rep, nil
	}
	b.loadScript(ctx)
	ttl := int64(b.opts.MarkerTTL / time.Second)
	for start := 0; start < len(moves); {
		end, size := start, 0
		for end < len(moves) && end-start < b.batchJobs && (end == start || size+len(moves[end].Payload) <= b.batchBytes) {
			size += len(moves[end].Payload)
			end++
		}
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("pushing to %s: %w", b.endpoint, err)
		}
		if err := b.pushBatch(ctx, moves[start:end], ttl, &rep); err != nil {
			return rep, err
		}
		if b.afterBatch != nil {
			b.afterBatch(end)
		}
		start = end
	}
	return rep, nil
}

// loadScript caches the script on the server once, for EVALSHA. A failure
// is no error: EVALSHA then answers NOSCRIPT and the jobs go by EVAL.
func (b *Backend) loadScript(ctx context.Context) {
	if b.loaded.Load() {
		return
	}
	if b.script.Load(ctx, b.client).Err() == nil {
		b.loaded.Store(true)
	}
}

// pushBatch pushes one pipeline's jobs: one script for all of them, or on a
// cluster one per queue (a script's keys must share a slot). A script the
// server did not know (NOSCRIPT: it ran nothing) goes again by EVAL.
func (b *Backend) pushBatch(ctx context.Context, batch []triage.Move, ttl int64, rep *triage.PushResult) error {
	groups := groupBy(seq(len(batch)), func(j int) string {
		if b.opts.Cluster {
			return batch[j].Queue
		}
		return ""
	})
	type call struct {
		keys []string
		args []any
	}
	calls := make([]call, len(groups))
	for g, idx := range groups {
		// The script's groups: the queues, then their jobs, in first-seen order.
		queues := groupBy(idx, func(j int) string { return batch[j].Queue })
		c := call{keys: make([]string, 0, 2*len(queues)+len(idx)), args: make([]any, 0, 2+len(queues)+2*len(idx))}
		c.args = append(c.args, ttl, len(queues))
		for _, jobs := range queues {
			k := b.QueueKey(batch[jobs[0]].Queue)
			c.keys = append(c.keys, k, k+notifySuffix)
		}
		for _, jobs := range queues {
			c.args = append(c.args, len(jobs))
			for _, j := range jobs {
				if batch[j].UUID == "" {
					c.args = append(c.args, "0")
				} else {
					c.args = append(c.args, "k"+batch[j].PushKey())
					c.keys = append(c.keys, b.MarkerKey(batch[j].Queue, batch[j].UUID))
				}
			}
			for _, j := range jobs {
				c.args = append(c.args, batch[j].Payload)
			}
		}
		calls[g] = c
	}
	run := func(todo []int, eval bool) ([]int, error) {
		pipe := b.client.Pipeline()
		cmds := make([]*redis.Cmd, len(todo))
		for i, g := range todo {
			if eval {
				cmds[i] = b.script.Eval(ctx, pipe, calls[g].keys, calls[g].args...)
			} else {
				cmds[i] = b.script.EvalSha(ctx, pipe, calls[g].keys, calls[g].args...)
			}
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		var unknown []int
		for i, cmd := range cmds {
			g := todo[i]
			res, err := cmd.Int64Slice()
			switch {
			case err == nil && len(res) == len(groups[g]):
				for _, n := range res {
					if n == 1 {
						rep.Pushed++
					} else {
						rep.Already++
					}
				}
			case err == nil:
				return nil, b.fail(ctx, "pushing "+groupName(batch, groups[g]), fmt.Errorf("the push script answered %d results for %d jobs", len(res), len(groups[g])))
			case !eval && (errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")):
				unknown = append(unknown, g)
			default:
				e := b.fail(ctx, "pushing "+groupName(batch, groups[g]), err)
				// Lost once sent (not while dialling), the script may have run.
				var op *net.OpError
				if le, ok := e.(*lostError); ok && !(errors.As(err, &op) && op.Op == "dial") {
					le.doubt = true
				}
				return nil, e
			}
		}
		return unknown, nil
	}
	unknown, err := run(seq(len(groups)), false)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		b.loaded.Store(false)
		if _, err := run(unknown, true); err != nil {
			return err
		}
	}
	return nil
}

// seq is 0, 1, …, n−1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// groupBy splits idx by key, groups and members in first-seen order.
func groupBy(idx []int, key func(int) string) [][]int {
	at := map[string]int{}
	var out [][]int
	for _, j := range idx {
		g, ok := at[key(j)]
		if !ok {
			g = len(out)
			at[key(j)] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], j)
	}
	return out
}

// groupName names a script's jobs in errors: the first, and how many.
func groupName(batch []triage.Move, idx []int) string {
	name := moveName(idx[0], batch[idx[0]])
	if len(idx) > 1 {
		name += fmt.Sprintf(" and %d more jobs", len(idx)-1)
	}
	return name
}

// Stats counts each asked queue as RedisQueue does (size = list + delayed +
// reserved), in one pipeline, ordered by name; a queue with no keys has
// zero counts. Stuck reservations are those whose :reserved score (pop
// time plus retry_after) has passed: what the next pop migrates back.
func (b *Backend) Stats(ctx context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	queues := slices.Clone(p.Queues)
	slices.Sort(queues)
	queues = slices.Compact(queues)
	if len(queues) == 0 {
		return nil, nil
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	type cmds struct {
		pending, delayed, reserved, stuck *redis.IntCmd
		head                              *redis.StringCmd
	}
	all := make([]cmds, len(queues))
	pipe := b.client.Pipeline()
	for i, q := range queues {
		k := b.QueueKey(q)
		all[i] = cmds{
			pending:  pipe.LLen(ctx, k),
			delayed:  pipe.ZCard(ctx, k+delayedSuffix),
			reserved: pipe.ZCard(ctx, k+reservedSuffix),
			stuck:    pipe.ZCount(ctx, k+reservedSuffix, "-inf", strconv.FormatInt(now.Unix(), 10)),
			head:     pipe.LIndex(ctx, k, 0),
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, b.fail(ctx, "counting queues", err)
	}
	out := make([]triage.QueueStats, len(queues))
	for i, q := range queues {
		c := all[i]
		st := triage.QueueStats{Queue: q, Pending: c.pending.Val(), Delayed: c.delayed.Val(),
			Reserved: c.reserved.Val(), Stuck: c.stuck.Val()}
		st.Size = st.Pending + st.Delayed + st.Reserved
		if head, err := c.head.Bytes(); err == nil {
			st.OldestPendingAt = createdAt(head)
			if st.OldestPendingAt.IsZero() {
				st.OldestPendingUnknown = noCreatedAt
			}
		}
		out[i] = st
	}
	return out, nil
}

// noCreatedAt is why a Redis queue's oldest pending job has no age.
const noCreatedAt = "the oldest job's payload records no time it was queued (createdAt is Laravel 12.11+, pushedAt is Horizon's)"

// createdAt reads when a payload was created: Laravel 12.11+'s "createdAt"
// (epoch seconds), else Horizon's "pushedAt" (fractional seconds, a string).
func createdAt(payload []byte) time.Time {
	for _, key := range []string{"createdAt", "pushedAt"} {
		v := gjson.GetBytes(payload, key)
		if !v.Exists() {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v.String()), 64)
		if err != nil || f <= 0 {
			continue
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*float64(time.Second)))
	}
	return time.Time{}
}

// scanCount is the COUNT hint of each SCAN step listing queue keys.
const scanCount = 1000

// Queues lists the queues that hold jobs (a queue's keys exist only then), by
// a SCAN of the keys under the prefix.
func (b *Backend) Queues(ctx context.Context) ([]string, error) {
	base := b.opts.Prefix + queueKeyPart
	seen := map[string]bool{}
	iter := b.client.Scan(ctx, 0, escapeGlob(base)+"*", scanCount).Iterator()
	for iter.Next(ctx) {
		q := strings.TrimPrefix(iter.Val(), base)
		for _, suffix := range []string{notifySuffix, delayedSuffix, reservedSuffix} {
			if strings.HasSuffix(q, suffix) {
				q = strings.TrimSuffix(q, suffix)
				break
			}
		}
		if b.opts.Cluster && len(q) > 2 && q[0] == '{' && q[len(q)-1] == '}' && strings.IndexByte(q[1:len(q)-1], '}') < 0 {
			// The tag 13.5+ adds: the queue is the bare name.
			q = q[1 : len(q)-1]
		}
		if q != "" {
			seen[q] = true
		}
	}
	if err := iter.Err(); err != nil {
		return nil, b.fail(ctx, "listing queues", err)
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// escapeGlob quotes the glob metacharacters of a key prefix for MATCH.
func escapeGlob(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
