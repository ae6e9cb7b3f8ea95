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
GOALS=${GOALS:-"first_page group export monitor tui retry prune"}
wants() { [[ " $GOALS " == *" $1 "* ]]; }
mkdir -p "$OUT"
RESULTS="$OUT/results-$(date -u +%Y%m%dT%H%M%SZ).tsv"

echo "== building" >&2
go build -o "$OUT/jobtriage" .
go build -o "$OUT/measure" ./bench/measure
go build -o "$OUT/seed" ./bench/seed
go build -o "$OUT/firstscreen" ./bench/firstscreen
go build -o "$OUT/watchtick" ./bench/watchtick
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

# --- helpers for the goals that consume their rows -------------------------
# Each measured run gets a fresh copy, $COPY_DB, of a pristine database; the
# copy is not timed and is dropped at the end.
COPY_DB=jobtriage_bench_copy
APP_DIR=$PWD/testdata/laravel-app
DEMO_APP_KEY=base64:am9idHJpYWdlLWRlbW8tYXBwLWtleS1ub3QtcmVhbCE= # demo.DemoAppKey seals the rows
PG_LOG=${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}
pg() { psql -h "$PG_HOST" -U "$PG_USER" -X -q -v ON_ERROR_STOP=1 "$@"; }
my() { mariadb -h "$MY_HOST" -u "$MY_USER" "$@"; }
copy_dsn() { case $1 in
	postgres) echo "postgres://$PG_USER@$PG_HOST:5432/$COPY_DB?sslmode=disable" ;;
	mysql) echo "mysql://$MY_USER@$MY_HOST:3306/$COPY_DB" ;;
	esac; }
restore() { # restore SERVER SOURCE_DB [ROWS]: $COPY_DB := SOURCE_DB, failed_jobs cut to ids <= ROWS
	local s=$1 src=$2 rows=${3:-} t
	case $s in
	postgres)
		pg -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $COPY_DB" -c "CREATE DATABASE $COPY_DB TEMPLATE $src"
		if [ -n "$rows" ]; then pg -d "$COPY_DB" -c "DELETE FROM failed_jobs WHERE id > $rows" -c "VACUUM ANALYZE failed_jobs"; fi ;;
	mysql)
		my -e "DROP DATABASE IF EXISTS $COPY_DB; CREATE DATABASE $COPY_DB CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
		for t in failed_jobs jobs job_batches; do
			my -e "CREATE TABLE $COPY_DB.$t LIKE $src.$t; INSERT INTO $COPY_DB.$t SELECT * FROM $src.$t $([ "$t" = failed_jobs ] && [ -n "$rows" ] && echo "WHERE id <= $rows")"
		done
		my -e "ANALYZE TABLE $COPY_DB.failed_jobs" >/dev/null ;;
	esac
}
drop_copy() { case $1 in
	postgres) pg -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $COPY_DB" ;;
	mysql) my -e "DROP DATABASE IF EXISTS $COPY_DB" ;;
	esac; }
copy_count() { # copy_count SERVER TABLE
	case $1 in
	postgres) pg -d "$COPY_DB" -Atc "SELECT count(*) FROM $2" ;;
	mysql) my -N -B "$COPY_DB" -e "SELECT count(*) FROM $2" ;;
	esac; }
