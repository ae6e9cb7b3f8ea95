#!/usr/bin/env bash
# bench/redis_retry.sh — `retry all` of Redis-bound failed jobs, measured in
# one run against `php artisan queue:retry all` (testdata/laravel-app with
# QUEUE_CONNECTION=redis) and a hand-written baseline (bench/redisbaseline:
# plain RPUSH pipelines, then DELETE, no exactly-once). See bench/README.md,
# "Retry into Redis".
#
#   bench/redis_retry.sh                          # both servers, 100k rows
#   SERVERS=postgres RUNS=1 ARTISAN=0 bench/redis_retry.sh
#
# Every measured run gets a fresh copy of the source database (not timed)
# and its own Redis key prefix; the keys are checked and deleted afterwards.
# Wall time, CPU time and peak RSS come from `/usr/bin/time -v`.
#
# FLOOR=1 (the default) also times one server-side `DELETE FROM failed_jobs`
# of the same rows through the server's own client: no row leaves the
# server, nothing is pushed. No retry that deletes its rows can be faster
# than that on the same server, so it bounds every ratio to artisan.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_HOST=${PG_HOST:-127.0.0.1} PG_USER=${PG_USER:-postgres}
MY_HOST=${MY_HOST:-127.0.0.1} MY_USER=${MY_USER:-root}
PG_SERVER=${PG_SERVER:-"postgres://$PG_USER@$PG_HOST:5432/test?sslmode=disable"}
MY_SERVER=${MY_SERVER:-"mysql://$MY_USER@$MY_HOST:3306/test"}
REDIS_HOST=${REDIS_HOST:-127.0.0.1} REDIS_PORT=${REDIS_PORT:-6379}
SERVERS=${SERVERS:-"postgres mysql"}
ROWS=${ROWS:-100000}     # rows retried (the first ids of the source)
RUNS=${RUNS:-3}          # runs of jobtriage and of the baseline (median)
ARTISAN=${ARTISAN:-1}    # 0: skip artisan; it runs once
ARTISAN_ROWS=${ARTISAN_ROWS:-$ROWS}
FLOOR=${FLOOR:-1}        # 0: skip the server-side DELETE floor
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RESULTS="$OUT/redis-retry-$(date -u +%Y%m%dT%H%M%SZ).tsv"

# Source: jobtriage_bench_100k (bench/run.sh's retry data: database-connection
# rows of demo scenarios whose commands unserialize in
# testdata/laravel-app, payload ≈ 2 KB, exception ≈ 4 KB) turned into the rows
# RedisQueue jobs leave: connection "redis" and the payload with RedisQueue's
# "id" (32 characters) and the reserved JSON's "attempts" (1–3) appended, as
# queue-spec §4.1 describes. Rows whose command holds a ModelIdentifier are
# left out: the app now knows their job classes (App\Jobs\SyncInvoice,
# App\Notifications\InvoicePaid), so artisan restores their models, finds
# no App\Models\User and aborts the whole `queue:retry all`. The first
# rows are repeated under fresh uuids up to ROWS_SOURCE. Made once per server
# and reused; ids run 1..ROWS_SOURCE.
ROWS_SOURCE=100000
BASE_DB=jobtriage_bench_100k
SRC_DB=jobtriage_bench_redis_100k
COPY_DB=jobtriage_bench_redis_copy
APP_DIR=$PWD/testdata/laravel-app
DEMO_APP_KEY=base64:am9idHJpYWdlLWRlbW8tYXBwLWtleS1ub3QtcmVhbCE= # demo.DemoAppKey seals the rows

echo "== building" >&2
go build -o "$OUT/jobtriage" .
go build -o "$OUT/seed" ./bench/seed
go build -o "$OUT/redisbaseline" ./bench/redisbaseline
JT=$OUT/jobtriage

