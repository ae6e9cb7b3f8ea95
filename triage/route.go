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

func (s *Service) isDatabaseConnection(name string) bool {
	conns := s.DatabaseConnections
	if len(conns) == 0 && s.Routes == nil {
		conns = []string{DefaultDatabaseConnection}
	}
	for _, c := range conns {
		if c == name {
			return true
		}
	}
	return false
}

// RouteFor says where a job recorded on a queue connection goes back to.
// Connections named with --database-connection are database queues in the
// failed_jobs database (or the --jobs-dsn store); every other connection is
// routed by the app profile (Routes). A connection neither knows is not
// writable, and its jobs are skipped with the artisan command to run.
func (s *Service) RouteFor(connection string) Route {
	if s.isDatabaseConnection(connection) {
		if s.Jobs != nil {
			return Route{Connection: connection, Driver: DriverDatabase, Backend: s.Jobs}
		}
		return Route{Connection: connection, Driver: DriverDatabase, Local: true}
	}
	if r, ok := s.Routes[connection]; ok {
		r.Connection = connection
		return r
	}
	reason := fmt.Sprintf("connection %q is not a queue connection of this app's config/queue.php", connection)
	if s.Routes == nil {
		reason = fmt.Sprintf("connection %q is not a database queue (name database-driver connections with --database-connection)", connection)
	}
	return Route{Connection: connection, Reason: reason}
}

// hasRemote reports whether any route needs BatchParams.Push.
func (s *Service) hasRemote() bool {
	if s.Jobs != nil {
		return true
	}
	for _, r := range s.Routes {
		if r.Backend != nil && !r.Local {
			return true
		}
	}
	return false
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
		r := s.RouteFor(conn)
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

// databaseBackends are the routes to jobs tables a retry may write to.
func (s *Service) databaseBackends() []Route {
	var out []Route
	if s.Jobs != nil {
		out = append(out, Route{Driver: DriverDatabase, Backend: s.Jobs})
	} else if s.Store.Schema().HasJobs {
		out = append(out, Route{Driver: DriverDatabase, Local: true})
	}
	for _, r := range s.Routes {
		if r.Driver == DriverDatabase && r.Backend != nil && !r.Local {
			out = append(out, r)
		}
	}
	return out
}

// StateReaderFor is what reads the jobs of a queue connection's route, or
// nil when its backend cannot say.
func (s *Service) StateReaderFor(connection string) JobStateReader {
	r := s.RouteFor(connection)
	var v any = r.Backend
	if r.Local {
		v = s.Store
	}
	if jr, ok := v.(JobStateReader); ok {
		return jr
	}
	return nil
}