# artisan_cmd SERVER: ARTISAN := php artisan in testdata/laravel-app against
# $COPY_DB, in a clean environment (a developer's DB_* must not leak in).
artisan_cmd() {
	local conn=pgsql port=5432 host=$PG_HOST user=$PG_USER
	if [ "$1" = mysql ]; then conn=mysql port=3306 host=$MY_HOST user=$MY_USER; fi
	ARTISAN=(env -i PATH="$PATH" HOME="$HOME" APP_ENV=testing APP_KEY="$DEMO_APP_KEY"
		DB_CONNECTION=$conn DB_HOST="$host" DB_PORT=$port DB_DATABASE=$COPY_DB DB_USERNAME="$user" DB_PASSWORD=
		INTEROP_STORAGE="$PWD/$OUT/laravel-storage" php "$APP_DIR/artisan")
}
# consumed SERVER SIZE LABEL RUNS SOURCE_DB ROWS -- CMD…: RUNS times, restore
# a fresh copy (not timed), then time CMD once; one result line with the
# median and min of the runs and the peak RSS over them. After each run the
# rows left in failed_jobs go to stderr (0 for retry, ~0 for prune).
consumed() {
	local s=$1 z=$2 label=$3 runs=$4 src=$5 rows=$6 i line times="" rss=0 r p0 t0 purged left
	shift 7
	for ((i = 0; i < runs; i++)); do
		restore "$s" "$src" "$rows"
		before_run "$s"
		p0=""
		if [ -n "$PURGE_WAIT" ] && [ "$s" = mysql ] && [ -n "$rows" ]; then
			p0=$(purge_count)
			t0=$(date +%s.%N)
		fi
		if ! line=$("$OUT/measure" -n 1 -warmup 0 -label "$label" -- "$@"); then
			printf '%s\t%s\t%s\tFAILED\n' "$s" "$z" "$label" | tee -a "$RESULTS"
			after_run "$s" "$label"
			return 0
		fi
		purged=""
		if [ -n "$p0" ]; then
			for _ in $(seq 1500); do # at most 5 min
				[ $(($(purge_count) - p0)) -ge "$rows" ] && break
				sleep 0.2
			done
			purged=", purge of its deletes done $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s after its start"
			printf '%s\t%s\t%s\tuntil purged s %s\n' "$s" "$z" "$label" "${purged//[^0-9.]/}" | tee -a "$RESULTS"
		fi
		after_run "$s" "$label"
		left=$(copy_count "$s" failed_jobs)
		echo "   $label run $((i + 1)): $(cut -f3 <<<"$line") s$purged, failed_jobs left $left, jobs $(copy_count "$s" jobs)" >&2
		if [ -n "$MUST_EMPTY" ] && [ "$left" != 0 ]; then
			# A tool that left rows did not do the compared work (artisan
			# aborts at the first job it cannot restore): no figure.
			printf '%s\t%s\t%s\tINCOMPLETE: %s rows left in failed_jobs\n' "$s" "$z" "$label" "$left" | tee -a "$RESULTS"
			return 0
		fi
		times+="$(cut -f3 <<<"$line")"$'\n'
		r=$(cut -f5 <<<"$line")
		rss=$(awk -v a="$rss" -v b="$r" 'BEGIN { print (b > a) ? b : a }')
	done
	printf '%s\t%s\t%s\t%d\t%s\t%s\t%s\n' "$s" "$z" "$label" "$runs" \
		"$(sort -g <<<"${times%$'\n'}" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')" \
		"$(sort -g <<<"${times%$'\n'}" | head -1)" "$rss" | tee -a "$RESULTS"
}
# MariaDB purges deleted rows in the background once their transaction has
# committed. A move in one transaction (the SQL baseline) leaves all of that
# work for after it exits; jobtriage, committing per batch, does much of it
# while it runs. With PURGE_WAIT=1 each consumed MariaDB run also reports
# when the purge of its deletes was done (InnoDB's purge_del_mark_records
# counter, switched on for the run), which compares the work of both fairly.
PURGE_WAIT=${PURGE_WAIT:-}
MUST_EMPTY="" # set by bench_retry: every run must empty failed_jobs
purge_count() { my -N -B -e "SELECT count FROM information_schema.innodb_metrics WHERE name = 'purge_del_mark_records'"; }
if [ -n "$PURGE_WAIT" ] && [[ " $SERVERS " == *" mysql "* ]]; then
	my -e "SET GLOBAL innodb_monitor_enable = 'purge_del_mark_records'"
fi