pg() { psql -h "$PG_HOST" -U "$PG_USER" -X -q -v ON_ERROR_STOP=1 "$@"; }
my() { mariadb -h "$MY_HOST" -u "$MY_USER" "$@"; }
rc() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" "$@"; }
server_admin() { case $1 in postgres) echo "$PG_SERVER" ;; mysql) echo "$MY_SERVER" ;; esac; }
copy_dsn() { case $1 in
	postgres) echo "postgres://$PG_USER@$PG_HOST:5432/$COPY_DB?sslmode=disable" ;;
	mysql) echo "mysql://$MY_USER@$MY_HOST:3306/$COPY_DB" ;;
	esac; }

make_source() { # make_source SERVER: $SRC_DB, unless it is already there
	local s=$1 keep need
	"$OUT/seed" -server "$(server_admin "$s")" -db $BASE_DB -rows 100000 -connections database \
		-scenarios model-not-found,encrypted-disk-full,string-job,timeout-max-attempts,closure >&2
	local cols="uuid, connection, queue, payload, exception, failed_at"
	local ok="SELECT count(*) FROM failed_jobs WHERE connection = 'redis' AND payload NOT LIKE '%ModelIdentifier%' AND payload NOT LIKE '%ImportFeed%'"
	case $s in
	postgres)
		if [ "$(pg -d postgres -Atc "SELECT count(*) FROM pg_database WHERE datname = '$SRC_DB'")" = 1 ] &&
			[ "$(pg -d $SRC_DB -Atc "$ok")" = $ROWS_SOURCE ]; then
			return 0
		fi
		echo "== $s: making $SRC_DB" >&2
		pg -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $SRC_DB" -c "CREATE DATABASE $SRC_DB TEMPLATE $BASE_DB"
		local redis="left(payload, -1) || ',\"id\":\"' || md5(uuid::text) || '\",\"attempts\":' || (1 + id % 3) || '}'"
		pg -d $SRC_DB -c "CREATE TABLE keep AS SELECT * FROM failed_jobs WHERE payload NOT LIKE '%ModelIdentifier%' AND payload NOT LIKE '%ImportFeed%'" \
			-c "TRUNCATE failed_jobs RESTART IDENTITY" \
			-c "INSERT INTO failed_jobs ($cols) SELECT uuid, 'redis', queue, $redis, exception, failed_at FROM keep ORDER BY id" \
			-c "INSERT INTO failed_jobs ($cols) SELECT nu, 'redis', queue, replace(${redis//md5(uuid::text)/md5(nu)}, uuid, nu), exception, failed_at
				FROM (SELECT gen_random_uuid()::text AS nu, * FROM keep ORDER BY id LIMIT $ROWS_SOURCE - (SELECT count(*) FROM keep)) t ORDER BY id" \
			-c "DROP TABLE keep" -c "VACUUM FULL ANALYZE failed_jobs" ;;
	mysql)
		if [ "$(my -N -B -e "SELECT count(*) FROM information_schema.tables WHERE table_schema = '$SRC_DB' AND table_name = 'failed_jobs'")" = 1 ] &&
			[ "$(my -N -B $SRC_DB -e "$ok")" = $ROWS_SOURCE ]; then
			return 0
		fi
		echo "== $s: making $SRC_DB" >&2
		my -e "DROP DATABASE IF EXISTS $SRC_DB; CREATE DATABASE $SRC_DB CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
		for t in failed_jobs jobs job_batches; do
			my -e "CREATE TABLE $SRC_DB.$t LIKE $BASE_DB.$t"
		done
		my -e "INSERT INTO $SRC_DB.jobs SELECT * FROM $BASE_DB.jobs"
		local redis="CONCAT(LEFT(payload, CHAR_LENGTH(payload) - 1), ',\"id\":\"', MD5(uuid), '\",\"attempts\":', 1 + id % 3, '}')"
		local keep="FROM $BASE_DB.failed_jobs f WHERE payload NOT LIKE '%ModelIdentifier%' AND payload NOT LIKE '%ImportFeed%'"
		local keep_n
		keep_n=$(my -N -B -e "SELECT count(*) $keep")
		my -e "INSERT INTO $SRC_DB.failed_jobs ($cols) SELECT uuid, 'redis', queue, $redis, exception, failed_at $keep ORDER BY id"
		my -e "INSERT INTO $SRC_DB.failed_jobs ($cols) SELECT nu, 'redis', queue, REPLACE(${redis//MD5(uuid)/MD5(nu)}, uuid, nu), exception, failed_at
			FROM (SELECT UUID() AS nu, f.* $keep ORDER BY id LIMIT $((ROWS_SOURCE - keep_n))) t ORDER BY id"
		my $SRC_DB -e "ANALYZE TABLE failed_jobs" >/dev/null ;;
	esac
}

