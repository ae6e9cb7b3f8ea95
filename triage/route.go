package triage

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Route is where the jobs of one queue connection go back to when retried.
type Route struct {
	Connection string // failed_jobs.connection
	// Driver is the connection's driver; "" when the profile does not name it.
	Driver string
	// Local: the jobs table is failed_jobs', so a batch moves in one transaction.
	Local bool
	// Backend receives the jobs when not Local; nil with Local false means
	// jobtriage cannot write to this connection, and Reason says why.
	Backend QueueBackend
	Reason  string
	// Failover lists, in order, the connections of a failover-driver
	// connection. NewRouter points such a route at the first of them
	// jobtriage can write to, as FailoverQueue pushes to the first that
	// takes the job: Via names it, and Driver, Local and Backend are its.
	Failover []string
	Via      string
}

// Writable reports whether retry can put jobs on this route.
func (r Route) Writable() bool { return r.Local || r.Backend != nil }

// DefaultDatabaseConnection is the skeleton's database-driver connection,
// assumed when neither the app profile nor the operator names any.
const DefaultDatabaseConnection = "database"

// Router says where the jobs of each queue connection go back to, built
// once by NewRouter; the zero Router is NewRouter(nil, nil, nil).
type Router struct {
	routes  map[string]Route
	profile bool // the routes name every queue connection the app has
}

// NewRouter routes the app profile's queue connections (by name; nil
// outside a profile) and the database queues (--database-connection, or
// DefaultDatabaseConnection when neither names any). A database queue goes
// to jobs (--jobs-dsn) or, when jobs is nil, to failed_jobs' own database,
// and wins over the profile's route of the same name.
func NewRouter(profile map[string]Route, database []string, jobs QueueBackend) Router {
	rt := Router{routes: make(map[string]Route, len(profile)+len(database)), profile: profile != nil}
	for name, r := range profile {
		r.Connection = name
		rt.routes[name] = r
	}
	if len(database) == 0 && profile == nil {
		database = []string{DefaultDatabaseConnection}
	}
	for _, name := range database {
		r := Route{Connection: name, Driver: DriverDatabase, Local: true}
		if jobs != nil {
			r.Local, r.Backend = false, jobs
		}
		rt.routes[name] = r
	}
	ResolveFailover(rt.routes)
	return rt
}

// ResolveFailover points each failover route at its first listed connection
// jobtriage can write to (not failover, known).
func ResolveFailover(routes map[string]Route) {
	for name, r := range routes {
		if len(r.Failover) == 0 {
			continue
		}
		to := Route{Connection: name, Driver: DriverFailover, Failover: r.Failover,
			Reason: fmt.Sprintf("connection %q fails over to %s, none of which jobtriage can write to", name, quoteList(r.Failover))}
		for _, c := range r.Failover {
			if t, ok := routes[c]; ok && len(t.Failover) == 0 && t.Writable() {
				to.Driver, to.Local, to.Backend, to.Via, to.Reason = t.Driver, t.Local, t.Backend, c, ""
				break
			}
		}
		routes[name] = to
	}
}

// ViaNote says where a failover route's jobs go and why; else "".
func (r Route) ViaNote() string {
	if r.Via == "" {
		return ""
	}
	note := fmt.Sprintf("connection %s fails over to %s: jobs go to %s", r.Connection, strings.Join(r.Failover, ", "), r.Via)
	if r.Via == r.Failover[0] {
		return note + ", the first, as Laravel's FailoverQueue pushes them"
	}
	return note + ", the first of them jobtriage can write to (Laravel's FailoverQueue would try " + r.Failover[0] + " first)"
}

// pushedTo is the connection whose queues the route's jobs land on: Via
// for a failover route, whose workers (and pause) are Via's.
func (r Route) pushedTo() string {
	if r.Via != "" {
		return r.Via
	}
	return r.Connection
}

// DriverFacts is what jobtriage knows of a queue driver it cannot write
// to: where its jobs wait (a noun phrase), where its failed jobs are
// recorded, and whether php artisan queue:monitor can count its queues.
type DriverFacts struct {
	Jobs, Failures string
	Monitor        bool
}

// Drivers jobtriage names but cannot write to (config/queue.php names).
const (
	DriverDeferred   = "deferred"
	DriverBackground = "background"
	DriverCloud      = "cloud"
)

// UnwritableDriver is what jobtriage knows of a driver it cannot write to.
func UnwritableDriver(driver string) (DriverFacts, bool) {
	const failedJobs = "failed_jobs, if the failer runs in the process that ran the job"
	switch driver {
	case DriverDeferred:
		return DriverFacts{Jobs: "no queue; each job runs in the dispatching process after the response", Failures: failedJobs}, true
	case DriverBackground:
		return DriverFacts{Jobs: "no queue; each job runs in a PHP process spawned after the response", Failures: failedJobs}, true
	case DriverCloud:
		return DriverFacts{Jobs: "Laravel Cloud's managed queue",
			Failures: "never failed_jobs: Laravel Cloud's failer sends them to Cloud, so jobtriage sees none; see them in Laravel Cloud", Monitor: true}, true
	case DriverSQS:
		return DriverFacts{Jobs: "Amazon SQS, a broker jobtriage does not read", Failures: "failed_jobs", Monitor: true}, true
	case DriverBeanstalkd:
		return DriverFacts{Jobs: "beanstalkd, a broker jobtriage does not read", Failures: "failed_jobs", Monitor: true}, true
	}
	return DriverFacts{}, false
}

