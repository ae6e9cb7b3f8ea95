// Package stress proves, against the real jobtriage binary and real
// databases, what retry promises in its help text: a SIGKILL at any moment
// never loses or doubles a job, two operators running `retry all` at once
// never move a job twice, and a database user without write privileges is
// refused with a clear error and loses nothing.
//
// The package holds tests only. They seed 100,000 failed jobs per database
// and take minutes, so they run only when JOBTRIAGE_STRESS=1 or CI is set;
// the databases are those of triage/sqlstore/sqltest (local servers by
// default, JOBTRIAGE_TEST_POSTGRES_DSN / JOBTRIAGE_TEST_MYSQL_DSN otherwise).
package stress
