// Package demo generates realistic Laravel 8.83 queue rows: failed_jobs
// rows with the payloads Laravel's json_encode writes byte for byte and
// Throwable::__toString exceptions, and jobs rows in every state. It is
// deterministic for a seed, streams in constant memory, and feeds `jobtriage
// demo` and the benchmarks.
package demo

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// Options describe the data to generate.
type Options struct {
	Failed int    // failed_jobs rows
	Jobs   int    // jobs rows
	Seed   uint64 // same seed and options, same rows
	// Now ends the failure window of windowDays and is the jobs states'
	// reference; zero means time.Now().
	Now time.Time
	// PayloadSize and ExceptionSize are target sizes in bytes; 0 keeps the
	// natural ones (payloads of about 0.3–1.5 KB, exceptions of 2.6–13 KB).
	// Payloads grow with order lines and never shrink; exceptions grow with
	// job-middleware frames and shrink by keeping each trace's top frames.
	PayloadSize   int
	ExceptionSize int
	// Scenarios (Scenario* names) and Connections ("database", "redis")
	// restrict the kinds of failure; empty means all.
	Scenarios   []string
	Connections []string
	// BatchSize is Populate's rows per transaction; 0 picks one per driver.
	BatchSize int
	// Progress, when set, gets the rows written and the total after each
	// committed transaction.
	Progress func(done, total int)
}

// FailedRow is a failed_jobs row as DatabaseUuidFailedJobProvider writes
// it, plus what the generator knows of it (for tests).
type FailedRow struct {
	UUID       string
	Connection string
	Queue      string
	Payload    string
	Exception  string
	FailedAt   time.Time // UTC, whole seconds
	// Scenario, Class (what a listing should show) and ExceptionClass (the
	// top one) say what was generated.
	Scenario       string
	Class          string
	ExceptionClass string
	Encrypted      bool
}

// FailedAtText is failed_at as Laravel binds it, in UTC.
func (r FailedRow) FailedAtText() string { return r.FailedAt.UTC().Format(wallLayout) }

// JobRow is a jobs table row (DatabaseQueue); times are epoch seconds.
type JobRow struct {
	Queue       string
	Payload     string
	Attempts    int
	ReservedAt  *int64
	AvailableAt int64
	CreatedAt   int64
	Scenario    string
}

// windowDays is how many days before Options.Now the failures spread over.
const windowDays = 7

// Generator produces rows one at a time.
type Generator struct {
	opts      Options
	rng       *rand.Rand
	key       []byte
	all       []scenario
	allowed   []int // indexes into all
	dbAllowed []int // allowed scenarios on the database connection (jobs rows)
	total     int   // sum of allowed weights
	timeline  timeline
	nextFail  int
	nextJob   int
	perMW     map[int]int    // exception growth per middleware, by scenario
	frameCap  map[int]int    // frames kept per block to reach ExceptionSize, by scenario
	perPad    map[string]int // payload growth per padding line, by scenario
}

func NewGenerator(opts Options) (*Generator, error) {
	if opts.Failed < 0 || opts.Jobs < 0 {
		return nil, errors.New("demo: row counts must not be negative")
	}
	if opts.PayloadSize < 0 || opts.ExceptionSize < 0 {
		return nil, errors.New("demo: sizes must not be negative")
	}
	if opts.PayloadSize > 64<<20 || opts.ExceptionSize > 64<<20 {
		return nil, errors.New("demo: sizes above 64 MiB are not realistic rows")
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	opts.Now = opts.Now.UTC().Truncate(time.Second)
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(DemoAppKey, "base64:"))
	g := &Generator{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		key: key, all: scenarios(), perMW: map[int]int{}, frameCap: map[int]int{}, perPad: map[string]int{}}
	for _, n := range opts.Scenarios {
		if !slices.ContainsFunc(g.all, func(s scenario) bool { return s.name == n }) {
			return nil, fmt.Errorf("demo: unknown scenario %q", n)
		}
	}
	for i, s := range g.all {
		if len(opts.Scenarios) > 0 && !slices.Contains(opts.Scenarios, s.name) {
			continue
		}
		if len(opts.Connections) > 0 && !slices.Contains(opts.Connections, s.connection) {
			continue
		}
		g.allowed = append(g.allowed, i)
		g.total += s.weight
		if s.connection == "database" {
			g.dbAllowed = append(g.dbAllowed, i)
		}
	}
	if len(g.allowed) == 0 {
		return nil, errors.New("demo: the scenario and connection filters leave nothing to generate")
	}
	if opts.Jobs > 0 && len(g.dbAllowed) == 0 {
		return nil, errors.New("demo: jobs rows need a scenario on the database connection")
	}
	g.timeline = newTimeline(g.rng, opts.Now, windowDays, g.allowed)
	return g, nil
}

