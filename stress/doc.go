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
//
// The package holds tests only. They seed 100,000 failed jobs per database
// and take minutes, so they run only when JOBTRIAGE_STRESS=1 or CI is set;
// the databases are those of triage/sqlstore/sqltest (local servers by
// default, JOBTRIAGE_TEST_POSTGRES_DSN / JOBTRIAGE_TEST_MYSQL_DSN otherwise).
package stress
