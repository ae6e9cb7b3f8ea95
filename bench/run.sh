#!/usr/bin/env bash
# bench/run.sh — jobtriage's performance goals, measured in one run against
# the same persistent data. See bench/README.md.
#
#   bench/run.sh              # both servers, 10k and 1M
#   SIZES=10k bench/run.sh    # only the small databases
#   SERVERS=postgres RUNS=3 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PG_SERVER=${PG_SERVER:-"postgres://postgres@127.0.0.1:5432/test?sslmode=disable"}
MY_SERVER=${MY_SERVER:-"mysql://root@127.0.0.1:3306/test"}
PG_HOST=${PG_HOST:-127.0.0.1} PG_USER=${PG_USER:-postgres}
MY_HOST=${MY_HOST:-127.0.0.1} MY_USER=${MY_USER:-root}
SERVERS=${SERVERS:-"postgres mysql"}
SIZES=${SIZES:-"10k 1m"}
RUNS=${RUNS:-5}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
RESULTS="$OUT/results-$(date -u +%Y%m%dT%H%M%SZ).tsv"

echo "== building" >&2
go build -o "$OUT/jobtriage" .
go build -o "$OUT/measure" ./bench/measure
go build -o "$OUT/seed" ./bench/seed
JT="$OUT/jobtriage"

rows_of() { case $1 in 10k) echo 10000 ;; 100k) echo 100000 ;; 1m) echo 1000000 ;; esac; }
dsn() { # dsn SERVER SIZE
	case $1 in
	postgres) echo "postgres://$PG_USER@$PG_HOST:5432/jobtriage_bench_$2?sslmode=disable" ;;
	mysql) echo "mysql://$MY_USER@$MY_HOST:3306/jobtriage_bench_$2" ;;
	esac
}
server_admin() { case $1 in postgres) echo "$PG_SERVER" ;; mysql) echo "$MY_SERVER" ;; esac; }
has_cmd() { "$JT" "$@" --help >/dev/null 2>&1; }

printf 'server\tsize\tlabel\truns\tmedian_s\tmin_s\tmax_rss_mib\n' | tee "$RESULTS"
measure() { # measure SERVER SIZE LABEL -- CMD…
	local server=$1 size=$2 label=$3
	shift 4
	local line
	if line=$("$OUT/measure" -n "$RUNS" -label "$label" -- "$@"); then
		printf '%s\t%s\t%s\n' "$server" "$size" "$line" | tee -a "$RESULTS"
	else
		printf '%s\t%s\t%s\tFAILED\n' "$server" "$size" "$label" | tee -a "$RESULTS"
	fi
}
skip() { printf '%s\t%s\t%s\tSKIPPED: %s\n' "$1" "$2" "$3" "$4" | tee -a "$RESULTS"; }

# The fairest hand-written equivalent of `failed --group`: read the same
# column prefixes the store reads (2 KB of payload, the top exception block),
# extract the job class and the top exception's header line, and group by
# them with count and first/last failure. It does less than jobtriage (no
# message normalisation, so ids are not folded), which favours SQL.
group_sql_postgres='SELECT substring(left(payload, 2048) from '"'"'"displayName":"((?:[^"\\]|\\.)*)"'"'"') AS class, split_part(split_part(exception, E'"'"'\n\nNext '"'"', -1), E'"'"'\n'"'"', 1) AS top, count(*), min(failed_at), max(failed_at) FROM failed_jobs GROUP BY 1, 2 ORDER BY 3 DESC'
group_sql_mysql='SELECT REGEXP_SUBSTR(LEFT(payload, 2048), '"'"'"displayName":"[^"]*"'"'"') AS class, SUBSTRING_INDEX(SUBSTRING_INDEX(exception, '"'"'\n\nNext '"'"', -1), '"'"'\n'"'"', 1) AS top, COUNT(*), MIN(failed_at), MAX(failed_at) FROM failed_jobs GROUP BY 1, 2 ORDER BY 3 DESC'