// Options are the options with their defaults applied.
func (g *Generator) Options() Options { return g.opts }

// NextFailed returns the next failed row, oldest first (ids grow with
// failed_at, as workers insert them), and false after opts.Failed rows.
func (g *Generator) NextFailed() (FailedRow, bool, error) {
	if g.nextFail >= g.opts.Failed {
		return FailedRow{}, false, nil
	}
	at, burst := g.timeline.at(g.nextFail, g.opts.Failed)
	g.nextFail++
	idx := g.pick(burst)
	s := g.all[idx]
	f := g.drawFacts(at)
	payload, err := g.buildPayload(s, f)
	if err != nil {
		return FailedRow{}, false, err
	}
	return FailedRow{
		UUID: f.uuid, Connection: s.connection, Queue: s.queue,
		Payload: payload, Exception: g.buildException(idx, f), FailedAt: at,
		Scenario: s.name, Class: s.class, ExceptionClass: s.exceptionClass, Encrypted: s.encrypted,
	}, true, nil
}

// NextJob returns the next jobs row and false after opts.Jobs rows: about
// 60% pending, 15% delayed, 25% reserved of which a third are stuck (reserved
// longer than the default retry_after of 90 s).
func (g *Generator) NextJob() (JobRow, bool, error) {
	if g.nextJob >= g.opts.Jobs {
		return JobRow{}, false, nil
	}
	g.nextJob++
	idx := g.dbAllowed[g.rng.IntN(len(g.dbAllowed))]
	s := g.all[idx]
	now := g.opts.Now.Unix()
	f := g.drawFacts(g.opts.Now)
	payload, err := g.buildPayload(s, f)
	if err != nil {
		return JobRow{}, false, err
	}
	j := JobRow{Queue: s.queue, Payload: payload, Scenario: s.name}
	switch r := g.rng.IntN(100); {
	case r < 60: // pending
		j.CreatedAt = now - g.rng.Int64N(3600)
		j.AvailableAt = j.CreatedAt
	case r < 75: // delayed
		j.CreatedAt = now - g.rng.Int64N(600)
		j.AvailableAt = now + 60 + g.rng.Int64N(86400)
	default: // reserved; a third of them stuck past retry_after
		j.CreatedAt = now - 120 - g.rng.Int64N(7200)
		j.AvailableAt = j.CreatedAt
		j.Attempts = 1 + g.rng.IntN(3)
		at := now - g.rng.Int64N(60)
		if r >= 92 {
			at = now - 91 - g.rng.Int64N(3600)
		}
		j.ReservedAt = &at
	}
	return j, true, nil
}

func (g *Generator) pick(burst int) int {
	if burst >= 0 && g.rng.IntN(100) < 70 {
		return burst
	}
	n := g.rng.IntN(g.total)
	for _, i := range g.allowed {
		if n < g.all[i].weight {
			return i
		}
		n -= g.all[i].weight
	}
	return g.allowed[len(g.allowed)-1]
}

func (g *Generator) drawFacts(at time.Time) *facts {
	var u [16]byte
	for i := range u {
		u[i] = byte(g.rng.Uint32())
	}
	iv := make([]byte, 16)
	for i := range iv {
		iv[i] = byte(g.rng.Uint32())
	}
	const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var rid strings.Builder
	for i := 0; i < 32; i++ {
		rid.WriteByte(alnum[g.rng.IntN(len(alnum))])
	}
	// Ids follow a skewed distribution: a few hot records fail often.
	id := int64(1000 + math.Floor(math.Pow(g.rng.Float64(), 3)*90000))
	return &facts{uuid: uuidFrom(u[:]), redisID: rid.String(), id: id, n: g.rng.Int64N(1 << 30),
		pick: g.rng.IntN(1 << 16), failedAt: at, iv: iv, mw: g.rng.IntN(3), key: g.key}
}

