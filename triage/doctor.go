package triage

import "context"

// Inspector is a store that describes itself for doctor, beyond Store:
// facts, not verdicts (internal/doctor turns them into checks and advice).
type Inspector interface {
	// Inspect gathers the store's facts; an error means the store could
	// not be asked at all (a database that stopped answering).
	Inspect(ctx context.Context) (StoreFacts, error)
}

// StoreFacts is what a failed-jobs store reports about itself. A SQL store
// sets Database, the file driver's File; a store that sets neither reports
// only that it opened.
type StoreFacts struct {
	Database *DatabaseFacts
	File     *FileFacts
}

// FileFacts describe the file failed-job driver's file.
type FileFacts struct {
	Path string
	// Jobs is the number of failed jobs the file holds; Missing, that it
	// does not exist yet.
	Jobs    int
	Missing bool
}

// DatabaseFacts describe a failed-jobs database.
type DatabaseFacts struct {
	// Endpoint names the database without its password.
	Endpoint string
	Schema   Schema
	// Server is the server's product and version ("postgres 16.2",
	// "SQLite 3.46.0").
	Server string
	// Rows is failed_jobs' row count when RowsKnown: exact, or a planner
	// estimate unless RowsExact. RowsErr says why it could not be read.
	Rows                 int64
	RowsKnown, RowsExact bool
	RowsErr              error
	// Indexes are the indexes worth adding; IndexesErr says why the
	// catalog could not be read.
	Indexes    []IndexAdvice
	IndexesErr error
	// Clock is the time zone of the server's now() and CURRENT_TIMESTAMP
	// ("" when unknown), ClockSetting where it comes from, and ClockAdvice
	// what a Clock other than the app's timezone changes on this dialect.
	Clock, ClockSetting, ClockAdvice string
}

// IndexAdvice is an index worth adding, with the statement that adds it.
type IndexAdvice struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
	Why     string   `json:"why"`
	SQL     string   `json:"sql"`
}

// Inspect returns the facts of the service's store; a store that is no
// Inspector reports none.
func (s *Service) Inspect(ctx context.Context) (StoreFacts, error) {
	if in, ok := s.Store.(Inspector); ok {
		return in.Inspect(ctx)
	}
	return StoreFacts{}, nil
}
