package follow

import (
	"context"
	"sort"

	"github.com/jobtriage/jobtriage/triage"
)

// ServiceSource looks at jobs through a service: each connection's route
// says where its jobs are (triage.Service.StateReaderFor), and failed_jobs
// says which are back, by uuid. The cost of one look is one state read per
// connection and queue and one uuid lookup per chunk of the unsettled jobs.
type ServiceSource struct {
	Svc *triage.Service
}

// Look implements Source. Jobs of a connection whose backend cannot say
// where its jobs are make the observation Partial: they settle only by
// failing again, or time out.
func (s ServiceSource) Look(ctx context.Context, jobs []triage.Pushed) (Observation, error) {
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
	conns := make([]string, 0, len(byConn))
	for c := range byConn {
		conns = append(conns, c)
	}
	sort.Strings(conns)
	for _, c := range conns {
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
		for u, v := range st.ByUUID {
			o.Queued[u] = v
		}
	}
	// failed_jobs last: a job that failed between the two reads is then
	// seen failed, never gone.
	found, err := s.Svc.Store.ResolveRefs(ctx, refs)
	if err != nil {
		return o, err
	}
	for r := range found {
		o.Failed[r.UUID] = true
	}
	return o, nil
}