// UnwritableReason is the one-line reason of a route to a connection whose
// driver jobtriage cannot write to, naming where its jobs wait.
func UnwritableReason(connection, driver string) string {
	if driver == "" {
		driver = "(none)"
	}
	if f, ok := UnwritableDriver(driver); ok {
		driver += " queue driver (" + f.Jobs + ")"
	} else {
		driver += " queue driver"
	}
	return fmt.Sprintf("connection %q uses the %s, which jobtriage cannot write to", connection, driver)
}

// UnreadableReason says why monitor cannot count a connection of driver,
// naming where the driver's jobs wait when jobtriage knows.
func UnreadableReason(driver string) string {
	if driver == "" {
		driver = "(none)"
	}
	if f, ok := UnwritableDriver(driver); ok {
		return fmt.Sprintf("the %s driver: %s", driver, f.Jobs)
	}
	return fmt.Sprintf("the %s driver cannot be read by jobtriage", driver)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// For says where a connection's jobs go back to; unknown ones are unwritable.
func (rt Router) For(connection string) Route {
	if r, ok := rt.built().routes[connection]; ok {
		return r
	}
	reason := fmt.Sprintf("connection %q is not a database queue (name database-driver connections with --database-connection)", connection)
	if rt.profile {
		reason = fmt.Sprintf("connection %q is not a queue connection of this app's config/queue.php", connection)
	}
	return Route{Connection: connection, Reason: reason}
}

// built is the router, the zero one as NewRouter builds it.
func (rt Router) built() Router {
	if rt.routes == nil {
		return NewRouter(nil, nil, nil)
	}
	return rt
}

// hasRemote reports whether any route pushes to a queue backend.
func (rt Router) hasRemote() bool {
	for _, r := range rt.routes {
		if r.Backend != nil && !r.Local {
			return true
		}
	}
	return false
}

// databaseBackends are the routes to jobs tables a retry may write to;
// local ones only when failed_jobs' database has a jobs table.
func (rt Router) databaseBackends(hasJobs bool) []Route {
	var out []Route
	for _, r := range rt.built().routes {
		if r.Driver == DriverDatabase && ((r.Local && hasJobs) || (!r.Local && r.Backend != nil)) {
			out = append(out, r)
		}
	}
	return out
}

// pushRemote pushes non-local moves to their backends, by connection, in order.
func (s *Service) pushRemote(ctx context.Context, moves []Move, now time.Time) error {
	var order []string
	groups := map[string][]Move{}
	for _, m := range moves {
		if _, ok := groups[m.Connection]; !ok {
			order = append(order, m.Connection)
		}
		groups[m.Connection] = append(groups[m.Connection], m)
	}
	for _, conn := range order {
		r := s.Router.For(conn)
		if r.Backend == nil {
			return fmt.Errorf("connection %q has no queue backend to push to", conn)
		}
		if _, err := r.Backend.Push(ctx, groups[conn], now); err != nil {
			err = fmt.Errorf("pushing to %s (connection %s): %w", r.Backend.Describe(), conn, err)
			if rej := probeRefused(ctx, r.Backend, groups[conn], now, err); rej != nil {
				return rej
			}
			return err
		}
	}
	return nil
}

// MoveProber is a queue backend that can say which of a refused push's
// moves it refuses for reasons of their own, without keeping any.
type MoveProber interface {
	// ProbeMoves tries each move alone and returns why the backend refuses it
	// ("" if it takes it), or an error when none is at fault.
	ProbeMoves(ctx context.Context, moves []Move, now time.Time, pushErr error) ([]string, error)
}

// probeRefused turns a failed push into RejectedRows when the backend can
// name the moves it refused (a jobs table in another database).
func probeRefused(ctx context.Context, b QueueBackend, moves []Move, now time.Time, pushErr error) *RejectedRows {
	pr, ok := b.(MoveProber)
	if !ok || ctx.Err() != nil {
		return nil
	}
	reasons, err := pr.ProbeMoves(ctx, moves, now, pushErr)
	if err != nil {
		return nil
	}
	rej := &RejectedRows{Cause: pushErr}
	for i, why := range reasons {
		if why != "" && i < len(moves) && moves[i].RowID != 0 {
			rej.Rows = append(rej.Rows, RejectedRow{ID: moves[i].RowID, Reason: why})
		}
	}
	if len(rej.Rows) == 0 {
		return nil
	}
	return rej
}

// StateReaderFor reads a connection's route's jobs; nil when it cannot.
func (s *Service) StateReaderFor(connection string) JobStateReader {
	r := s.Router.For(connection)
	var v any = r.Backend
	if r.Local {
		v = s.Store
	}
	if jr, ok := v.(JobStateReader); ok {
		return jr
	}
	return nil
}
