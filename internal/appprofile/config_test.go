package appprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// laravelApp writes files (path → content, relative to a fresh base dir) and
// returns Options pointing at it with the given environment.
func laravelApp(t *testing.T, files map[string]string, environ ...string) Options {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Options{Dir: dir, Cwd: dir, Environ: environ}
}

func mustResolve(t *testing.T, o Options) Config {
	t.Helper()
	cfg, err := Resolve(o)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return cfg
}

func hasWarning(cfg Config, substr string) bool {
	for _, w := range cfg.Warnings {
		if strings.Contains(w, substr) {
			return true
		}
	}
	return false
}

func TestResolveLaravelConnections(t *testing.T) {
	tests := []struct {
		name string
		env  string
		want string // Redacted target
	}{
		{"mysql by default with Laravel 8 defaults", "APP_NAME=x\n", "mysql://forge@127.0.0.1:3306/forge"},
		{"pgsql", "DB_CONNECTION=pgsql\nDB_HOST=pg\nDB_DATABASE=app\nDB_USERNAME=ops\nDB_PASSWORD=pw12\n", "postgres://ops:xxxxx@pg:5432/app"},
		{"mysql with port and socket", "DB_CONNECTION=mysql\nDB_PORT=3307\nDB_DATABASE=app\nDB_SOCKET=/run/m.sock\n", "mysql://forge@127.0.0.1:3307/app?unix_socket=%2Frun%2Fm.sock"},
		{"mariadb", "DB_CONNECTION=mariadb\nDB_DATABASE=app\nDB_USERNAME=root\n", "mysql://root@127.0.0.1:3306/app"},
		{"quoted values and casts", "DB_CONNECTION=\"pgsql\"\nDB_DATABASE='app'\nDB_PASSWORD=(empty)\nDB_USERNAME=\"'ops'\"\n", "postgres://ops@127.0.0.1:5432/app"},
		{"empty port means driver default", "DB_CONNECTION=pgsql\nDB_PORT=\nDB_DATABASE=a\n", "postgres://forge@127.0.0.1:5432/a"},
		{"DATABASE_URL overrides keys", "DB_CONNECTION=mysql\nDB_HOST=ignored\nDB_DATABASE=ignored\nDB_USERNAME=keep\nDATABASE_URL=postgres://url-host:6000/urldb?sslmode=disable\n", "postgres://keep@url-host:6000/urldb?sslmode=disable"},
		{"DB_URL beats DATABASE_URL", "DB_URL=mysql://a@h1/d1\nDATABASE_URL=mysql://b@h2/d2\n", "mysql://a@h1:3306/d1"},
		{"URL aliases", "DB_URL=mysql2://u@rds/prod\n", "mysql://u@rds:3306/prod"},
		{"URL without database keeps DB_DATABASE", "DB_DATABASE=fromkey\nDB_URL=postgresql://u:p@h\n", "postgres://u:xxxxx@h:3306/fromkey"},
		{"URL null password keeps DB_PASSWORD", "DB_PASSWORD=keyed\nDB_URL=mysql://u:null@h/d\n", "mysql://u:xxxxx@h:3306/d"},
		{"URL socket option", "DB_URL=mysql://u@localhost/d?unix_socket=/s.sock\n", "mysql://u@localhost:3306/d?unix_socket=%2Fs.sock"},
		{"interpolation", "DB_HOST=db\nDB_DATABASE=${DB_HOST}_app\n", "mysql://forge@db:3306/db_app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := laravelApp(t, map[string]string{".env": tt.env})
			cfg := mustResolve(t, o)
			if got := cfg.Target.Redacted(); got != tt.want {
				t.Errorf("target = %s, want %s", got, tt.want)
			}
			if cfg.Source != filepath.Join(o.Dir, ".env") {
				t.Errorf("Source = %q, want the .env path", cfg.Source)
			}
		})
	}
}