# --- a. first page: 1M vs 10k (goal: ratio <= 1.5) ------------------------
bench_first_page() {
	local s=$1 z=$2
	measure "$s" "$z" "failed --limit 50 --json" -- "$JT" failed --dsn "$(dsn "$s" "$z")" --limit 50 --json
}

# --- b. group over the whole table vs SQL GROUP BY (goal <= 2x, RSS < 100 MB)
bench_group() {
	local s=$1 z=$2 sql
	measure "$s" "$z" "failed --group --json" -- "$JT" failed --dsn "$(dsn "$s" "$z")" --group --json
	if [ "$s" = postgres ]; then sql=$group_sql_postgres; else sql=$group_sql_mysql; fi
	case $s in
	postgres) measure "$s" "$z" "SQL GROUP BY (psql)" -- psql -h "$PG_HOST" -U "$PG_USER" -d "jobtriage_bench_$z" -At -c "$sql" ;;
	mysql) measure "$s" "$z" "SQL GROUP BY (mariadb)" -- mariadb -h "$MY_HOST" -u "$MY_USER" -N -B "jobtriage_bench_$z" -e "$sql" ;;
	esac
}

# --- c. whole-table export (goal: peak RSS < 64 MB) -----------------------
bench_export() {
	local s=$1 z=$2
	measure "$s" "$z" "failed --ndjson --full" -- "$JT" failed --dsn "$(dsn "$s" "$z")" --ndjson --full
}

# --- later goals: slots that run once their commands exist ----------------
# d. retry all of 100k rows vs `php artisan queue:retry all` vs INSERT…SELECT+DELETE.
#    Each run consumes its rows, so it needs a fresh copy per run (PostgreSQL:
#    CREATE DATABASE … TEMPLATE jobtriage_bench_100k; MariaDB: mariadb-dump | mariadb).
#    For artisan the rows must unserialize in testdata/laravel-app: seed with
#    its APP_KEY and only scenarios whose classes need no missing models
#    (model-not-found, encrypted-disk-full, string-job, timeout-max-attempts,
#    closure) on the database connection.
bench_retry() {
	skip "$1" "$2" "retry all (100k)" "slot: jobtriage retry exists; per-run database copies not written yet"
}
# e. prune of 1M rows vs `php artisan queue:prune-failed` (also consumes rows).
bench_prune() {
	skip "$1" "$2" "prune (1M)" "slot: jobtriage prune exists; per-run database copies not written yet"
}
# f. monitor check and watch tick at 1M vs 10k.
bench_monitor() {
	local s=$1 z=$2
	if has_cmd monitor; then
		measure "$s" "$z" "monitor (one check)" -- "$JT" monitor --dsn "$(dsn "$s" "$z")" --json
	else
		skip "$s" "$z" "monitor" "jobtriage has no monitor command yet"
	fi
}
# g. TUI first screen at 1M vs 10k: measured by the tui package's Go
#    benchmark (BenchmarkFirstScreen) once it exists.
bench_tui() {
	skip "$1" "$2" "TUI first screen" "slot: go test -bench FirstScreen ./tui once it exists"
}

for s in $SERVERS; do
	for z in $SIZES; do
		echo "== seeding $s $z (reused when the row count is right)" >&2
		"$OUT/seed" -server "$(server_admin "$s")" -db "jobtriage_bench_$z" -rows "$(rows_of "$z")" >&2
	done
done

for s in $SERVERS; do
	for z in $SIZES; do
		echo "== $s $z" >&2
		bench_first_page "$s" "$z"
		bench_group "$s" "$z"
		bench_export "$s" "$z"
		bench_monitor "$s" "$z"
		bench_retry "$s" "$z"
		bench_prune "$s" "$z"
		bench_tui "$s" "$z"
	done
done
echo "results in $RESULTS" >&2
