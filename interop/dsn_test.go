package interop

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The DSN plumbing runs without any database: a wrong mapping here would
// point PHP and jobtriage at different databases and every interop check
// would fail for the wrong reason.
func TestDialectFromDSN(t *testing.T) {
	tests := []struct {
		name    string
		build   func(string) (dialect, error)
		raw     string
		wantEnv []string
		wantDSN string
		wantErr bool
	}{
		{
			name:  "postgres with password and query",
			build: postgresDialect,
			raw:   "postgres://app:s%3Acret@db.internal:6432/test?sslmode=disable",
			wantEnv: []string{"DB_CONNECTION=pgsql", "DB_HOST=db.internal", "DB_PORT=6432",
				"DB_DATABASE=jobtriage_interop_pg", "DB_USERNAME=app", "DB_PASSWORD=s:cret"},
			wantDSN: "postgres://app:s%3Acret@db.internal:6432/jobtriage_interop_pg?sslmode=disable",
		},
		{
			name:  "postgres default port",
			build: postgresDialect,
			raw:   "postgresql://postgres@127.0.0.1/test",
			wantEnv: []string{"DB_CONNECTION=pgsql", "DB_HOST=127.0.0.1", "DB_PORT=5432",
				"DB_DATABASE=jobtriage_interop_pg", "DB_USERNAME=postgres", "DB_PASSWORD="},
			wantDSN: "postgresql://postgres@127.0.0.1/jobtriage_interop_pg",
		},
		{
			name:  "mysql",
			build: mysqlDialect,
			raw:   "mysql://root@127.0.0.1:3306/test",
			wantEnv: []string{"DB_CONNECTION=mysql", "DB_HOST=127.0.0.1", "DB_PORT=3306",
				"DB_DATABASE=jobtriage_interop_my", "DB_USERNAME=root", "DB_PASSWORD="},
			wantDSN: "mysql://root@127.0.0.1:3306/jobtriage_interop_my",
		},
		{name: "postgres wrong scheme", build: postgresDialect, raw: "mysql://root@h/test", wantErr: true},
		{name: "mysql without user", build: mysqlDialect, raw: "mysql://127.0.0.1:3306/test", wantErr: true},
		{name: "mysql without host", build: mysqlDialect, raw: "mysql:///test", wantErr: true},
		{name: "not a URL", build: postgresDialect, raw: "postgres://%zz", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.build(tt.raw)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("accepted %q as %+v", tt.raw, d)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantEnv, d.laravelEnv); diff != "" {
				t.Errorf("laravel env (-want +got):\n%s", diff)
			}
			if d.dsn != tt.wantDSN {
				t.Errorf("dsn = %q, want %q", d.dsn, tt.wantDSN)
			}
		})
	}
}

func TestWithoutLaravelEnvKeepsTheRest(t *testing.T) {
	got := withoutLaravelEnv([]string{"PATH=/bin", "DB_HOST=prod", "APP_KEY=x", "QUEUE_CONNECTION=redis", "INTEROP_FLAG_FILE=/f", "HOME=/root", "DB=keep"})
	if diff := cmp.Diff([]string{"PATH=/bin", "HOME=/root", "DB=keep"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
