package interop

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below must load on hosts without zoneinfo, as they do in PHP

	"github.com/go-sql-driver/mysql"
	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// The app-profile interop proof: jobtriage, run with no flags inside a real
// Laravel 8.83 app, resolves the app profile as Laravel does. Each variant
// is a copy of testdata/laravel-app with its config edited (a literal
// timezone, a config cache that contradicts .env, a renamed failed table, a
// table prefix, a PostgreSQL schema, a MySQL socket-only user); real
// workers fail a few jobs; then jobtriage must list the rows
// `php artisan queue:failed` lists, with failed_at read in app.timezone,
// count for `prune --dry-run` exactly what `queue:prune-failed` deletes on
// a copy of the database, and let `monitor` see the fresh failures; where
// the variant moves the jobs table too (prefix, schema), `retry all` must
// put the rows back on it for a real worker.

const (
	// profilePruneHours is N of prune --hours N. With the rows placed at
	// N+1 h, N−1 h and 0 h before now in app.timezone, Laravel deletes one;
	// a tool reading the wall-clock text in another zone several hours off
	// counts 0 or 3 (expectPrune checks that per variant).
	profilePruneHours = 4
	// profileJobs is how many ChargeCard jobs each variant fails: enough for
	// one row older than the prune cut-off, one just inside it and one fresh.
	profileJobs = 3
	// profileFirstOrder is the first ChargeCard's order id.
	profileFirstOrder = 9001
	// profileMonitorWindow is monitor's --window; every fresh failure is
	// inside it, so --max-failed profileJobs must report unhealthy.
	profileMonitorWindow = "10m"
	// exitUnhealthy is jobtriage monitor's exit code for a crossed
	// threshold (cmd.ExitUnhealthy).
	exitUnhealthy = 8
	// profileDBPrefix names the server databases of these tests, one per
	// variant, apart from the other interop tests' databases so that they
	// run in parallel with them.
	profileDBPrefix = "jobtriage_interop_prof_"
	// laravelWallClock is how Laravel writes failed_at (§2.3).
	laravelWallClock = "2006-01-02 15:04:05"
)

// profileVariant is one app configuration the profile must resolve.
type profileVariant struct {
	name      string   // subtest name; also names the variant's databases
	databases []string // dialect names it runs on
	// tz is app.timezone as the variant configures it; decoyTZ is the zone
	// a tool reading the wrong source would use instead (UTC is always
	// checked too).
	tz, decoyTZ string
	// setup edits the copy, writes its .env, chooses the environment and
	// the jobtriage runs; it runs before interop:reset.
	setup func(t *testing.T, p *profileApp)
	// afterReset changes the fresh schema (optional).
	afterReset func(t *testing.T, p *profileApp)
	// retry: jobtriage retry all must also put the rows back where the
	// app's workers take them (the variant moves the jobs table), and a
	// real worker run them.
	retry bool
}

func TestProfileResolvesLikeLaravel(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	all := []string{"sqlite", "postgres", "mysql"}
	// Every app.timezone is hours away from UTC (and from the decoy), so
	// that failed_at read in the wrong zone misses the run, monitor's
	// window (west of UTC) and the prune count; expectPrune checks the
	// latter for each variant.
	variants := []profileVariant{
		{name: "timezone_west", databases: all, tz: "America/New_York", decoyTZ: "UTC", setup: literalTimezone},
		{name: "timezone_east", databases: all, tz: "Asia/Tokyo", decoyTZ: "UTC", setup: literalTimezone},
		// .env and the wrong environment say decoyTZ; the cache says tz.
		{name: "config_cache", databases: []string{"sqlite", "postgres"}, tz: "America/New_York", decoyTZ: "Asia/Tokyo", setup: configCacheOverDotenv},
		{name: "renamed_table", databases: all, tz: "America/Sao_Paulo", setup: renamedFailedTable, afterReset: renameFailedTable},
		{name: "table_prefix", databases: all, tz: "Europe/Kyiv", setup: tablePrefix, retry: true},
		{name: "pgsql_schema", databases: []string{"postgres"}, tz: "Australia/Sydney", setup: postgresSchema, retry: true},
		{name: "mysql_localhost_socket", databases: []string{"mysql"}, tz: "America/Los_Angeles", setup: mysqlLocalhostSocket},
	}
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				t.Parallel()
				for _, d := range profileDialects(t, v.name, v.databases) {
					t.Run(d.name, func(t *testing.T) {
						t.Parallel()
						runProfileVariant(t, bin, lv, v, d)
					})
				}
			})
		}
	})
}

