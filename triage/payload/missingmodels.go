package payload

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// deleteWhenMissingModelsKey is the key as json_encode writes it.
const deleteWhenMissingModelsKey = `"deleteWhenMissingModels"`

// DeletesWhenModelMissing reports whether the payload's
// deleteWhenMissingModels key is true. A Laravel 13 worker reads that key
// from the payload: a job it names whose model is gone is deleted, with no
// failed_jobs row, and counts as a success in its batch. (12.x and older
// read the job class instead, which the payload does not show.) A retry
// asks it of every row, so a payload without the key as json_encode writes
// it (all before 13) is answered by a byte search, not a parse.
func DeletesWhenModelMissing(raw []byte) bool {
	if !bytes.Contains(raw, []byte(deleteWhenMissingModelsKey)) {
		return false
	}
	return truthy(gjson.GetBytes(raw, "deleteWhenMissingModels"))
}