# Statement logging around a run, for the prune batches: PostgreSQL logs
# every statement of the copy database with its duration (a setting of that
# database only); MariaDB's slow log catches statements of at least
# SLOW_S seconds (a server-wide setting, restored afterwards).
SLOW_S=${SLOW_S:-0.05}
LOG_BATCHES=""
before_run() {
	[ -z "$LOG_BATCHES" ] && return 0
	case $1 in
	postgres)
		pg -d postgres -c "ALTER DATABASE $COPY_DB SET log_min_duration_statement = 0"
		LOG_FROM=$(stat -c %s "$PG_LOG") ;;
	mysql)
		MY_SLOW_FILE=$(my -N -B -e "SELECT IF(@@slow_query_log_file LIKE '/%', @@slow_query_log_file, CONCAT(@@datadir, @@slow_query_log_file))")
		MY_SLOW_OLD=$(my -N -B -e "SELECT CONCAT(@@global.slow_query_log, ' ', @@global.long_query_time)")
		LOG_FROM=$(stat -c %s "$MY_SLOW_FILE" 2>/dev/null || echo 0)
		# the server creates the file; restore the settings even if enabling fails
		my -e "SET GLOBAL long_query_time = $SLOW_S; SET GLOBAL slow_query_log = 1" ||
			my -e "SET GLOBAL slow_query_log = ${MY_SLOW_OLD% *}; SET GLOBAL long_query_time = ${MY_SLOW_OLD#* }" ;;
	esac
}
after_run() {
	[ -z "$LOG_BATCHES" ] && return 0
	local s=$1 label=$2 durs
	case $s in
	postgres)
		durs=$(tail -c +"$((LOG_FROM + 1))" "$PG_LOG" | grep "@$COPY_DB " | grep -i "execute [^:]*: DELETE FROM" |
			sed -n 's/.*duration: \([0-9.]*\) ms.*/\1/p' | awk '{ print $1 / 1000 }') ;;
	mysql)
		my -e "SET GLOBAL slow_query_log = ${MY_SLOW_OLD% *}; SET GLOBAL long_query_time = ${MY_SLOW_OLD#* }"
		durs=$(tail -c +"$((LOG_FROM + 1))" "$MY_SLOW_FILE" 2>/dev/null | awk -v db="$COPY_DB" '
			/^# Thread_id:/ { mine = index($0, "Schema: " db " ") > 0 }
			/^# Query_time:/ { qt = $3 }
			mine && toupper($0) ~ /^DELETE FROM/ { print qt }') ;;
	esac
	printf '%s\t%s\t%s\tbatches logged %s\tmax batch s %s\tthreshold %s\n' "$s" "-" "$label" \
		"$(grep -c . <<<"$durs" || true)" "$(if [ -n "$durs" ]; then sort -g <<<"$durs" | tail -1; else echo "< $SLOW_S"; fi)" \
		"$([ "$s" = postgres ] && echo "every statement" || echo "slow log >= ${SLOW_S}s")" | tee -a "$RESULTS"
}

# --- d. retry all: jobtriage vs php artisan queue:retry all vs one INSERT…SELECT+DELETE
# Source: jobtriage_bench_100k, seeded with only database-connection rows of
# the scenarios whose commands unserialize in testdata/laravel-app (artisan
# restores SerializesModels models of known classes — SyncInvoice,
# InvoicePaid; App\Models\* are not in the app — and ImportFeed's typed
# property; either aborts the whole queue:retry all). bench/seed reseeds a
# database seeded with other flags, so stale rows of those classes cannot
# linger, and a run that leaves rows in failed_jobs is reported INCOMPLETE,
# not timed. Goals: jobtriage ≥ 20× faster than artisan, within
# 3× of the SQL. artisan takes ~6.5 ms a row, so it is compared at
# RETRY_ARTISAN_ROWS (default 10000, the first ids of the same data).
RETRY_SOURCE=jobtriage_bench_100k
RETRY_ROWS=${RETRY_ROWS:-100000}
RETRY_ARTISAN_ROWS=${RETRY_ARTISAN_ROWS:-10000}
CONSUME_RUNS=${CONSUME_RUNS:-3}
retry_sql_postgres="BEGIN; INSERT INTO jobs (queue, payload, attempts, available_at, created_at) SELECT queue, payload, 0, extract(epoch from now())::int, extract(epoch from now())::int FROM failed_jobs ORDER BY id; DELETE FROM failed_jobs; COMMIT;"
retry_sql_mysql="BEGIN; INSERT INTO jobs (queue, payload, attempts, available_at, created_at) SELECT queue, payload, 0, UNIX_TIMESTAMP(), UNIX_TIMESTAMP() FROM failed_jobs ORDER BY id; DELETE FROM failed_jobs; COMMIT;"
bench_retry() {
	local s=$1 n
	MUST_EMPTY=1
	for n in $(printf '%s\n' "$RETRY_ARTISAN_ROWS" "$RETRY_ROWS" | sort -un); do
		local z=$((n / 1000))k
		consumed "$s" "$z" "retry all --yes" "$CONSUME_RUNS" $RETRY_SOURCE "$n" -- "$JT" retry all --yes --dsn "$(copy_dsn "$s")"
		case $s in
		postgres) consumed "$s" "$z" "SQL INSERT…SELECT+DELETE (psql)" "$CONSUME_RUNS" $RETRY_SOURCE "$n" -- psql -h "$PG_HOST" -U "$PG_USER" -X -q -d $COPY_DB -c "$retry_sql_postgres" ;;
		mysql) consumed "$s" "$z" "SQL INSERT…SELECT+DELETE (mariadb)" "$CONSUME_RUNS" $RETRY_SOURCE "$n" -- mariadb -h "$MY_HOST" -u "$MY_USER" $COPY_DB -e "$retry_sql_mysql" ;;
		esac
		if [ "$n" = "$RETRY_ARTISAN_ROWS" ]; then
			artisan_cmd "$s"
			consumed "$s" "$z" "php artisan queue:retry all" 1 $RETRY_SOURCE "$n" -- "${ARTISAN[@]}" queue:retry all
		fi
	done
	MUST_EMPTY=""
	drop_copy "$s"
}