func (g *Generator) buildPayload(s scenario, f *facts) (string, error) {
	p, err := s.payload(f, 0)
	if err != nil || g.opts.PayloadSize <= len(p) {
		return p, err
	}
	// A padding line adds a scenario's fixed number of bytes.
	per, ok := g.perPad[s.name]
	if !ok {
		one, err := s.payload(f, 1)
		if err != nil {
			return "", err
		}
		per = len(one) - len(p)
		g.perPad[s.name] = per
	}
	if per <= 0 {
		return p, nil
	}
	k := (g.opts.PayloadSize - len(p) + per - 1) / per
	p, err = s.payload(f, k)
	// Nested encodings (a closure's, length digits) may fall short: top up.
	for i := 0; err == nil && len(p) < g.opts.PayloadSize && i < 8; i++ {
		k++
		p, err = s.payload(f, k)
	}
	return p, err
}

func (g *Generator) buildException(idx int, f *facts) string {
	s := g.all[idx]
	e := render(s.exception(f, f.mw))
	target := g.opts.ExceptionSize
	if target <= 0 {
		return e
	}
	if len(e) > target+target/8 {
		// Too big: keep the top of each trace, as a shallower stack would;
		// a scenario's traces have one shape, so one frame cap serves all.
		chain := s.exception(f, 0)
		if c, ok := g.frameCap[idx]; ok {
			return renderCapped(chain, c)
		}
		lo, hi := 0, 0
		for _, t := range chain {
			hi = max(hi, len(t.frames))
		}
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if len(renderCapped(chain, mid)) <= target {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		g.frameCap[idx] = lo
		return renderCapped(chain, lo)
	}
	if target <= len(e) {
		return e
	}
	per, ok := g.perMW[idx]
	if !ok {
		per = len(render(s.exception(f, f.mw+1))) - len(e)
		g.perMW[idx] = per
	}
	if per <= 0 {
		return e
	}
	return render(s.exception(f, f.mw+(target-len(e)+per-1)/per))
}

// timeline spreads failures over the window with a daily rhythm and a few
// bursts (an outage: one kind floods for an hour or three).
type timeline struct {
	start time.Time
	cum   []float64 // cumulative share of failures up to the end of each hour
	burst []int     // dominant scenario of each hour, or -1
}

func newTimeline(rng *rand.Rand, now time.Time, days int, allowed []int) timeline {
	hours := days * 24
	t := timeline{start: now.Add(-time.Duration(hours) * time.Hour), cum: make([]float64, hours), burst: make([]int, hours)}
	weights := make([]float64, hours)
	for h := range weights {
		hourOfDay := t.start.Add(time.Duration(h) * time.Hour).Hour()
		// Busier during the working day (UTC+2…UTC+7 customers).
		weights[h] = 1 + 1.5*math.Max(0, math.Sin(float64(hourOfDay-2)/14*math.Pi))
		t.burst[h] = -1
	}
	bursts := 1 + days*2/3
	for b := 0; b < bursts; b++ {
		at := rng.IntN(hours)
		length := 1 + rng.IntN(3)
		intensity := 8 + rng.Float64()*17
		kind := allowed[rng.IntN(len(allowed))]
		for h := at; h < at+length && h < hours; h++ {
			weights[h] *= intensity
			t.burst[h] = kind
		}
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	acc := 0.0
	for h, w := range weights {
		acc += w / sum
		t.cum[h] = acc
	}
	t.cum[hours-1] = 1
	return t
}

// at is the failure time of row i of n; times never decrease with i.
func (t timeline) at(i, n int) (time.Time, int) {
	u := (float64(i) + 0.5) / float64(n)
	h := sort.SearchFloat64s(t.cum, u)
	if h >= len(t.cum) {
		h = len(t.cum) - 1
	}
	prev := 0.0
	if h > 0 {
		prev = t.cum[h-1]
	}
	frac := 0.0
	if t.cum[h] > prev {
		frac = (u - prev) / (t.cum[h] - prev)
	}
	off := time.Duration(h)*time.Hour + time.Duration(frac*float64(time.Hour))
	return t.start.Add(off).Truncate(time.Second), t.burst[h]
}
