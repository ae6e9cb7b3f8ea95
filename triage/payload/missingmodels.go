package payload

import "github.com/tidwall/gjson"

// DeletesWhenModelMissing reports whether the payload's
// deleteWhenMissingModels key is true. A Laravel 13 worker reads that key
// from the payload: a job it names whose model is gone is deleted, with no
// failed_jobs row, and counts as a success in its batch. (12.x and older
// read the job class instead, which the payload does not show.) It reads
// only the top level up to the key, which Laravel writes before data.
func DeletesWhenModelMissing(raw []byte) bool {
	return truthy(gjson.GetBytes(raw, "deleteWhenMissingModels"))
}
