// Package stress proves, against the real jobtriage binary and real
// databases, what retry promises in its help text: a SIGKILL at any moment
// never loses or doubles a job, two operators running `retry all` at once
// never move a job twice, and a database user without write privileges is
// refused with a clear error and loses nothing. For jobs whose connection
// is a Redis queue, `retry all` run from an app profile is SIGKILLed between
// Redis pushes and failed_jobs deletes and every uuid still ends exactly
// once, in Redis or in failed_jobs; `--jobs-dsn` killed between its push and
// delete queues nothing twice with `--jobs-ledger` and, without it, shows the
// documented window (a job a worker ran meanwhile is queued again).
// `prune --archive` SIGKILLed at random moments never deletes a row that is
// not in its archive, a completing run leaves each deleted row there exactly
// once and byte-identical, and `restore` gives the same rows back
// (archive_test.go); two `restore` runs of one archive at once, with or
// without the uuid unique index, put each row back once (restore_test.go).
//
// Faults and signals (signal_test.go, audit_test.go): SIGINT and SIGTERM at
// a [y/N] prompt on a pseudo-terminal exit 130 at once; SIGINT at random
// moments of a retry exits 130 every time; a SIGSTOPped PostgreSQL backend
// ends a command at its statement timeout + 3 s, and SIGINT ends it at once;
// a relay in front of PostgreSQL or MariaDB that goes silent mid-retry ends
// it with exit 5 within the bound its message states (frozen_test.go);
// flush on SQLite files named with %XX or '#' changes exactly that file; a
// SIGKILLed retry leaves its audit intent line; a retry with a 64 KB tmpfs
// as TMPDIR completes and audits every id.
//
// The package holds tests only. They seed 100,000 failed jobs per database
// and take minutes, so they run only when JOBTRIAGE_STRESS=1 or CI is set;
// the databases are those of triage/sqlstore/sqltest (local servers by
// default, JOBTRIAGE_TEST_POSTGRES_DSN / JOBTRIAGE_TEST_MYSQL_DSN otherwise).
package stress
