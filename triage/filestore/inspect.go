package filestore

import (
	"context"

	"github.com/jobtriage/jobtriage/triage"
)

// Inspect implements triage.Inspector: the file and the jobs it held when read.
func (s *Store) Inspect(context.Context) (triage.StoreFacts, error) {
	return triage.StoreFacts{File: s.path, FileJobs: len(s.entries), FileMissing: s.missing}, nil
}
