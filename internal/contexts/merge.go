package contexts

import "cmp"

// The environment variables that sit between the flags and a context.
const (
	EnvDSN         = "JOBTRIAGE_DSN"
	EnvJobsDSN     = "JOBTRIAGE_JOBS_DSN"
	EnvFailedTable = "JOBTRIAGE_FAILED_TABLE"
	EnvJobsTable   = "JOBTRIAGE_JOBS_TABLE"
	EnvTimezone    = "JOBTRIAGE_TIMEZONE"
)

// Settings say where an app's database is: the flags ("" = unset) going in,
// what to resolve the app profile with coming out.
type Settings struct {
	Dir         string // the Laravel directory (the working directory going in)
	EnvFile     string
	DSN         string
	JobsDSN     string
	FailedTable string
	JobsTable   string
	Timezone    string
}

// Merged is Merge's answer.
type Merged struct {
	Settings
	DSNFromContext bool     // Settings.DSN is the context's
	Warnings       []string // where the environment hid a context's setting
}

// Merge applies flags > environment > context > app profile. A setting the
// environment holds is left unset, for the profile resolver, which reads the
// environment itself, to take. c nil (no context): the flags pass through.
func Merge(c *Context, flags Settings, getenv func(string) string) Merged {
	m := Merged{Settings: flags}
	if c == nil {
		return m
	}
	env := func(k string) string {
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	pick := func(flag, envName, fromContext, key string) string {
		switch {
		case flag != "":
			return flag
		case env(envName) != "":
			if fromContext != "" {
				m.Warnings = append(m.Warnings, envName+" overrides the "+key+" of "+c.Marker())
			}
			return ""
		}
		return fromContext
	}
	if c.App != "" {
		m.Dir = c.App
	}
	m.EnvFile = cmp.Or(m.EnvFile, c.EnvFile)
	m.DSN = pick(flags.DSN, EnvDSN, c.DSN, "dsn")
	m.DSNFromContext = flags.DSN == "" && m.DSN != ""
	if m.JobsDSN = flags.JobsDSN; m.JobsDSN == "" {
		// The caller, not the profile resolver, reads the jobs DSN: hand it over.
		if m.JobsDSN = env(EnvJobsDSN); m.JobsDSN == "" {
			m.JobsDSN = c.JobsDSN
		}
	}
	m.FailedTable = pick(flags.FailedTable, EnvFailedTable, c.FailedTable, "failed-table")
	m.JobsTable = pick(flags.JobsTable, EnvJobsTable, c.JobsTable, "jobs-table")
	m.Timezone = pick(flags.Timezone, EnvTimezone, c.Timezone, "timezone")
	return m
}
