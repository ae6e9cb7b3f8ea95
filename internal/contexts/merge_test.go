package contexts

import (
	"strings"
	"testing"
)

func TestMergePrecedence(t *testing.T) {
	c := &Context{Name: "prod", App: "/srv/shop", EnvFile: "/srv/shop/.env.prod", DSN: "postgres://u@ctx/db", JobsDSN: "mysql://u@ctx/jobs",
		FailedTable: "ctx_failed", JobsTable: "ctx_jobs", Timezone: "Europe/Paris"}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name     string
		c        *Context
		flags    Settings
		env      map[string]string
		want     Settings
		fromCtx  bool
		warnings string
	}{
		{"no context: the flags", nil, Settings{Dir: "/cwd", DSN: "sqlite:/f.db"}, map[string]string{EnvDSN: "x"},
			Settings{Dir: "/cwd", DSN: "sqlite:/f.db"}, false, ""},
		{"context under nothing", c, Settings{Dir: "/cwd"}, nil,
			Settings{Dir: "/srv/shop", EnvFile: "/srv/shop/.env.prod", DSN: c.DSN, JobsDSN: c.JobsDSN, FailedTable: "ctx_failed", JobsTable: "ctx_jobs", Timezone: "Europe/Paris"}, true, ""},
		{"flags over the context", c, Settings{Dir: "/cwd", EnvFile: "/e", DSN: "sqlite:/f.db", JobsDSN: "sqlite:/j.db", FailedTable: "f", JobsTable: "j", Timezone: "UTC"}, nil,
			Settings{Dir: "/srv/shop", EnvFile: "/e", DSN: "sqlite:/f.db", JobsDSN: "sqlite:/j.db", FailedTable: "f", JobsTable: "j", Timezone: "UTC"}, false, ""},
		{"environment over the context", c, Settings{Dir: "/cwd"},
			map[string]string{EnvDSN: "sqlite:/env.db", EnvJobsDSN: "sqlite:/envjobs.db", EnvFailedTable: "ef", EnvJobsTable: "ej", EnvTimezone: "UTC"},
			Settings{Dir: "/srv/shop", EnvFile: "/srv/shop/.env.prod", JobsDSN: "sqlite:/envjobs.db"}, false,
			"JOBTRIAGE_DSN overrides the dsn of context prod|JOBTRIAGE_FAILED_TABLE overrides the failed-table of context prod|JOBTRIAGE_JOBS_TABLE overrides the jobs-table of context prod|JOBTRIAGE_TIMEZONE overrides the timezone of context prod"},
		{"environment without a context value: no warning", &Context{Name: "p", DSN: "sqlite:/c.db"}, Settings{Dir: "/cwd"},
			map[string]string{EnvTimezone: "UTC"}, Settings{Dir: "/cwd", DSN: "sqlite:/c.db"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Merge(tc.c, tc.flags, env(tc.env))
			if m.Settings != tc.want || m.DSNFromContext != tc.fromCtx || strings.Join(m.Warnings, "|") != tc.warnings {
				t.Errorf("got %+v from context %v warnings %q\nwant %+v %v %q", m.Settings, m.DSNFromContext, m.Warnings, tc.want, tc.fromCtx, tc.warnings)
			}
		})
	}
}