func TestResolveURLDriverSwitchWarnsAboutPort(t *testing.T) {
	cfg := mustResolve(t, laravelApp(t, map[string]string{".env": "DB_URL=pgsql://u@h/d\n"}))
	if cfg.Target.Port != 3306 || !hasWarning(cfg, "without a port") {
		t.Errorf("port %d, warnings %q; want Laravel's 3306 and a warning", cfg.Target.Port, cfg.Warnings)
	}
	cfg = mustResolve(t, laravelApp(t, map[string]string{".env": "DB_CONNECTION=pgsql\nDB_URL=pgsql://u@h/d\n"}))
	if cfg.Target.Port != 5432 || hasWarning(cfg, "without a port") {
		t.Errorf("port %d, warnings %q; want 5432 and no warning", cfg.Target.Port, cfg.Warnings)
	}
}

func TestResolveDefaultDatabaseNameWarns(t *testing.T) {
	cfg := mustResolve(t, laravelApp(t, map[string]string{".env": "DB_HOST=h\n"}))
	if cfg.Target.Database != "forge" || !hasWarning(cfg, "DB_DATABASE is not set") {
		t.Errorf("database = %q, warnings %q; want forge with a warning", cfg.Target.Database, cfg.Warnings)
	}
}

func TestResolvePrecedence(t *testing.T) {
	files := map[string]string{".env": "DB_CONNECTION=pgsql\nDB_HOST=from-file\nDB_DATABASE=filedb\nDB_PASSWORD=filepw\n"}

	t.Run("real env beats .env", func(t *testing.T) {
		cfg := mustResolve(t, laravelApp(t, files, "DB_HOST=from-env", "DB_PASSWORD="))
		if cfg.Target.Host != "from-env" || cfg.Target.Database != "filedb" || cfg.Target.Password != "" {
			t.Errorf("got %+v", cfg.Target)
		}
	})
	t.Run("real env null is not the default", func(t *testing.T) {
		_, err := Resolve(laravelApp(t, files, "DB_DATABASE=null"))
		if err == nil || !strings.Contains(err.Error(), "no database name") {
			t.Errorf("error = %v, want missing database", err)
		}
	})
	t.Run("JOBTRIAGE_DSN beats Laravel keys", func(t *testing.T) {
		cfg := mustResolve(t, laravelApp(t, files, "JOBTRIAGE_DSN=mysql://u@envdsn/x", "DB_URL=pgsql://h/y"))
		if cfg.Target.Host != "envdsn" || cfg.Source != "JOBTRIAGE_DSN" {
			t.Errorf("got %s from %s", cfg.Target, cfg.Source)
		}
	})
	t.Run("--dsn beats everything", func(t *testing.T) {
		o := laravelApp(t, files, "JOBTRIAGE_DSN=mysql://u@envdsn/x")
		o.DSN = "postgres://flag/z"
		cfg := mustResolve(t, o)
		if cfg.Target.Host != "flag" || cfg.Source != "--dsn" {
			t.Errorf("got %s from %s", cfg.Target, cfg.Source)
		}
	})
	t.Run("no .env uses the environment", func(t *testing.T) {
		cfg := mustResolve(t, laravelApp(t, nil, "DB_CONNECTION=pgsql", "DB_DATABASE=envdb"))
		if cfg.Target.Redacted() != "postgres://forge@127.0.0.1:5432/envdb" || cfg.Source != "environment" || !hasWarning(cfg, "no .env file") {
			t.Errorf("got %s from %s, warnings %q", cfg.Target, cfg.Source, cfg.Warnings)
		}
	})
}