# --- e. prune: every row older than --hours, at 1M (and 10k for RSS), with
# the delete statements' durations from the server's log; artisan
# queue:prune-failed against jobtriage at PRUNE_ARTISAN_SIZE on the same data.
PRUNE_HOURS=${PRUNE_HOURS:-1}
PRUNE_ARTISAN_SIZE=${PRUNE_ARTISAN_SIZE:-100k}
bench_prune() {
	local s=$1 z=$2 runs=$CONSUME_RUNS
	[ "$z" = 1m ] && runs=1
	LOG_BATCHES=1
	consumed "$s" "$z" "prune --hours $PRUNE_HOURS --yes" "$runs" "jobtriage_bench_$z" "" -- "$JT" prune --hours "$PRUNE_HOURS" --yes --dsn "$(copy_dsn "$s")"
	LOG_BATCHES=""
	drop_copy "$s"
}
bench_prune_artisan() {
	local s=$1 z=$PRUNE_ARTISAN_SIZE
	consumed "$s" "$z" "prune --hours $PRUNE_HOURS --yes" 1 "jobtriage_bench_$z" "" -- "$JT" prune --hours "$PRUNE_HOURS" --yes --dsn "$(copy_dsn "$s")"
	artisan_cmd "$s"
	consumed "$s" "$z" "php artisan queue:prune-failed --hours=$PRUNE_HOURS" 1 "jobtriage_bench_$z" "" -- "${ARTISAN[@]}" queue:prune-failed --hours="$PRUNE_HOURS"
	drop_copy "$s"
}

# --- f. monitor: one CLI check, and (bench/watchtick) a watch start, tick
# and check through the library, 1M vs 10k (goal: ratio <= 1.5).
bench_monitor() {
	local s=$1 z=$2 line
	measure "$s" "$z" "monitor --json (one check)" -- "$JT" monitor --dsn "$(dsn "$s" "$z")" --json
	"$OUT/watchtick" -n "$((RUNS * 2 + 1))" -dsn "$(dsn "$s" "$z")" | while IFS= read -r line; do
		printf '%s\t%s\t%s\n' "$s" "$z" "$line" | tee -a "$RESULTS"
	done
}

# --- g. TUI first screen (tui.FirstScreen, 120×40) via bench/firstscreen,
# 1M vs 10k (goal: ratio <= 1.5).
bench_tui() {
	local s=$1 z=$2 line
	if line=$("$OUT/firstscreen" -n "$RUNS" -dsn "$(dsn "$s" "$z")"); then
		printf '%s\t%s\t%s\n' "$s" "$z" "$line" | tee -a "$RESULTS"
	else
		printf '%s\t%s\t%s\tFAILED\n' "$s" "$z" "TUI first screen" | tee -a "$RESULTS"
	fi
}

for s in $SERVERS; do
	for z in $SIZES; do
		echo "== seeding $s $z (reused when the row count is right)" >&2
		"$OUT/seed" -server "$(server_admin "$s")" -db "jobtriage_bench_$z" -rows "$(rows_of "$z")" >&2
	done
	if wants retry || wants prune; then
		echo "== seeding $s 100k (database-connection rows artisan can unserialize)" >&2
		"$OUT/seed" -server "$(server_admin "$s")" -db jobtriage_bench_100k -rows 100000 -connections database \
			-scenarios model-not-found,encrypted-disk-full,string-job,timeout-max-attempts,closure >&2
	fi
done

for s in $SERVERS; do
	for z in $SIZES; do
		echo "== $s $z" >&2
		if wants first_page; then bench_first_page "$s" "$z"; fi
		if wants group; then bench_group "$s" "$z"; fi
		if wants export; then bench_export "$s" "$z"; fi
		if wants monitor; then bench_monitor "$s" "$z"; fi
		if wants tui && [ "$s" = postgres ]; then bench_tui "$s" "$z"; fi
		if wants prune; then bench_prune "$s" "$z"; fi
	done
	if wants retry; then bench_retry "$s"; fi
	if wants prune; then bench_prune_artisan "$s"; fi
done
echo "results in $RESULTS" >&2
