package doctor

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// WriteText writes the report in sections; its strings were cleaned when added.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("App\n")
	if a := r.App; a.Root != "" || a.Configuration != "" {
		root := a.Root
		if !a.IsApp {
			root += " (no artisan file: not a Laravel app root)"
		}
		version := "unknown (Laravel " + strconv.Itoa(a.defaultsVersion) + " defaults assumed)"
		if a.LaravelVersion != "" {
			version = a.LaravelVersion + " (" + a.LaravelVersionSource + ")"
		}
		writeColumns(&b, [][]string{
			{"root", root},
			{"laravel", version},
			{"configuration", a.configurationText()},
			{"timezone", a.Timezone + " (" + a.TimezoneSource + ")"},
			{"failed jobs", a.FailedStore.text()},
			{"jobs table", a.JobsTable},
			{"batches table", a.BatchesTable},
		})
		for _, wn := range a.Warnings {
			b.WriteString("  warning: " + wn + "\n")
		}
	} else {
		b.WriteString("  (the configuration could not be resolved; see Checks)\n")
	}

	if len(r.Settings) > 0 {
		b.WriteString("\nSettings\n")
		rows := make([][]string, 0, len(r.Settings))
		for _, s := range r.Settings {
			rows = append(rows, []string{s.Key, s.Value, s.Source})
		}
		writeColumns(&b, rows)
	}

	if len(r.Connections) > 0 {
		b.WriteString("\nQueue connections\n")
	}
	for _, c := range r.Connections {
		name := c.Name
		if c.Default {
			name += " (default)"
		}
		fmt.Fprintf(&b, "  %s: %s driver, queue %s → %s\n", name, c.Driver, c.Queue, c.Destination)
		yesNo := map[bool]string{true: "yes", false: "no"}
		b.WriteString("      retry: " + yesNo[c.Retry] + " · monitor: " + yesNo[c.Monitor])
		if c.Note != "" {
			b.WriteString(" — " + c.Note)
		}
		b.WriteString("\n")
		if c.Failures != "" {
			b.WriteString("      failures: " + c.Failures + "\n")
		}
		if !c.Retry && c.Artisan != "" {
			b.WriteString("      use: " + c.Artisan + "\n")
		}
	}

	b.WriteString("\nContradictions\n")
	if len(r.Contradictions) == 0 {
		b.WriteString("  none\n")
	}
	for _, c := range r.Contradictions {
		b.WriteString("  " + severityLabel[c.Severity] + "  " + c.Message + "\n")
	}

	b.WriteString("\nChecks\n")
	for _, c := range r.Checks {
		b.WriteString("  " + statusLabel[c.Status] + "  " + c.Name + ": " + c.Detail + "\n")
	}

	b.WriteString("\nIndexes\n")
	switch {
	case len(r.Indexes) > 0:
	case r.databaseChecked:
		b.WriteString("  nothing to add\n")
	default:
		b.WriteString("  not checked (no SQL failed-jobs database was opened)\n")
	}
	for _, ix := range r.Indexes {
		b.WriteString("  " + statusLabel[statusWarn] + "  " + ix.Table + "(" + strings.Join(ix.Columns, ", ") + ") is not indexed: " + ix.Why + "\n")
		b.WriteString("        " + ix.SQL + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Labels are padded to one width so that the texts after them align.
var (
	severityLabel = map[string]string{appprofile.SeverityError: "error", appprofile.SeverityWarning: "warn ", appprofile.SeverityInfo: "note "}
	statusLabel   = map[string]string{statusOK: "ok  ", statusWarn: "warn", statusFail: "FAIL"}
)

func (a App) configurationText() string {
	if a.Configuration == "config_cache" {
		return "the config cache " + a.ConfigCache + " (php artisan config:cache); Laravel reads neither .env nor config/*.php while it exists"
	}
	env := "no .env file"
	if a.EnvFile != "" {
		env = a.EnvFile
	}
	defaults := "jobtriage's built-in Laravel " + strconv.Itoa(a.defaultsVersion) + " defaults"
	if a.Configuration == "defaults" {
		return defaults + " with the environment and " + env
	}
	return strings.Join(a.ConfigFiles, ", ") + " (over " + defaults + ") with the environment and " + env
}

func (fs FailedStore) text() string {
	if fs.Path != "" && fs.Target == "" {
		return fs.Driver + " driver: file " + fs.Path
	}
	return fmt.Sprintf("%s driver on connection %s: %s, table %s", fs.Driver, fs.Connection, fs.Target, fs.Table)
}

// writeColumns aligns every column but the last.
func writeColumns(b *strings.Builder, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, cell := range r[:len(r)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], sanitize.Width(cell))
		}
	}
	for _, r := range rows {
		b.WriteString("  ")
		for i, cell := range r[:len(r)-1] {
			b.WriteString(cell + strings.Repeat(" ", widths[i]-sanitize.Width(cell)+2))
		}
		b.WriteString(r[len(r)-1] + "\n")
	}
}