func TestResolveEnvFileSelection(t *testing.T) {
	files := map[string]string{
		".env":         "APP_ENV=staging\nDB_DATABASE=base\n",
		".env.staging": "DB_DATABASE=staging\n",
		".env.testing": "DB_DATABASE=testing\n",
		"other.env":    "DB_DATABASE=other\n",
	}
	tests := []struct {
		name        string
		environ     []string
		envFile     string
		appEnv      string
		wantDB      string
		wantWarning string
	}{
		{name: "APP_ENV in .env does not switch files", wantDB: "base", wantWarning: "only reads .env.staging when APP_ENV is a real environment variable"},
		{name: "real APP_ENV selects .env.x", environ: []string{"APP_ENV=testing"}, wantDB: "testing"},
		{name: "missing .env.x falls back to .env", environ: []string{"APP_ENV=production"}, wantDB: "base"},
		{name: "APP_ENV=null selects nothing", environ: []string{"APP_ENV=null"}, wantDB: "base"},
		{name: "artisan-style --env beats APP_ENV", environ: []string{"APP_ENV=testing"}, appEnv: "staging", wantDB: "staging"},
		{name: "explicit env file", envFile: "other.env", environ: []string{"APP_ENV=testing"}, wantDB: "other"},
		{name: "real env still beats .env.x", environ: []string{"APP_ENV=testing", "DB_DATABASE=real"}, wantDB: "real"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := laravelApp(t, files, tt.environ...)
			o.EnvFile, o.AppEnv = tt.envFile, tt.appEnv
			cfg := mustResolve(t, o)
			if cfg.Target.Database != tt.wantDB {
				t.Errorf("database = %q, want %q (source %s)", cfg.Target.Database, tt.wantDB, cfg.Source)
			}
			if tt.wantWarning != "" && !hasWarning(cfg, tt.wantWarning) {
				t.Errorf("warnings %q, want one containing %q", cfg.Warnings, tt.wantWarning)
			}
		})
	}

	t.Run("missing explicit env file", func(t *testing.T) {
		o := laravelApp(t, files)
		o.EnvFile = "nope.env"
		if _, err := Resolve(o); err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("broken .env is an error", func(t *testing.T) {
		_, err := Resolve(laravelApp(t, map[string]string{".env": "OK=1\nDB_HOST=a b\n"}))
		if err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("error = %v, want a line-numbered parse error", err)
		}
	})
	t.Run("broken .env with --dsn is a warning", func(t *testing.T) {
		o := laravelApp(t, map[string]string{".env": "DB_HOST=a b\n"})
		o.DSN = "mysql://h/d"
		cfg := mustResolve(t, o)
		if !hasWarning(cfg, "ignoring the env file") {
			t.Errorf("warnings %q", cfg.Warnings)
		}
	})
}

