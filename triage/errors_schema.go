package triage

import "errors"

// ErrSchema: a table exists but has a shape jobtriage cannot work with (a
// missing column, a uuid primary key, a jsonb payload, …). The message names
// the table, the column and what was expected; cmd maps it to the same exit
// code as ErrMissingTable.
var ErrSchema = errors.New("unusable schema")