restore() { # restore SERVER ROWS: $COPY_DB := $SRC_DB with its first ROWS failed_jobs rows
	local s=$1 rows=$2 t
	# Not "id <= ROWS": InnoDB's INSERT … SELECT leaves gaps in the ids.
	case $s in
	postgres)
		pg -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $COPY_DB" -c "CREATE DATABASE $COPY_DB TEMPLATE $SRC_DB"
		pg -d $COPY_DB -c "DELETE FROM failed_jobs WHERE id > (SELECT id FROM failed_jobs ORDER BY id OFFSET $rows - 1 LIMIT 1)" \
			-c "VACUUM ANALYZE failed_jobs" ;;
	mysql)
		my -e "DROP DATABASE IF EXISTS $COPY_DB; CREATE DATABASE $COPY_DB CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
		for t in failed_jobs jobs job_batches; do
			my -e "CREATE TABLE $COPY_DB.$t LIKE $SRC_DB.$t; INSERT INTO $COPY_DB.$t SELECT * FROM $SRC_DB.$t $([ $t = failed_jobs ] && echo "ORDER BY id LIMIT $rows")"
		done
		my -e "ANALYZE TABLE $COPY_DB.failed_jobs" >/dev/null ;;
	esac
}
drop_copy() { case $1 in
	postgres) pg -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $COPY_DB" ;;
	mysql) my -e "DROP DATABASE IF EXISTS $COPY_DB" ;;
	esac; }
failed_left() { case $1 in
	postgres) pg -d $COPY_DB -Atc "SELECT count(*) FROM failed_jobs" ;;
	mysql) my -N -B $COPY_DB -e "SELECT count(*) FROM failed_jobs" ;;
	esac; }

# queued PREFIX: "jobs notify" summed over the prefix's queue lists.
queued() {
	local p=$1 k jobs=0 notify=0 n
	while IFS= read -r k; do
		[ -z "$k" ] && continue
		n=$(rc llen "$k")
		case $k in *:notify) notify=$((notify + n)) ;; *) jobs=$((jobs + n)) ;; esac
	done < <(rc --scan --pattern "${p}queues:*")
	echo "$jobs $notify"
}
drop_prefix() { rc --scan --pattern "$1*" | xargs -r -n 1000 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" unlink >/dev/null; }

# env_for SERVER PREFIX: the app's environment (testdata/laravel-app reads
# DB_* and REDIS_*), clean of the caller's.
env_for() {
	local conn=pgsql port=5432 host=$PG_HOST user=$PG_USER
	if [ "$1" = mysql ]; then conn=mysql port=3306 host=$MY_HOST user=$MY_USER; fi
	ENVV=(env -i -C "$APP_DIR" PATH="$PATH" HOME="$HOME" APP_ENV=testing APP_KEY="$DEMO_APP_KEY"
		DB_CONNECTION=$conn DB_HOST="$host" DB_PORT=$port DB_DATABASE=$COPY_DB DB_USERNAME="$user" DB_PASSWORD=
		QUEUE_CONNECTION=redis REDIS_HOST="$REDIS_HOST" REDIS_PORT="$REDIS_PORT" REDIS_PREFIX="$2"
		INTEROP_STORAGE="$OUT/laravel-storage")
}

# wall_rss FILE: "seconds rss_mib cpu_seconds" from /usr/bin/time -v's
# report (cpu: user + system of the command itself; on a loaded machine the
# wall time says more about the other processes than about the command).
wall_rss() {
	awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; w = s }
		/Maximum resident set size/ { r = $2 / 1024 }
		/User time \(seconds\)|System time \(seconds\)/ { c += $2 }
		END { printf "%.3f %.1f %.2f\n", w, r, c }' "$1"
}

