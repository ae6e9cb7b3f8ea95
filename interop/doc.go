// Package interop holds jobtriage's end-to-end tests against a real Laravel
// 8.83 application (testdata/laravel-app): real workers write failed_jobs rows
// on SQLite, PostgreSQL and MariaDB, the jobtriage binary must report exactly
// what the app's manifest says, and jobs it re-queues must run on a real worker.
//
// The tests run when JOBTRIAGE_INTEROP=1 or CI is set; then a missing php or
// an unreachable database fails them instead of skipping. PostgreSQL and
// MariaDB are reached through JOBTRIAGE_TEST_POSTGRES_DSN /
// JOBTRIAGE_TEST_MYSQL_DSN, defaulting to the local servers as the storage
// tests do; the Redis queue tests use the Redis server at
// JOBTRIAGE_TEST_REDIS_ADDR (default 127.0.0.1:6379) under a key prefix of
// their own. JOBTRIAGE_INTEROP_EXPORT=1 rewrites
// testdata/laravel-rows/<dialect>.json (and redis-<dialect>.json).
package interop
