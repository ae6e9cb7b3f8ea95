package triage_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/jobtriage/jobtriage/"

// domainPackages are the domain: triage and the pure parsers it is built
// on. None may depend, even indirectly, on an outerLayer package.
var domainPackages = []string{
	"triage", "triage/payload", "triage/phpser", "triage/exception",
	"triage/signature", "triage/sanitize", "triage/redact",
}

// outerLayers are the import paths the domain never reaches, each with the
// reason, in go list's notation ("p/..." is p and every package under it).
// The adapters implement the domain's interfaces; the rest drive it or feed
// it. database/sql alone is SQL access: database/sql/driver holds the
// interfaces a colour library the sanitizer uses implements.
var outerLayers = map[string]string{
	module + "triage/sqlstore/...":           "an adapter (the SQL store)",
	module + "triage/redisqueue/...":         "an adapter (the Redis queue backend)",
	module + "triage/filestore/...":          "an adapter (the file failed-job store)",
	module + "triage/memstore/...":           "an adapter's core (the in-memory reads of filestore and the fake)",
	module + "internal/demo/...":             "the demo generator",
	module + "internal/appprofile/...":       "the Laravel app's configuration reader",
	module + "internal/contexts/...":         "jobtriage's contexts file",
	module + "cmd/...":                       "the command line",
	module + "tui/...":                       "the terminal UI",
	module + "alerts/...":                    "alerting",
	"github.com/spf13/cobra/...":             "the command-line framework",
	"github.com/charmbracelet/bubbletea/...": "the terminal UI framework",
	"database/sql":                           "SQL",
	"github.com/jmoiron/sqlx/...":            "SQL",
	"github.com/lib/pq/...":                  "a SQL driver",
	"github.com/go-sql-driver/mysql/...":     "a SQL driver",
	"modernc.org/sqlite/...":                 "a SQL driver",
	"github.com/jackc/pgx/...":               "a SQL driver",
	"github.com/mattn/go-sqlite3/...":        "a SQL driver",
	"github.com/redis/go-redis/...":          "the Redis client",
}

// outerLayer reports the reason path is outside the domain, or "".
func outerLayer(path string) string {
	for p, why := range outerLayers {
		if base, tree := strings.CutSuffix(p, "/..."); path == p || tree && (path == base || strings.HasPrefix(path, base+"/")) {
			return why
		}
	}
	return ""
}

// TestDomainImportsNoOuterLayer: the domain's packages, through every
// import of their non-test files however indirect, reach no adapter, no
// configuration reader, no demo generator, no command line, UI or
// alerting, and none of the frameworks and clients those use. A failure
// names the chain of imports that leads there.
func TestDomainImportsNoOuterLayer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test lists the domain's imports with the go command, which is not on PATH: %v", err)
	}
	args := []string{"list", "-deps", "-json=ImportPath,Imports"}
	for _, p := range domainPackages {
		args = append(args, "./"+p)
	}
	c := exec.Command(goBin, args...)
	c.Dir = ".." // the module root
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -json: %v", err)
		}
		imports[p.ImportPath] = p.Imports
	}
	for _, p := range domainPackages {
		if _, ok := imports[module+p]; !ok {
			t.Fatalf("go list did not list %s; is the module root right?", p)
		}
	}
	for _, p := range domainPackages {
		// Breadth first, so the chain reported is a shortest one.
		from := map[string]string{module + p: ""}
		queue := []string{module + p}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, imp := range imports[cur] {
				if _, seen := from[imp]; seen {
					continue
				}
				from[imp] = cur
				if why := outerLayer(imp); why != "" {
					chain := imp
					for at := cur; at != ""; at = from[at] {
						chain = strings.TrimPrefix(at, module) + " → " + chain
					}
					t.Errorf("%s reaches %s, %s: %s", p, imp, why, chain)
					continue
				}
				queue = append(queue, imp)
			}
		}
	}
}
