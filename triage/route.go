package triage

import (
	"context"
	"fmt"
	"time"
)

// Route is where the jobs of one queue connection go back to when retried.
type Route struct {
	// Connection is the queue connection name (failed_jobs.connection).
	Connection string
	// Driver is the connection's driver ("database", "redis", …); "" when
	// the app profile does not name the connection.
	Driver string
	// Local: the connection's jobs table is in the failed_jobs database,
	// so a batch moves in one transaction.
	Local bool
	// Backend receives the jobs when not Local; nil with Local false means
	// jobtriage cannot write to this connection (Reason says why).
	Backend QueueBackend
	// Reason explains a route jobtriage cannot write to.
	Reason string
}

// Writable reports whether retry can put jobs on this route.
func (r Route) Writable() bool { return r.Local || r.Backend != nil }

// DefaultDatabaseConnection is the queue connection name taken to use
// Laravel's database driver when neither the app profile nor the operator
// names any: the skeleton's.
const DefaultDatabaseConnection = "database"

// Router says where the jobs of each queue connection go back to. It is
// built once, by NewRouter, from the app profile and the operator's flags;
// the zero Router is NewRouter(nil, nil, nil).
type Router struct {
	routes map[string]Route
	// profile: the routes came from an app profile, which names every
	// queue connection the app has.
	profile bool
}

// NewRouter routes the app profile's queue connections (profile, by name;
// nil outside an app profile) and the connections named database queues
// (database: --database-connection; DefaultDatabaseConnection when neither
// names any). A database queue goes to jobs, the jobs table of another
// database (--jobs-dsn), or, when jobs is nil, to failed_jobs' own
// database; it wins over the profile's route of the same name.
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
	return rt
}

// For says where a job recorded on a queue connection goes back to. A
// connection the router does not know is not writable, and its jobs are
// skipped with the artisan command to run.
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

// pushRemote hands a batch's non-local moves to their backends, grouped by
// connection, in the batch's order.
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
// moves it refuses for reasons of their own, without keeping any of them.
type MoveProber interface {
	// ProbeMoves tries each move alone and returns, by index, why the
	// backend refuses it ("" for a move it takes); an error when the
	// refusal of the push is not about particular moves.
	ProbeMoves(ctx context.Context, moves []Move, now time.Time, pushErr error) ([]string, error)
}

// probeRefused turns a failed push into RejectedRows when the backend can
// name the moves it refused (a jobs table in another database): the batch
// then runs again without their rows, as for the local jobs table.
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

// StateReaderFor is what reads the jobs of a queue connection's route, or
// nil when its backend cannot say.
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
