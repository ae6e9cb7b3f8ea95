package triage

import "context"

// Inspector is a store that describes itself for doctor, beyond Store:
// facts, not verdicts (internal/doctor turns them into checks and advice).
type Inspector interface {
	// Inspect gathers the store's facts; an error means the store could
	// not be asked at all (a database that stopped answering).
	Inspect(ctx context.Context) (StoreFacts, error)
}

// StoreFacts is what a failed-jobs store reports about itself: a SQL store
// sets Database, the file driver's store File (its path), FileJobs and
// FileMissing; a store that sets neither reports only that it opened.
type StoreFacts struct {
	Database    *DatabaseFacts
	File        string
	FileJobs    int
	FileMissing bool
}

// DatabaseFacts describe a failed-jobs database: Endpoint without its
// password, Server its product and version ("postgres 16.2"), failed_jobs'
// row count when RowsKnown (exact, or a planner estimate unless
// RowsExact), the indexes worth adding, and Clock, the zone of the
// server's now() and CURRENT_TIMESTAMP ("" when unknown), with
// ClockSetting where it comes from and ClockAdvice what a Clock other
// than the app's timezone changes on this dialect. RowsErr and IndexesErr
// say why a part could not be read.
type DatabaseFacts struct {
	Endpoint, Server                 string
	Schema                           Schema
	Rows                             int64
	RowsKnown, RowsExact             bool
	RowsErr, IndexesErr              error
	Indexes                          []IndexAdvice
	Clock, ClockSetting, ClockAdvice string
}

// IndexAdvice is an index worth adding, with the statement that adds it.
type IndexAdvice struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
	Why     string   `json:"why"`
	SQL     string   `json:"sql"`
}

// Inspect returns the facts of the service's store, if it is an Inspector.
func (s *Service) Inspect(ctx context.Context) (StoreFacts, error) {
	if in, ok := s.Store.(Inspector); ok {
		return in.Inspect(ctx)
	}
	return StoreFacts{}, nil
}
