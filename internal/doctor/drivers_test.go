package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
)

// TestConnectionsNameDriversAndWhereFailuresGo: each connection of a
// driver jobtriage cannot write to is named with where its jobs wait and
// where its failures go (a cloud one's never reach failed_jobs); a
// failover connection says which of its connections retry pushes to.
func TestConnectionsNameDriversAndWhereFailuresGo(t *testing.T) {
	in := inputs(database(nil))
	in.Config.Queues = []appprofile.QueueConnection{
		{Name: "database", Driver: "database"},
		{Name: "deferred", Driver: "deferred"},
		{Name: "background", Driver: "background"},
		{Name: "cloud", Driver: "cloud"},
		{Name: "sqs", Driver: "sqs"},
		{Name: "beanstalkd", Driver: "beanstalkd"},
		{Name: "failover", Driver: "failover", Connections: []string{"database", "deferred"}},
		{Name: "nowhere", Driver: "failover", Connections: []string{"sqs"}},
		{Name: "to-sqs-first", Driver: "failover", Connections: []string{"sqs", "database"}},
	}
	in.Routes = func() map[string]triage.Route {
		routes := map[string]triage.Route{"database": {Driver: "database", Local: true}}
		for _, qc := range in.Config.Queues {
			switch qc.Driver {
			case "database":
			case "failover":
				routes[qc.Name] = triage.Route{Driver: qc.Driver, Failover: qc.Connections}
			default:
				routes[qc.Name] = triage.Route{Driver: qc.Driver, Reason: triage.UnwritableReason(qc.Name, qc.Driver)}
			}
		}
		triage.ResolveFailover(routes)
		return routes
	}
	rep := build(t, in)
	got := map[string]Connection{}
	for _, c := range rep.Connections {
		got[c.Name] = c
	}
	for name, want := range map[string][2]string{
		"deferred":   {"no queue; each job runs in the dispatching process", "failed_jobs, if the failer runs"},
		"background": {"no queue; each job runs in a PHP process", "failed_jobs, if the failer runs"},
		"cloud":      {"Laravel Cloud's managed queue", "never failed_jobs: Laravel Cloud's failer sends them to Cloud"},
		"sqs":        {"Amazon SQS, a broker jobtriage does not read", "failed_jobs"},
		"beanstalkd": {"beanstalkd, a broker jobtriage does not read", "failed_jobs"},
	} {
		c := got[name]
		if c.Retry || !strings.HasPrefix(c.Destination, want[0]) || !strings.HasPrefix(c.Failures, want[1]) || !strings.Contains(c.Artisan, "php artisan queue:retry") {
			t.Errorf("%s: %+v, want destination %q, failures %q and the artisan command", name, c, want[0], want[1])
		}
	}
	if c := got["deferred"]; strings.Contains(c.Artisan, "queue:monitor") {
		t.Errorf("deferred: artisan %q offers a monitor of a queue that holds nothing", c.Artisan)
	}
	if c := got["failover"]; !c.Retry || !strings.Contains(c.Destination, "failed-jobs database") || !strings.Contains(c.Note, "jobs go to database") {
		t.Errorf("failover: %+v", c)
	}
	if c := got["to-sqs-first"]; !c.Retry || c.Monitor || !strings.Contains(c.Note, "would try sqs first") {
		t.Errorf("to-sqs-first: %+v, want retry via database, no monitor (its first is sqs)", c)
	}
	if c := got["nowhere"]; c.Retry || !strings.Contains(c.Note, `fails over to "sqs"`) || c.Destination != "the first of sqs that takes the job" {
		t.Errorf("nowhere: %+v", c)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n      failures: never failed_jobs: Laravel Cloud's failer sends them to Cloud") ||
		!strings.Contains(b.String(), "to-sqs-first: failover driver, queue default → table jobs in the failed-jobs database\n      retry: yes · monitor: no — connection to-sqs-first fails over to sqs, database") {
		t.Errorf("text lacks cloud's failures line:\n%s", b.String())
	}
}

// TestSecretExpressionsAreNotShown: a password written as an expression
// jobtriage cannot evaluate is listed among the settings without the
// expression, whose text can hold the secret's pieces.
func TestSecretExpressionsAreNotShown(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "artisan"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := "<?php\nreturn ['default' => 'mysql', 'connections' => ['mysql' => ['driver' => 'mysql', 'database' => 'app', 'password' => vault('pw-part-1')]]];\n"
	if err := os.WriteFile(filepath.Join(dir, "config", "database.php"), []byte(db), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := appprofile.Resolve(appprofile.Options{Dir: dir, Cwd: dir, DSN: "mysql://u@h/app"})
	if err != nil {
		t.Fatal(err)
	}
	in := inputs(database(nil))
	in.Config = cfg
	rep := build(t, in)
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "pw-part-1") {
		t.Errorf("the report shows the password's expression:\n%s", b.String())
	}
	for _, s := range rep.Settings {
		if s.Key == "database.connections.mysql.password" {
			if s.Value != "? (a secret's expression, not shown)" {
				t.Errorf("password setting = %q", s.Value)
			}
			return
		}
	}
	t.Errorf("no password setting in %v", rep.Settings)
}
