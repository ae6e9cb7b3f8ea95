package appprofile

import "github.com/jobtriage/jobtriage/triage/redact"

// scrubSecret masks secret in s by structure, the rule documented in package
// redact: a DSN's password (URL user info, password= and DB_PASSWORD= fields,
// JSON "password") is masked wherever it stands and however it is escaped;
// the words of a message are never touched; elsewhere a literal occurrence
// is masked only as a whole token, and only when the secret contains a
// character other than a letter, digit or '_', or has at least
// redact.MinBareLength characters and is not letters only. So DB_PASSWORD=e
// or Sail's "password" leave "database", "does not exist" and "password
// authentication failed" readable.
func scrubSecret(s, secret string) string { return redact.Text(s, secret) }
