package filestore

import (
	"context"

	"github.com/jobtriage/jobtriage/triage"
)

// Inspect implements triage.Inspector: the file, and how many failed jobs
// it held when it was read.
func (s *Store) Inspect(context.Context) (triage.StoreFacts, error) {
	return triage.StoreFacts{File: s.path, FileJobs: len(s.entries), FileMissing: s.missing}, nil
}
