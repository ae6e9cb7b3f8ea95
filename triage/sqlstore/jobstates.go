package sqlstore

import (
	"context"
	"database/sql"
	"maps"
	"slices"

	"github.com/jobtriage/jobtriage/triage"
)

// jobStateHeadChars is how much of a jobs payload a state lookup reads:
// DatabaseQueue writes "uuid" as the payload's first key, as queuedUUIDs
// relies on too.
const jobStateHeadChars = 120

var (
	_ triage.JobStateReader = (*Store)(nil)
	_ triage.JobStateReader = (*JobsBackend)(nil)
)

// JobStates finds the given uuids (none: every one) in the jobs table, queue by queue: a row
// with reserved_at set is running, any other row waiting. Each queue costs
// one indexed statement reading at most triage.MaxJobStateScan payload
// heads, newest first; a longer queue makes the answer Partial.
func (s *Store) JobStates(ctx context.Context, p triage.JobStatesParams) (triage.JobStates, error) {
	out := triage.JobStates{ByUUID: map[string]triage.JobState{}}
	if err := s.requireJobs(); err != nil {
		return out, err
	}
	for _, q := range slices.Sorted(maps.Keys(p.UUIDs)) {
		want := map[string]bool{}
		for _, u := range p.UUIDs[q] {
			want[u] = true
		}
		partial, err := s.jobStatesOn(ctx, q, want, out.ByUUID)
		if err != nil {
			return out, err
		}
		out.Partial = out.Partial || partial
	}
	return out, nil
}

func (s *Store) jobStatesOn(ctx context.Context, queue string, want map[string]bool, into map[string]triage.JobState) (partial bool, err error) {
	q := "SELECT reserved_at, " + s.d.head("payload", jobStateHeadChars) + " FROM " + s.jobs +
		" WHERE queue = ? ORDER BY id DESC LIMIT " + itoa(triage.MaxJobStateScan+1)
	n := 0
	err = s.eachRow(ctx, s.db, s.db.Rebind(q), []any{queue}, func(rows *sql.Rows) error {
		if n++; n > triage.MaxJobStateScan {
			return nil // the one row past the scan: the answer is partial
		}
		var reserved sql.NullInt64
		var head string
		if err := rows.Scan(&reserved, &head); err != nil {
			return err
		}
		if u := payloadUUID(head); u != "" && (len(want) == 0 || want[u]) {
			into[u] = triage.JobWaiting
			if reserved.Valid {
				into[u] = triage.JobRunning
			}
		}
		return nil
	})
	return err == nil && n > triage.MaxJobStateScan, err
}