func TestResolveSQLite(t *testing.T) {
	t.Run("default database/database.sqlite", func(t *testing.T) {
		o := laravelApp(t, map[string]string{".env": "DB_CONNECTION=sqlite\n", "database/database.sqlite": ""})
		cfg := mustResolve(t, o)
		if want := filepath.Join(o.Dir, "database", "database.sqlite"); cfg.Target.Path != want || cfg.Target.Driver != "sqlite" {
			t.Errorf("target %s, want sqlite:%s", cfg.Target, want)
		}
	})
	t.Run("relative path from cwd first", func(t *testing.T) {
		o := laravelApp(t, map[string]string{".env": "DB_CONNECTION=sqlite\nDB_DATABASE=q.sqlite\n", "q.sqlite": ""})
		cwd := t.TempDir()
		if err := os.WriteFile(filepath.Join(cwd, "q.sqlite"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		o.Cwd = cwd
		if cfg := mustResolve(t, o); cfg.Target.Path != filepath.Join(cwd, "q.sqlite") {
			t.Errorf("path %s, want the cwd copy", cfg.Target.Path)
		}
	})
	t.Run("relative path then base dir", func(t *testing.T) {
		o := laravelApp(t, map[string]string{".env": "DB_CONNECTION=sqlite\nDB_DATABASE=storage/q.sqlite\n", "storage/q.sqlite": ""})
		o.Cwd = t.TempDir()
		if cfg := mustResolve(t, o); cfg.Target.Path != filepath.Join(o.Dir, "storage", "q.sqlite") {
			t.Errorf("path %s, want the base-dir copy", cfg.Target.Path)
		}
	})
	t.Run("DB_URL sqlite:/// is relative as in Laravel", func(t *testing.T) {
		o := laravelApp(t, map[string]string{".env": "DB_URL=sqlite:///storage/u.sqlite\n", "storage/u.sqlite": ""})
		if cfg := mustResolve(t, o); cfg.Target.Path != filepath.Join(o.Dir, "storage", "u.sqlite") {
			t.Errorf("path %s", cfg.Target.Path)
		}
	})
	t.Run("--dsn relative path", func(t *testing.T) {
		o := laravelApp(t, map[string]string{"db/x.sqlite": ""})
		o.DSN = "sqlite:db/x.sqlite"
		if cfg := mustResolve(t, o); cfg.Target.Path != filepath.Join(o.Dir, "db", "x.sqlite") {
			t.Errorf("path %s", cfg.Target.Path)
		}
	})
	for name, env := range map[string]string{
		"missing file":   "DB_CONNECTION=sqlite\n",
		"memory":         "DB_CONNECTION=sqlite\nDB_DATABASE=:memory:\n",
		"missing abs":    "DB_CONNECTION=sqlite\nDB_DATABASE=/nonexistent/x.sqlite\n",
		"empty database": "DB_CONNECTION=sqlite\nDB_DATABASE=\n",
	} {
		t.Run(name+" is an error", func(t *testing.T) {
			if _, err := Resolve(laravelApp(t, map[string]string{".env": env})); err == nil {
				t.Error("Resolve succeeded")
			}
		})
	}
}

func TestResolveQueueSettings(t *testing.T) {
	env := "DB_DATABASE=a\nDB_QUEUE_TABLE=queue_jobs\nDB_QUEUE_RETRY_AFTER=300\nAPP_TIMEZONE=europe/kyiv\nAPP_KEY=base64:c2VjcmV0LWFwcC1rZXk=\n"
	t.Run("from .env", func(t *testing.T) {
		cfg := mustResolve(t, laravelApp(t, map[string]string{".env": env}))
		if cfg.JobsTable != "queue_jobs" || cfg.FailedTable != "failed_jobs" || cfg.BatchesTable != "job_batches" {
			t.Errorf("tables %q %q %q", cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable)
		}
		if cfg.RetryAfter != 300*time.Second {
			t.Errorf("retry_after %s", cfg.RetryAfter)
		}
		if cfg.Location.String() != "Europe/Kyiv" {
			t.Errorf("location %s", cfg.Location)
		}
		if cfg.AppKey != "base64:c2VjcmV0LWFwcC1rZXk=" {
			t.Errorf("app key %q", cfg.AppKey)
		}
		for _, s := range []string{cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
			if strings.Contains(s, "c2VjcmV0") {
				t.Errorf("formatted config shows the app key: %s", s)
			}
		}
	})
	t.Run("defaults", func(t *testing.T) {
		cfg := mustResolve(t, laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n"}))
		if cfg.JobsTable != "jobs" || cfg.RetryAfter != 90*time.Second || cfg.Location != time.UTC && cfg.Location.String() != "UTC" {
			t.Errorf("jobs=%q retry=%s tz=%s", cfg.JobsTable, cfg.RetryAfter, cfg.Location)
		}
	})
	t.Run("JOBTRIAGE env beats .env", func(t *testing.T) {
		cfg := mustResolve(t, laravelApp(t, map[string]string{".env": env},
			"JOBTRIAGE_JOBS_TABLE=j2", "JOBTRIAGE_FAILED_TABLE=public.f2", "JOBTRIAGE_TIMEZONE=America/New_York"))
		if cfg.JobsTable != "j2" || cfg.FailedTable != "public.f2" || cfg.Location.String() != "America/New_York" {
			t.Errorf("jobs=%q failed=%q tz=%s", cfg.JobsTable, cfg.FailedTable, cfg.Location)
		}
	})
	t.Run("flags beat everything", func(t *testing.T) {
		o := laravelApp(t, map[string]string{".env": env}, "JOBTRIAGE_JOBS_TABLE=j2", "JOBTRIAGE_TIMEZONE=America/New_York", "DB_QUEUE_RETRY_AFTER=5")
		o.JobsTable, o.FailedTable, o.Timezone, o.RetryAfter = "j3", "f3", "Asia/Jakarta", time.Minute
		cfg := mustResolve(t, o)
		if cfg.JobsTable != "j3" || cfg.FailedTable != "f3" || cfg.Location.String() != "Asia/Jakarta" || cfg.RetryAfter != time.Minute {
			t.Errorf("jobs=%q failed=%q tz=%s retry=%s", cfg.JobsTable, cfg.FailedTable, cfg.Location, cfg.RetryAfter)
		}
	})
	for name, tc := range map[string]struct {
		environ []string
		opts    func(*Options)
		want    string
	}{
		"negative retry":     {environ: []string{"DB_QUEUE_RETRY_AFTER=-1"}, want: "retry_after is -1"},
		"negative flag":      {opts: func(o *Options) { o.RetryAfter = -time.Second }, want: "--retry-after"},
		"bad timezone":       {environ: []string{"APP_TIMEZONE=Mars/Olympus"}, want: "APP_TIMEZONE"},
		"Local timezone":     {opts: func(o *Options) { o.Timezone = "Local" }, want: "--timezone"},
		"hostile table":      {environ: []string{"DB_QUEUE_TABLE=jobs; drop table users"}, want: "not a valid table name"},
		"hostile flag table": {opts: func(o *Options) { o.FailedTable = "f\x1b[2J" }, want: `"f\x1b[2J"`},
	} {
		t.Run(name, func(t *testing.T) {
			o := laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n"}, tc.environ...)
			if tc.opts != nil {
				tc.opts(&o)
			}
			if _, err := Resolve(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestResolveReadsTheConfigCache: with a config cache Laravel reads nothing
// else, and neither does jobtriage; APP_CONFIG_CACHE moves it.
func TestResolveReadsTheConfigCache(t *testing.T) {
	// An empty cache has no queue.failed, so Laravel stores no failures.
	_, err := Resolve(laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n", "bootstrap/cache/config.php": "<?php return [];"}))
	if err == nil || !strings.Contains(err.Error(), "does not store failed jobs") {
		t.Errorf("error %v, want the cache read (no queue.failed)", err)
	}
	_, err = Resolve(laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n", "custom/cfg.php": "<?php return array ();"}, "APP_CONFIG_CACHE=custom/cfg.php"))
	if err == nil || !strings.Contains(err.Error(), "does not store failed jobs") {
		t.Errorf("error %v, want APP_CONFIG_CACHE honoured", err)
	}
	_, err = Resolve(laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n", "bootstrap/cache/config.php": "<?php echo 'hi';"}))
	if err == nil || !strings.Contains(err.Error(), "config cache") {
		t.Errorf("error %v, want the unreadable cache named", err)
	}
	cfg := mustResolve(t, laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n"}))
	if cfg.Profile.CachePath != "" {
		t.Errorf("cache %q without a cache file", cfg.Profile.CachePath)
	}
}

func TestResolveRejectsUnknownDrivers(t *testing.T) {
	for env, want := range map[string]string{
		"DB_CONNECTION=sqlsrv\n":                  "does not support",
		"DB_CONNECTION=tenant\n":                  "not configured in config/database.php",
		"DB_CONNECTION=null\n":                    "DB_CONNECTION is empty or null",
		"DB_URL=mssql://u:p@h/d\n":                "does not support",
		"DB_URL=oracle://u:p@h/d\n":               "does not support",
		"DB_CONNECTION=pgsql\nDB_DATABASE=\n":     "no database name",
		"DB_CONNECTION=pgsql\nDB_PORT=54x32\n":    "DB_PORT",
		"DB_URL=pgsql://u:p@h:70000/d\n":          "port",
		"DB_CONNECTION=pgsql\nDB_DATABASE=(null)": "no database name",
	} {
		t.Run(env, func(t *testing.T) {
			_, err := Resolve(laravelApp(t, map[string]string{".env": env}))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error = %v, want one containing %q", err, want)
			}
		})
	}
	t.Run("missing app dir", func(t *testing.T) {
		if _, err := Resolve(Options{Dir: filepath.Join(t.TempDir(), "nope")}); err == nil {
			t.Error("Resolve succeeded")
		}
	})
}

// TestResolveNeverShowsThePassword feeds a distinctive password through every
// place it can come from into scenarios that fail or warn, and greps all text
// Resolve produces for it.
func TestResolveNeverShowsThePassword(t *testing.T) {
	const pw = "Pw-7f3a9c-UNIQUE"
	const enc = "Pw-7f3a9c-UNIQUE" // needs no percent-encoding
	scenarios := []struct {
		name    string
		files   map[string]string
		environ []string
		dsn     string
	}{
		{name: "ok from .env", files: map[string]string{".env": "DB_DATABASE=a\nDB_PASSWORD=" + pw + "\n"}},
		{name: "ok from DB_URL", files: map[string]string{".env": "DB_URL=pgsql://u:" + enc + "@h/d\n"}},
		{name: "ok from --dsn", dsn: "mysql://u:" + enc + "@h/d"},
		{name: "user equals password", dsn: "mysql://" + enc + ":" + enc + "@h/d"},
		{name: "dsn without database", dsn: "mysql://u:" + enc + "@h"},
		{name: "dsn bad port", dsn: "mysql://u:" + enc + "@h:9x/d"},
		{name: "dsn unencoded slash", dsn: "mysql://u:ab/" + enc + "@h/d"},
		{name: "dsn unencoded hash", dsn: "mysql://u:" + enc + "#x@h/d"},
		{name: "dsn unsupported", dsn: "sqlsrv://u:" + enc + "@h/d"},
		{name: "JOBTRIAGE_DSN bad", environ: []string{"JOBTRIAGE_DSN=pgsql://u:" + enc + "@h:bad/d"}},
		{name: "DB_URL bad port", files: map[string]string{".env": "DB_URL=pgsql://u:" + enc + "@h:99999/d\n"}},
		{name: "DB_URL with slash in password", files: map[string]string{".env": "DB_URL=pgsql://u:" + enc + "/x@h/d\n"}},
		{name: "unquoted password with a space", files: map[string]string{".env": "DB_PASSWORD=" + pw + " more\n"}},
		{name: "unterminated quote", files: map[string]string{".env": "DB_PASSWORD='" + pw + "\n"}},
		{name: "bad escape", files: map[string]string{".env": "DB_PASSWORD=\"" + pw + "\\q\"\n"}},
		{name: "password as a line", files: map[string]string{".env": pw + "\n"}},
		{name: "password in connection", files: map[string]string{".env": "DB_PASSWORD=" + pw + "\nDB_CONNECTION=" + pw + "\n"}},
		{name: "password in port", files: map[string]string{".env": "DB_PASSWORD=" + pw + "\nDB_PORT=" + pw + "\n"}},
		{name: "password in timezone", files: map[string]string{".env": "DB_DATABASE=a\nDB_PASSWORD=" + pw + "\nAPP_TIMEZONE=" + pw + "\n"}},
		{name: "password in table", files: map[string]string{".env": "DB_DATABASE=a\nDB_PASSWORD=" + pw + "\nDB_QUEUE_TABLE=" + pw + "\n"}},
		{name: "sqlite path", files: map[string]string{".env": "DB_CONNECTION=sqlite\nDB_PASSWORD=" + pw + "\nDB_DATABASE=/x/" + pw + "\n"}},
		{name: "real env password, broken .env", files: map[string]string{".env": "A='\n"}, environ: []string{"DB_PASSWORD=" + pw}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			o := laravelApp(t, sc.files, sc.environ...)
			o.DSN = sc.dsn
			cfg, err := Resolve(o)
			texts := append([]string{cfg.Target.Redacted(), cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%#v", cfg)}, cfg.Warnings...)
			if err != nil {
				texts = append(texts, err.Error())
			}
			for _, text := range texts {
				if strings.Contains(text, pw) {
					t.Errorf("password shown in %q", text)
				}
			}
		})
	}
}

// TestResolveOutsideAnAppSaysSo: with no artisan file, .env, config cache,
// DB_ variable or DSN, Resolve says where it looked and what to do instead
// of resolving Laravel's defaults (forge on 127.0.0.1).
func TestResolveOutsideAnAppSaysSo(t *testing.T) {
	o := laravelApp(t, nil)
	_, err := Resolve(o)
	if want := "not inside a Laravel app (no artisan file above " + o.Dir + "): cd into the app or pass --dsn"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	for _, o := range []Options{laravelApp(t, nil, "DB_HOST=db"), laravelApp(t, map[string]string{".env": "DB_HOST=h\n"}),
		laravelApp(t, map[string]string{"artisan": ""})} {
		if _, err := Resolve(o); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	o.DSN = "mysql://u@h/d"
	if _, err := Resolve(o); err != nil {
		t.Errorf("--dsn outside an app: %v", err)
	}
}

// TestMissingSQLiteNamesEachDirectoryOnce: a relative SQLite path that is
// nowhere names the one directory looked in once, or both by their roles.
func TestMissingSQLiteNamesEachDirectoryOnce(t *testing.T) {
	o := laravelApp(t, map[string]string{"artisan": ""})
	o.DSN = "sqlite:nope.sqlite"
	_, err := Resolve(o)
	if want := `--dsn: SQLite database "nope.sqlite" does not exist in "` + o.Dir + `": fix the path (jobtriage never creates a database)`; err == nil || err.Error() != want {
		t.Errorf("one directory:\n got %v\nwant %s", err, want)
	}
	o.Cwd = t.TempDir()
	_, err = Resolve(o)
	if want := `SQLite database "nope.sqlite" does not exist in the working directory "` + o.Cwd + `" or the app's base path "` + o.Dir + `"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("two directories:\n got %v\nwant %s", err, want)
	}
}

// TestConfigCacheThatIsNoFileIsRefused: a config cache that is there but no
// regular file (a symlink to /dev/zero, a FIFO, a directory) was passed over
// and .env read instead. It is refused in one line naming it; a dangling
// symlink is no cache, as PHP's is_file says.
func TestConfigCacheThatIsNoFileIsRefused(t *testing.T) {
	for name, mk := range map[string]func(path string) error{
		"symlink to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"FIFO":                 func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"directory":            func(p string) error { return os.Mkdir(p, 0o755) },
		"dangling symlink":     func(p string) error { return os.Symlink(filepath.Join(filepath.Dir(p), "gone.php"), p) },
	} {
		t.Run(name, func(t *testing.T) {
			o := laravelApp(t, map[string]string{".env": "DB_DATABASE=a\n", "bootstrap/cache/.keep": ""})
			cache := filepath.Join(o.Dir, "bootstrap", "cache", "config.php")
			if err := mk(cache); err != nil {
				t.Skipf("cannot make the cache: %v", err)
			}
			done := make(chan error, 1)
			go func() { _, err := Resolve(o); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Resolve did not return: it opened the cache")
			}
			if name == "dangling symlink" {
				if err != nil {
					t.Errorf("a dangling symlink is no cache: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), cache+" is not a regular file") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Resolve: %v, want one line naming %s", err, cache)
			}
			// With an explicit DSN it costs the app's settings, and says so.
			o.DSN = "postgres://u@db.internal/app"
			cfg, err := Resolve(o)
			if err != nil || !hasWarning(cfg, cache) {
				t.Errorf("with --dsn: %v, warnings %q, want one naming %s", err, cfg.Warnings, cache)
			}
		})
	}
}
