package follow

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage"
)

// ServiceSource looks at jobs through a service: each connection's route
// says where its jobs are (triage.Service.StateReaderFor), and failed_jobs
// which are back, by uuid. A failed_jobs table without a uuid column
// (Laravel 7, or failed.driver "database") records a job that failed again
// as a new row whose payload carries the uuid: there the source reads each
// row added since it was made once.
type ServiceSource struct {
	Svc *triage.Service

	mu     sync.Mutex
	legacy bool             // failed_jobs has no uuid column
	after  int64            // legacy: rows up to this id were read
	found  map[string]int64 // legacy: payload uuid → the newest row id with it
}

// legacyScanBatch is the rows a legacy look reads per statement.
const legacyScanBatch = 500

// NewServiceSource makes the source before a retry's first push: without a
// uuid column, jobs failing again are the rows after now's.
func NewServiceSource(ctx context.Context, svc *triage.Service) (*ServiceSource, error) {
	s := &ServiceSource{Svc: svc, legacy: svc.Store.Schema().IDMode != triage.IDModeUUID, found: map[string]int64{}}
	if !s.legacy {
		return s, nil
	}
	err := svc.Store.ScanFailed(ctx, triage.ScanParams{Limit: 1}, func(r *triage.FailedRow) error {
		s.after = r.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Look implements Source. Jobs of a connection whose backend cannot say
// where its jobs are make it Partial: they settle only by failing again.
func (s *ServiceSource) Look(ctx context.Context, jobs []triage.Pushed) (Observation, error) {
	o := Observation{Queued: map[string]triage.JobState{}, Failed: map[string]bool{}}
	byConn := map[string]map[string][]string{}
	refs := make([]triage.Ref, 0, len(jobs))
	for _, j := range jobs {
		if byConn[j.Connection] == nil {
			byConn[j.Connection] = map[string][]string{}
		}
		byConn[j.Connection][j.Queue] = append(byConn[j.Connection][j.Queue], j.UUID)
		refs = append(refs, triage.Ref{UUID: j.UUID})
	}
	for _, c := range slices.Sorted(maps.Keys(byConn)) {
		r := s.Svc.StateReaderFor(c)
		if r == nil {
			o.Partial = true
			continue
		}
		st, err := r.JobStates(ctx, triage.JobStatesParams{UUIDs: byConn[c]})
		if err != nil {
			return o, err
		}
		o.Partial = o.Partial || st.Partial
		maps.Copy(o.Queued, st.ByUUID)
	}
	// failed_jobs last: a job failing between the reads is then seen failed.
	if s.legacy {
		if err := s.readNewRows(ctx); err != nil {
			return o, err
		}
		s.mu.Lock()
		for _, j := range jobs {
			if _, ok := s.found[j.UUID]; ok {
				o.Failed[j.UUID] = true
			}
		}
		s.mu.Unlock()
		return o, nil
	}
	found, err := s.Svc.Store.ResolveRefs(ctx, refs)
	if err != nil {
		return o, err
	}
	for r := range found {
		o.Failed[r.UUID] = true
	}
	return o, nil
}

// readNewRows notes each payload uuid's newest row added since the last look.
func (s *ServiceSource) readNewRows(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Full: a listing's payload windows need not hold the uuid.
	return s.Svc.Store.ScanFailed(ctx, triage.ScanParams{Ascending: true, AfterID: s.after, BatchSize: legacyScanBatch, Full: true},
		func(r *triage.FailedRow) error {
			if u := gjson.GetBytes(r.Payload, "uuid").String(); u != "" {
				s.found[u] = r.ID
			}
			s.after = r.ID
			return nil
		})
}

// RefOf addresses the failed_jobs row of a job that failed again: by
// uuid, or on a table without a uuid column by the row a look found.
func (s *ServiceSource) RefOf(uuid string) triage.Ref {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.found[uuid]; ok && s.legacy {
		return triage.Ref{ID: id}
	}
	return triage.Ref{UUID: uuid}
}
