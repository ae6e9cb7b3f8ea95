package signature

// NormalizeReference lets the external corpus test compare against the
// reference implementation.
var NormalizeReference = normalizeReference