printf 'server\trows\tcommand\truns\tmedian_s\tmin_s\tmax_s\tpeak_rss_mib\tmedian_cpu_s\n' | tee "$RESULTS"
# bench SERVER ROWS LABEL RUNS KIND: KIND is jobtriage, baseline or artisan.
bench() {
	local s=$1 rows=$2 label=$3 runs=$4 kind=$5 i prefix tf times="" cpus="" rss=0 w r c q load
	mkdir -p "$OUT/laravel-storage"
	for ((i = 1; i <= runs; i++)); do
		restore "$s" "$rows"
		if [ "$(failed_left "$s")" != "$rows" ]; then
			echo "$COPY_DB holds $(failed_left "$s") failed_jobs rows, want $rows" >&2
			exit 1
		fi
		prefix="jobtriage_bench_${s}_${kind}_$$_${i}:"
		drop_prefix "$prefix"
		env_for "$s" "$prefix"
		tf=$(mktemp)
		load=$(cut -d' ' -f1 /proc/loadavg)
		case $kind in
		jobtriage) /usr/bin/time -v -o "$tf" "${ENVV[@]}" "$JT" retry all --yes --retry-until 1h >/dev/null ;;
		baseline) /usr/bin/time -v -o "$tf" "$OUT/redisbaseline" -dsn "$(copy_dsn "$s")" -redis "$REDIS_HOST:$REDIS_PORT" -prefix "$prefix" >/dev/null ;;
		artisan) /usr/bin/time -v -o "$tf" "${ENVV[@]}" php artisan queue:retry all >/dev/null ;;
		floor) case $s in
			postgres) /usr/bin/time -v -o "$tf" psql -h "$PG_HOST" -U "$PG_USER" -X -q -d $COPY_DB -c "DELETE FROM failed_jobs" ;;
			mysql) /usr/bin/time -v -o "$tf" mariadb -h "$MY_HOST" -u "$MY_USER" $COPY_DB -e "DELETE FROM failed_jobs" ;;
			esac ;;
		esac
		read -r w r c < <(wall_rss "$tf")
		rm -f "$tf"
		q=$(queued "$prefix")
		echo "   $s $rows $label run $i: ${w} s, cpu ${c} s, ${r} MiB, load ${load} at start, failed_jobs left $(failed_left "$s"), Redis jobs/notify ${q/ //}" >&2
		drop_prefix "$prefix"
		times+="$w"$'\n'
		cpus+="$c"$'\n'
		rss=$(awk -v a="$rss" -v b="$r" 'BEGIN { print (b > a) ? b : a }')
	done
	local cpu
	cpu=$(sort -g <<<"${cpus%$'\n'}" | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	sort -g <<<"${times%$'\n'}" | awk -v s="$s" -v n="$rows" -v l="$label" -v runs="$runs" -v rss="$rss" -v cpu="$cpu" '
		{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t%s\n", s, n, l, runs, m, v[1], v[NR], rss, cpu }' | tee -a "$RESULTS"
}

for s in $SERVERS; do
	echo "== $s: source $SRC_DB" >&2
	make_source "$s"
	bench "$s" "$ROWS" "jobtriage retry all --yes --retry-until 1h" "$RUNS" jobtriage
	bench "$s" "$ROWS" "baseline RPUSH pipelines + DELETE" "$RUNS" baseline
	if [ "$FLOOR" = 1 ]; then
		bench "$s" "$ROWS" "floor: one server-side DELETE FROM failed_jobs" "$RUNS" floor
	fi
	if [ "$ARTISAN" = 1 ]; then
		bench "$s" "$ARTISAN_ROWS" "php artisan queue:retry all" 1 artisan
	fi
	drop_copy "$s"
done
echo "results in $RESULTS" >&2
