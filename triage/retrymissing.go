package triage

import "github.com/jobtriage/jobtriage/triage/payload"

// countMissingModels counts a planned row whose payload has
// deleteWhenMissingModels true (RetryResult.DeleteWhenMissingModels): on
// Laravel 13 its retry vanishes without a failure row if its model is gone,
// which a dry run says.
func (r *RetryResult) countMissingModels(row *FailedRow) {
	if payload.DeletesWhenModelMissing(row.Payload) {
		r.DeleteWhenMissingModels++
	}
}
