// Package interop holds jobtriage's end-to-end tests against real Laravel
// applications: real workers write failed_jobs rows on SQLite, PostgreSQL and
// MariaDB, the jobtriage binary must report exactly what the app's manifest
// says, and jobs it re-queues must run on a real worker.
//
// Every case runs once per Laravel listed in JOBTRIAGE_INTEROP_LARAVEL
// (VERSION=PHP items, e.g. "8.83=php 10.48=/var/cache/jobtriage-laravel/trixie-php
// 13.31=/var/cache/jobtriage-laravel/sid-php"; unset means 8.83 on the host
// php), as subtests laravel=VERSION: 8.83 and 10.48 boot testdata/laravel-app,
// 13.31 testdata/laravel13-app (the 11+ skeleton, sharing the 8 app's jobs
// and commands). testdata/laravel-chroot/setup.sh builds the 10.48 and 13.31
// chroots and their php wrappers. A listed Laravel that cannot run fails.
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