// profileApp is one copy of the Laravel app on one database.
type profileApp struct {
	*laravelApp
	lv     laravelTarget
	v      profileVariant
	d      dialect
	dbName string // the server database ("" on SQLite)
	loc    *time.Location
	// sourceEnv is the environment that names the right database in real
	// variables (for a cached config: the one config:cache ran in); the
	// prune on a copy of the database runs in it with DB_DATABASE replaced.
	sourceEnv []string
	// cached: the app runs on bootstrap/cache/config.php.
	cached bool
	// runs are the jobtriage invocations to check; each sees the same rows.
	runs []triageRun
	// afterResetCheck verifies the schema the variant relies on (optional).
	afterResetCheck func(t *testing.T)
}

// triageRun is one way of running jobtriage in the app: a directory and
// an environment, and no flags.
type triageRun struct {
	label string
	dir   string
	env   []string
	// before runs first (the second config-cache run removes .env).
	before func(t *testing.T)
}

func runProfileVariant(t *testing.T, bin jobtriage, lv laravelTarget, v profileVariant, d dialect) {
	p := newProfileApp(t, lv, v, d)
	v.setup(t, p)
	if len(p.runs) == 0 {
		// The app's own environment: what the workers had, in a
		// subdirectory of the app (jobtriage walks up to artisan).
		p.runs = []triageRun{{label: "app env, cwd app/Jobs", dir: filepath.Join(p.dir, "app", "Jobs"), env: p.env}}
	}
	p.mustArtisan(t, "interop:reset")
	if v.afterReset != nil {
		v.afterReset(t, p)
	}
	if p.afterResetCheck != nil {
		p.afterResetCheck(t)
	}

	started := time.Now().Truncate(time.Second)
	p.dispatch(t)
	p.work(t)
	finished := time.Now()
	rows := p.artisanFailed(t)
	if len(rows) != profileJobs {
		t.Fatalf("php artisan queue:failed lists %d rows after the worker, want %d\nlaravel.log:\n%s", len(rows), profileJobs, p.log())
	}

	for _, r := range p.runs {
		if r.before != nil {
			r.before(t)
		}
		p.checkList(t, bin, r, rows, started, finished)
		p.checkMonitor(t, bin, r)
	}

	// Place the rows around the prune cut-off, in app.timezone, through
	// Laravel itself; they stay worker-written otherwise.
	p.ageRows(t, map[string]int{rows[0].uuid: profilePruneHours + 1, rows[1].uuid: profilePruneHours - 1})
	aged := p.artisanFailed(t)
	want := p.expectPrune(t, aged)
	for _, r := range p.runs {
		if got := p.triagePrune(t, bin, r); got != want {
			t.Errorf("[%s] jobtriage prune --hours %d --dry-run counts %d, Laravel deletes %d (app.timezone %s; failed_at %s)",
				r.label, profilePruneHours, got, want, v.tz, failedAtTexts(aged))
		}
	}
	if got := p.laravelPruneOnCopy(t); got != want {
		t.Errorf("php artisan queue:prune-failed --hours=%d deleted %d rows on the copy, expected %d", profilePruneHours, got, want)
	}
	if left := p.artisanFailed(t); len(left) != profileJobs {
		t.Errorf("the original database lost rows: %d left, want %d (prune --dry-run must not delete)", len(left), profileJobs)
	}
	if v.retry {
		p.checkRetry(t, bin, p.runs[0])
	}
}

// --- variants ---------------------------------------------------------

// literalTimezone writes 'timezone' => '<tz>' into config/app.php and sets
// APP_TIMEZONE=UTC in the environment, which the literal must beat.
func literalTimezone(t *testing.T, p *profileApp) {
	p.editConfig(t, "app.php", `'timezone' => env('APP_TIMEZONE', 'UTC'),`, fmt.Sprintf(`'timezone' => '%s',`, p.v.tz), 1)
	p.env = append(p.env, "APP_TIMEZONE=UTC")
	p.env = append(p.env, p.d.laravelEnv...)
	p.sourceEnv = p.env
}

// configCacheOverDotenv caches the config while the right database and
// timezone are real environment variables, with a .env naming a wrong
// database and zone. Laravel then reads only the cache, so the workers and
// jobtriage run without any DB_* variable. A second jobtriage run deletes
// .env and sets wrong DB_* and APP_TIMEZONE variables instead, and finds
// the cache at its default path without APP_CONFIG_CACHE.
func configCacheOverDotenv(t *testing.T, p *profileApp) {
	const cacheRel = "bootstrap/cache/config.php"
	if err := os.MkdirAll(filepath.Join(p.dir, "bootstrap", "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	wrong := wrongDatabase(t, p)
	p.writeDotenv(t, "DB_CONNECTION="+envValue(p.d.laravelEnv, "DB_CONNECTION"), "DB_DATABASE="+wrong, "APP_TIMEZONE="+p.v.decoyTZ)
	base := p.env
	// bootstrap/app.php moves the cache into INTEROP_STORAGE unless
	// APP_CONFIG_CACHE is set; the relative value is Laravel's own default
	// location (normalizeCachePath resolves it against the base path).
	cacheEnv := append(append(append([]string{}, base...), "APP_CONFIG_CACHE="+cacheRel, "APP_TIMEZONE="+p.v.tz), p.d.laravelEnv...)
	caching := *p.laravelApp
	caching.env = cacheEnv
	caching.mustArtisan(t, "config:cache")
	if _, err := os.Stat(filepath.Join(p.dir, cacheRel)); err != nil {
		t.Fatalf("config:cache did not write %s: %v", cacheRel, err)
	}
	p.cached = true
	p.sourceEnv = cacheEnv
	p.env = append(append([]string{}, base...), "APP_CONFIG_CACHE="+cacheRel)
	wrongEnv := append(append([]string{}, base...), "APP_TIMEZONE="+p.v.decoyTZ)
	for _, kv := range p.d.laravelEnv {
		if strings.HasPrefix(kv, "DB_DATABASE=") {
			kv = "DB_DATABASE=" + wrong
		}
		wrongEnv = append(wrongEnv, kv)
	}
	p.runs = []triageRun{
		{label: "cache + wrong .env, no DB_* env", dir: p.dir, env: p.env},
		{label: "cache, no .env, wrong DB_* env", dir: filepath.Join(p.dir, "config"), env: wrongEnv, before: func(t *testing.T) {
			if err := os.Remove(filepath.Join(p.dir, ".env")); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// wrongDatabase is a database the decoy settings point at: an empty SQLite
// file, or a server database name that does not exist.
func wrongDatabase(t *testing.T, p *profileApp) string {
	if p.d.name == "sqlite" {
		path := filepath.Join(p.scratch, "wrong.sqlite")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return p.dbName + "_wrong"
}

// renamedFailedTable sets queue.failed.table to dead_jobs and gives every
// setting through .env only.
func renamedFailedTable(t *testing.T, p *profileApp) {
	p.editConfig(t, "queue.php", `'table' => 'failed_jobs',`, `'table' => 'dead_jobs',`, 1)
	p.writeDotenv(t, append(append([]string{}, p.d.laravelEnv...), "APP_TIMEZONE="+p.v.tz)...)
	p.sourceEnv = p.env
}

// renameFailedTable: interop:reset creates failed_jobs by name, so the
// table is renamed with Laravel's schema builder (which applies the
// connection's prefix, if any) before any job fails.
func renameFailedTable(t *testing.T, p *profileApp) {
	p.php(t, `Illuminate\Support\Facades\Schema::rename('failed_jobs', 'dead_jobs');`)
}

// tablePrefix gives every connection 'prefix' => 'app_' (the 8 skeleton
// has three connections, 11+ five): Laravel then reads and writes app_jobs,
// app_failed_jobs and app_job_batches.
func tablePrefix(t *testing.T, p *profileApp) {
	connections := 5
	if laravel8Skeleton(p.lv) {
		connections = 3
	}
	p.editConfig(t, "database.php", `'prefix' => '',`, `'prefix' => 'app_',`, connections)
	p.env = append(append(p.env, "APP_TIMEZONE="+p.v.tz), p.d.laravelEnv...)
	p.sourceEnv = p.env
	p.afterResetCheck = func(t *testing.T) {
		out := p.php(t, `echo json_encode([Illuminate\Support\Facades\Schema::hasTable('failed_jobs'), Illuminate\Support\Facades\DB::connection()->getTablePrefix()]);`)
		if strings.TrimSpace(out) != `[true,"app_"]` {
			t.Fatalf("the prefixed schema is not in place: %s", out)
		}
	}
}

// postgresSchema puts the queue tables in schema "queue" (the pgsql
// connection's 'search_path' in 11+, 'schema' before, sets the search_path
// Laravel's connector issues); public has none of them.
func postgresSchema(t *testing.T, p *profileApp) {
	key := "search_path"
	if laravel8Skeleton(p.lv) {
		key = "schema"
	}
	p.editConfig(t, "database.php", fmt.Sprintf(`'%s' => 'public',`, key), fmt.Sprintf(`'%s' => 'queue',`, key), 1)
	p.env = append(append(p.env, "APP_TIMEZONE="+p.v.tz), p.d.laravelEnv...)
	p.sourceEnv = p.env
	p.php(t, `Illuminate\Support\Facades\DB::statement('CREATE SCHEMA queue');`)
	p.afterResetCheck = func(t *testing.T) {
		out := p.php(t, `echo json_encode(Illuminate\Support\Facades\DB::select("select table_schema from information_schema.tables where table_name = 'failed_jobs'"));`)
		if strings.TrimSpace(out) != `[{"table_schema":"queue"}]` {
			t.Fatalf("failed_jobs should exist in schema queue only: %s", out)
		}
	}
}

// mysqlLocalhostSocket connects as a user that exists only as
// 'user'@'localhost' with DB_HOST=localhost: PDO reaches it through the
// Unix socket, and so must jobtriage (the server resolves no host names, so
// TCP from 127.0.0.1 is refused, which the test checks first).
func mysqlLocalhostSocket(t *testing.T, p *profileApp) {
	if u, err := url.Parse(p.d.admin); err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
		t.Fatalf("interop prerequisite missing: the socket variant needs the MariaDB server of %s on this machine", sqltest.MySQLEnv)
	}
	user := "jt_interop_sock_" + randomHex(t, 4)
	password := randomHex(t, 12)
	admin, err := mysqlAdmin(p.d)
	if err != nil {
		t.Fatalf("interop prerequisite missing: MariaDB admin connection: %v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	for _, q := range []string{
		fmt.Sprintf("CREATE USER '%s'@'localhost' IDENTIFIED BY '%s'", user, password),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'localhost'", p.dbName, user),
		// the prune check runs Laravel on a copy of the database
		fmt.Sprintf("GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'localhost'", copyName(p.dbName), user),
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("interop prerequisite missing: cannot create the socket-only user (%s): %v", strings.Split(q, " IDENTIFIED")[0], err)
		}
	}
	t.Cleanup(func() {
		db, err := mysqlAdmin(p.d)
		if err == nil {
			defer db.Close()
			_, err = db.Exec(fmt.Sprintf("DROP USER IF EXISTS '%s'@'localhost'", user))
		}
		if err != nil {
			t.Errorf("dropping MariaDB user %s: %v", user, err)
		}
	})

	// The variant proves the socket only if TCP cannot log this user in.
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName = "tcp", "127.0.0.1:"+envValue(p.d.laravelEnv, "DB_PORT"), user, password, p.dbName
	cfg.Timeout = 5 * time.Second
	if db, err := sql.Open("mysql", cfg.FormatDSN()); err == nil {
		err = db.PingContext(ctx)
		db.Close()
		if err == nil {
			t.Fatalf("%s@localhost can log in over TCP 127.0.0.1 (skip_name_resolve off?): the socket variant would prove nothing", user)
		}
	}

	p.env = append(p.env, "APP_TIMEZONE="+p.v.tz)
	for _, kv := range p.d.laravelEnv {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "DB_HOST":
			kv = "DB_HOST=localhost"
		case "DB_USERNAME":
			kv = "DB_USERNAME=" + user
		case "DB_PASSWORD":
			kv = "DB_PASSWORD=" + password
		}
		p.env = append(p.env, kv)
	}
	p.sourceEnv = p.env
}

// --- the app copy -----------------------------------------------------

func newProfileApp(t *testing.T, lv laravelTarget, v profileVariant, d dialect) *profileApp {
	t.Helper()
	loc, err := time.LoadLocation(v.tz)
	if err != nil {
		t.Fatal(err)
	}
	p := &profileApp{v: v, d: d, loc: loc, lv: lv}
	if d.name != "sqlite" {
		p.dbName = profileDBPrefix + v.name
		holdProfileDatabase(t, d, p.dbName)
	}
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	if err := recreateProfileDatabase(ctx, d, p.dbName); err != nil {
		t.Fatalf("interop prerequisite missing: %s database: %v", d.name, err)
	}
	t.Cleanup(func() { dropProfileDatabase(t, d, p.dbName, copyName(p.dbName)) })

	dir := filepath.Join(t.TempDir(), "app")
	if !laravel8Skeleton(lv) {
		// The 11+ app loads the classes it does not override from the
		// Laravel 8 app beside it (its bootstrap/autoload.php); a copy
		// elsewhere takes them along, under its own.
		shared, err := filepath.Abs(filepath.Join("..", "testdata", "laravel-app", "app"))
		if err != nil {
			t.Fatal(err)
		}
		if err := copyTree(shared, filepath.Join(dir, "app")); err != nil {
			t.Fatalf("copying the Laravel 8 app's classes: %v", err)
		}
	}
	if err := copyTree(lv.app, dir); err != nil {
		t.Fatalf("copying the Laravel app: %v", err)
	}
	scratch := t.TempDir()
	p.laravelApp = &laravelApp{
		phpCmd:  lv.php,
		dir:     dir,
		flag:    filepath.Join(scratch, "flag"),
		results: filepath.Join(scratch, "results.jsonl"),
		scratch: scratch,
	}
	p.env = append(withoutLaravelEnv(os.Environ()),
		"APP_ENV=testing",
		"INTEROP_STORAGE="+filepath.Join(scratch, "storage"),
		"INTEROP_FLAG_FILE="+p.flag,
		"INTEROP_RESULTS_FILE="+p.results,
	)
	if out, err := p.artisan(artisanTimeout, "--version"); err != nil {
		t.Fatalf("interop prerequisite missing: the Laravel app does not boot (install-deps.sh?): %v\n%s", err, out)
	}
	return p
}

// copyTree copies the app (a few dozen small files) so that a variant can
// edit its config without touching testdata/laravel-app.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", path)
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
}

// editConfig replaces old with new in config/<file>; old must occur
// exactly count times, so a changed testdata app fails loudly here instead
// of silently testing the unedited config.
func (p *profileApp) editConfig(t *testing.T, file, old, new string, count int) {
	t.Helper()
	path := filepath.Join(p.dir, "config", file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), old); n != count {
		t.Fatalf("config/%s has %q %d times, want %d: testdata/laravel-app changed, update this variant", file, old, n, count)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (p *profileApp) writeDotenv(t *testing.T, vars ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, ".env"), []byte(strings.Join(vars, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dispatch queues profileJobs ChargeCard jobs (they fail at once while the
// flag file is missing) on both queues the worker reads: a smaller
// dispatch than interop:dispatch, which the other tests cover.
func (p *profileApp) dispatch(t *testing.T) {
	t.Helper()
	var code strings.Builder
	for i := 0; i < profileJobs; i++ {
		queue := "default"
		if i == profileJobs-1 {
			queue = "emails"
		}
		fmt.Fprintf(&code, "App\\Jobs\\ChargeCard::dispatch(%d, 1999, 'EUR')->onQueue('%s'); ", profileFirstOrder+i, queue)
	}
	p.php(t, code.String())
}

// work runs one worker until the queue is empty. ChargeCard fails at once
// and never kills the worker; --sleep=0 skips the idle poll before
// --stop-when-empty stops it.
func (p *profileApp) work(t *testing.T) {
	t.Helper()
	out, err := p.artisan(workerTimeout, "queue:work", "--stop-when-empty", "--tries=1", "--sleep=0", "--queue=default,emails")
	if err != nil {
		t.Fatalf("queue:work: %v\n%s\nlaravel.log:\n%s", err, out, p.log())
	}
}

// failedRow is one row of `php artisan queue:failed`.
type failedRow struct {
	uuid, failedAt string // failed_at as stored: wall-clock text
}

// artisanFailed parses queue:failed's table (ID, Connection, Queue, Class,
// Failed At; ID is the uuid with the database-uuids driver), sorted by uuid.
func (p *profileApp) artisanFailed(t *testing.T) []failedRow {
	t.Helper()
	out := p.mustArtisan(t, "queue:failed")
	// Laravel 10+ prints "  FAILED_AT UUID  CONNECTION@QUEUE CLASS" lines
	// instead of the 8.x table.
	line10 := regexp.MustCompile(`^\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (\S+)\s+\S+@\S+ `)
	var rows []failedRow
	for _, line := range strings.Split(out, "\n") {
		if m := line10.FindStringSubmatch(line); m != nil {
			rows = append(rows, failedRow{uuid: m[2], failedAt: m[1]})
			continue
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 5 {
			t.Fatalf("queue:failed row %q: want 5 columns", line)
		}
		if cells[0] == "ID" {
			continue
		}
		rows = append(rows, failedRow{uuid: cells[0], failedAt: cells[4]})
	}
	if len(rows) == 0 && !strings.Contains(out, "No failed jobs") {
		t.Fatalf("cannot parse php artisan queue:failed:\n%s", out)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].uuid < rows[j].uuid })
	return rows
}

// ageRows rewrites failed_at of the given rows to now − hours in
// app.timezone, through the app's failed-jobs connection and table (so the
// prefix, schema and renamed table apply as they do for the worker).
func (p *profileApp) ageRows(t *testing.T, hoursAgo map[string]int) {
	t.Helper()
	var code strings.Builder
	code.WriteString(`$q = fn () => Illuminate\Support\Facades\DB::connection(config('queue.failed.database'))->table(config('queue.failed.table')); `)
	for uuid, h := range hoursAgo {
		fmt.Fprintf(&code, `if ($q()->where('uuid', '%s')->update(['failed_at' => Illuminate\Support\Carbon::now()->subHours(%d)->format('Y-m-d H:i:s')]) !== 1) { exit(1); } `, uuid, h)
	}
	p.php(t, code.String())
}

// expectPrune is what queue:prune-failed --hours=N deletes now: rows whose
// failed_at text, read in app.timezone, is before now − N h. It fails the
// test unless a tool reading the text as UTC or in the variant's decoy
// zone would count differently, so the check below can catch one.
func (p *profileApp) expectPrune(t *testing.T, rows []failedRow) int {
	v := p.v
	t.Helper()
	count := func(loc *time.Location) int {
		cut := time.Now().Add(-profilePruneHours * time.Hour)
		n := 0
		for _, r := range rows {
			at, err := time.ParseInLocation(laravelWallClock, r.failedAt, loc)
			if err != nil {
				t.Fatalf("failed_at %q: %v", r.failedAt, err)
			}
			if at.Before(cut) {
				n++
			}
		}
		return n
	}
	want := count(p.loc)
	if want != 1 {
		t.Fatalf("expected exactly the row aged %d h to be prunable in %s, got %d (%s)", profilePruneHours+1, v.tz, want, failedAtTexts(rows))
	}
	for _, zone := range []string{"UTC", v.decoyTZ} {
		if zone == "" {
			continue
		}
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		if count(loc) == want {
			t.Fatalf("a tool reading failed_at in %s would also count %d: the prune check does not discriminate %s from %s", zone, want, v.tz, zone)
		}
	}
	return want
}

func failedAtTexts(rows []failedRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.failedAt)
	}
	return strings.Join(s, ", ")
}

// laravelPruneOnCopy runs queue:prune-failed --hours=N on a copy of the
// database (same tables, schema and rows) and returns how many rows it
// deleted.
func (p *profileApp) laravelPruneOnCopy(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	target, err := copyProfileDatabase(ctx, p.d, p.dbName, p.scratch)
	if err != nil {
		t.Fatalf("copying the %s database: %v", p.d.name, err)
	}
	app := *p.laravelApp
	app.env = append(append([]string{}, p.sourceEnv...), "DB_DATABASE="+target)
	if p.cached {
		// The app runs on a cache; so does Laravel on the copy, cached in
		// the same way with the copy's name.
		app.env = append(app.env, "APP_CONFIG_CACHE="+filepath.Join(p.scratch, "copy-config.php"))
		app.mustArtisan(t, "config:cache")
	}
	out := app.mustArtisan(t, "queue:prune-failed", fmt.Sprintf("--hours=%d", profilePruneHours))
	m := regexp.MustCompile(`(\d+) entries deleted`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("queue:prune-failed printed %q", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// --- jobtriage --------------------------------------------------------

// runIn runs jobtriage with no connection flags in dir, with env (the
// app's) minus jobtriage's own configuration variables.
func (j jobtriage) runIn(r triageRun, args ...string) (stdout, stderr string, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.path, args...)
	cmd.Dir = r.dir
	for _, kv := range r.env {
		if !strings.HasPrefix(kv, "JOBTRIAGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "NO_COLOR=1")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		err = fmt.Errorf("jobtriage %s: timed out", strings.Join(args, " "))
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil // the exit code is the result
	}
	return out.String(), errOut.String(), code, err
}

func (p *profileApp) checkList(t *testing.T, bin jobtriage, r triageRun, rows []failedRow, started, finished time.Time) {
	t.Helper()
	stdout, stderr, code, err := bin.runIn(r, "failed", "--json")
	if err != nil || code != 0 {
		t.Fatalf("[%s] jobtriage failed --json: exit %d %v\nstderr: %s\nstdout: %s", r.label, code, err, stderr, stdout)
	}
	var doc struct {
		Jobs []reportedJob `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("[%s] jobtriage failed --json: %v\n%s", r.label, err, stdout)
	}
	jobs := doc.Jobs
	byUUID := map[string]reportedJob{}
	var got, want []string
	for _, j := range jobs {
		byUUID[j.UUID] = j
		got = append(got, j.UUID)
	}
	for _, row := range rows {
		want = append(want, row.uuid)
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("[%s] jobtriage failed --json and php artisan queue:failed list different rows (-artisan +jobtriage):\n%s\nstderr: %s", r.label, diff, stderr)
	}
	for _, row := range rows {
		j := byUUID[row.uuid]
		// The stored text is app.timezone wall-clock time: read there, it
		// is the instant the worker failed the job, inside the run.
		if j.FailedAt.Before(started) || j.FailedAt.After(finished.Add(time.Second)) {
			t.Errorf("[%s] %s: failed_at %s is outside the run [%s, %s] (stored %q in %s)", r.label, row.uuid,
				j.FailedAt.Format(time.RFC3339), started.Format(time.RFC3339), finished.Format(time.RFC3339), row.failedAt, p.loc)
		}
		if s := j.FailedAt.In(p.loc).Format(laravelWallClock); s != row.failedAt {
			t.Errorf("[%s] %s: failed_at %s is %s in %s, Laravel stored %s", r.label, row.uuid, j.FailedAt.Format(time.RFC3339), s, p.loc, row.failedAt)
		}
	}
}

func (p *profileApp) checkMonitor(t *testing.T, bin jobtriage, r triageRun) {
	t.Helper()
	stdout, stderr, code, err := bin.runIn(r, "monitor", "--max-failed", strconv.Itoa(profileJobs), "--window", profileMonitorWindow)
	if err != nil || code != exitUnhealthy {
		t.Errorf("[%s] jobtriage monitor --max-failed %d --window %s: exit %d (%v), want %d for %d fresh failures\nstdout: %s\nstderr: %s",
			r.label, profileJobs, profileMonitorWindow, code, err, exitUnhealthy, profileJobs, stdout, stderr)
	}
}

// checkRetry: with the cause fixed, jobtriage retry all (run as r) puts
// every row back on the app's jobs table, a real worker runs each job
// once, and failed_jobs is left empty.
func (p *profileApp) checkRetry(t *testing.T, bin jobtriage, r triageRun) {
	t.Helper()
	p.setFlag(t)
	stdout, stderr, code, err := bin.runIn(r, "retry", "all", "--yes")
	if err != nil || code != 0 {
		t.Fatalf("[%s] jobtriage retry all: exit %d %v\nstderr: %s\nstdout: %s", r.label, code, err, stderr, stdout)
	}
	p.work(t)
	if left := p.artisanFailed(t); len(left) != 0 {
		t.Errorf("[%s] php artisan queue:failed lists %d rows after the retry and a worker, want none\nlaravel.log:\n%s", r.label, len(left), p.log())
	}
	var ran []int
	for _, res := range p.readResults(t) {
		if n, ok := res.Args["order_id"].(float64); ok && res.Class == `App\Jobs\ChargeCard` {
			ran = append(ran, int(n))
		}
	}
	sort.Ints(ran)
	want := make([]int, 0, profileJobs)
	for i := 0; i < profileJobs; i++ {
		want = append(want, profileFirstOrder+i)
	}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("[%s] orders the worker charged after the retry (-want +got):\n%s", r.label, diff)
	}
}

func (p *profileApp) triagePrune(t *testing.T, bin jobtriage, r triageRun) int {
	t.Helper()
	stdout, stderr, code, err := bin.runIn(r, "prune", "--hours", strconv.Itoa(profilePruneHours), "--dry-run", "--json")
	if err != nil || code != 0 {
		t.Fatalf("[%s] jobtriage prune --dry-run: exit %d %v\nstderr: %s\nstdout: %s", r.label, code, err, stderr, stdout)
	}
	var res struct {
		DryRun  bool `json:"dry_run"`
		Deleted int  `json:"deleted"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.DryRun {
		t.Fatalf("[%s] jobtriage prune --dry-run --json printed %q (%v)", r.label, stdout, err)
	}
	return res.Deleted
}

// --- databases --------------------------------------------------------

// profileDialects returns the variant's databases, each on a server
// database of its own (profileDBPrefix + variant) so that variants run in
// parallel with each other and with the other interop tests.
func profileDialects(t *testing.T, variant string, names []string) []dialect {
	t.Helper()
	var out []dialect
	for _, name := range names {
		switch name {
		case "sqlite":
			out = append(out, sqliteDialect(t))
		case "postgres":
			raw := sqltest.DefaultPostgresDSN
			if v := os.Getenv(sqltest.PostgresEnv); v != "" {
				raw = v
			}
			d, err := postgresDialect(raw)
			if err != nil {
				t.Fatalf("interop prerequisite missing: %s: %v", sqltest.PostgresEnv, err)
			}
			out = append(out, retarget(d, profileDBPrefix+variant))
		case "mysql":
			raw := sqltest.DefaultMySQLDSN
			if v := os.Getenv(sqltest.MySQLEnv); v != "" {
				raw = v
			}
			d, err := mysqlDialect(raw)
			if err != nil {
				t.Fatalf("interop prerequisite missing: %s: %v", sqltest.MySQLEnv, err)
			}
			out = append(out, retarget(d, profileDBPrefix+variant))
		default:
			t.Fatalf("unknown database %q", name)
		}
	}
	return out
}

// retarget points a server dialect at another database.
func retarget(d dialect, database string) dialect {
	env := make([]string, 0, len(d.laravelEnv))
	for _, kv := range d.laravelEnv {
		if strings.HasPrefix(kv, "DB_DATABASE=") {
			kv = "DB_DATABASE=" + database
		}
		env = append(env, kv)
	}
	d.laravelEnv = env
	if u, err := url.Parse(d.dsn); err == nil {
		u.Path = "/" + database
		d.dsn = u.String()
	}
	return d
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func copyName(database string) string { return database + "_copy" }

// holdProfileDatabase is holdDatabase for a variant's database.
func holdProfileDatabase(t *testing.T, d dialect, database string) {
	t.Helper()
	lock := flock.New(filepath.Join(os.TempDir(), "jobtriage-interop-"+d.name+"-"+database+".lock"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if locked, err := lock.TryLockContext(ctx, 250*time.Millisecond); err != nil || !locked {
		t.Fatalf("another interop run holds %s for too long: %v", lock.Path(), err)
	}
	t.Cleanup(func() { _ = lock.Unlock() })
}

func mysqlAdmin(d dialect) (*sql.DB, error) {
	u, err := url.Parse(d.admin)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr = u.Hostname() + ":3306"
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Timeout = 5 * time.Second
	return sql.Open("mysql", cfg.FormatDSN())
}

func serverAdmin(d dialect) (*sql.DB, error) {
	if d.name == "postgres" {
		return sql.Open("postgres", d.admin)
	}
	return mysqlAdmin(d)
}

// recreateProfileDatabase drops and creates a variant's database; SQLite
// gets an empty file.
func recreateProfileDatabase(ctx context.Context, d dialect, database string) error {
	if d.name == "sqlite" {
		return os.WriteFile(envValue(d.laravelEnv, "DB_DATABASE"), nil, 0o644)
	}
	db, err := serverAdmin(d)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := dropDatabases(ctx, db, d, database, copyName(database)); err != nil {
		return err
	}
	create := "CREATE DATABASE " + database
	if d.name == "mysql" {
		create += " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
	}
	if _, err := db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create %s: %w", database, err)
	}
	return nil
}

func dropDatabases(ctx context.Context, db *sql.DB, d dialect, names ...string) error {
	for _, name := range names {
		q := "DROP DATABASE IF EXISTS " + name
		if d.name == "postgres" {
			// FORCE (PostgreSQL 13+) ends sessions a crashed run left behind.
			if _, err := db.ExecContext(ctx, q+" WITH (FORCE)"); err == nil {
				continue
			}
		}
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
	}
	return nil
}

// dropProfileDatabase removes a variant's databases once it passed; a
// failed run keeps them for a look (the next run recreates them).
func dropProfileDatabase(t *testing.T, d dialect, names ...string) {
	if d.name == "sqlite" || t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	db, err := serverAdmin(d)
	if err == nil {
		defer db.Close()
		err = dropDatabases(ctx, db, d, names...)
	}
	if err != nil {
		t.Errorf("cleaning up: %v", err)
	}
}

// copyProfileDatabase copies the database for a destructive Laravel run
// and returns the DB_DATABASE naming the copy: a file copy on SQLite, a
// TEMPLATE copy (schemas included) on PostgreSQL, table by table on MySQL.
func copyProfileDatabase(ctx context.Context, d dialect, database, scratch string) (string, error) {
	if d.name == "sqlite" {
		b, err := os.ReadFile(envValue(d.laravelEnv, "DB_DATABASE"))
		if err != nil {
			return "", err
		}
		path := filepath.Join(scratch, "copy.sqlite")
		return path, os.WriteFile(path, b, 0o644)
	}
	db, err := serverAdmin(d)
	if err != nil {
		return "", err
	}
	defer db.Close()
	target := copyName(database)
	if err := dropDatabases(ctx, db, d, target); err != nil {
		return "", err
	}
	if d.name == "postgres" {
		// The workers and jobtriage have exited, but the server may not
		// have noticed their sessions end yet: TEMPLATE needs none.
		for attempt := 0; ; attempt++ {
			_, err := db.ExecContext(ctx, "CREATE DATABASE "+target+" TEMPLATE "+database)
			if err == nil {
				return target, nil
			}
			if attempt == 20 || ctx.Err() != nil {
				return "", err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+target+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		return "", err
	}
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = ?", database)
	if err != nil {
		return "", err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return "", err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, table := range tables {
		for _, q := range []string{
			fmt.Sprintf("CREATE TABLE `%s`.`%s` LIKE `%s`.`%s`", target, table, database, table),
			fmt.Sprintf("INSERT INTO `%s`.`%s` SELECT * FROM `%s`.`%s`", target, table, database, table),
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return "", fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	return target, nil
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
