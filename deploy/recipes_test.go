//go:build unix

// Package deploy holds the recipes of deploy/ (cron, systemd, Kubernetes, CI
// steps, Prometheus rules, a VHS tape); this test checks each one as far as
// this machine can: it runs what can run against a demo database, parses
// the rest, and checks every jobtriage command line with jobtriage's own
// command tree.
package deploy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/jobtriage/jobtriage/alerts/metrics"
	"github.com/jobtriage/jobtriage/cmd"
)

// demoRows is the number of failed jobs `jobtriage demo` writes.
const demoRows = 400

// ExitThreshold is monitor's "a threshold was crossed" (cmd/errors.go).
const exitThreshold = 8

// built is the jobtriage binary every test of this package runs, built
// once per test process on first use (binary) with the Dockerfile's
// source-stage command: the recipes run the static binary the image and the
// release archives ship, and TestDockerfile checks that same file.
var built struct {
	once    sync.Once
	dir     string // removed by TestMain
	path    string
	command string // the shell command that built it
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// dockerBuildLine finds the source stage's `CGO_ENABLED=0 … go build …`
// command in the Dockerfile.
var dockerBuildLine = regexp.MustCompile(`(?s)RUN (CGO_ENABLED=0 GOOS=\$TARGETOS GOARCH=\$TARGETARCH \\\s*go build [^\n]*)`)

// binary returns the path of the jobtriage binary, building it on the first
// call with the Dockerfile's build command for this machine's GOOS/GOARCH.
// Its flags (CGO_ENABLED=0, -trimpath) are .goreleaser.yaml's, so after
// .ci/run's snapshot build the compile is cached and only the link is left.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		df, err := os.ReadFile("../Dockerfile")
		if err != nil {
			built.err = err
			return
		}
		m := dockerBuildLine.FindStringSubmatch(string(df))
		if m == nil {
			built.err = errors.New("no CGO_ENABLED=0 go build in the Dockerfile's source stage")
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "jobtriage-deploy-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "jobtriage")
		built.command = strings.NewReplacer("\\\n", " ", "$TARGETOS", runtime.GOOS, "$TARGETARCH", runtime.GOARCH,
			"/out/jobtriage", built.path).Replace(m[1])
		c := exec.Command("/bin/sh", "-c", built.command)
		c.Dir = ".."
		if out, err := c.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("%s: %v\n%s", built.command, err, out)
		}
	})
	if built.err != nil {
		t.Fatalf("building jobtriage: %v", built.err)
	}
	return built.path
}

// demo creates a demo database in a new directory and returns its path.
func demo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobtriage-demo.sqlite")
	if out, err := exec.Command(binary(t), "demo", "--path", path).CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	return path
}

// shell runs line with /bin/sh as cron, CI runners and GitLab do, with
// jobtriage on PATH and env added; it returns the output and exit code.
func shell(t *testing.T, line string, env ...string) (string, string, int) {
	t.Helper()
	c := exec.Command("/bin/sh", "-c", line)
	c.Env = append(os.Environ(), append([]string{"PATH=" + filepath.Dir(binary(t)) + ":" + os.Getenv("PATH"), "NO_COLOR=1"}, env...)...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &ee):
		return out.String(), errOut.String(), ee.ExitCode()
	}
	t.Fatalf("%s: %v", line, err)
	return "", "", -1
}

// checkArgs parses a jobtriage command line (without the program name)
// with the real command tree: the command, every flag and the argument
// count must be valid.
func checkArgs(t *testing.T, args []string) {
	t.Helper()
	root := cmd.DocsTree()
	c, rest, err := root.Find(args)
	if err != nil || c == root {
		t.Errorf("jobtriage %s: no such command (%v)", strings.Join(args, " "), err)
		return
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Errorf("jobtriage %s: %v", strings.Join(args, " "), err)
		return
	}
	if err := c.ValidateArgs(c.Flags().Args()); err != nil {
		t.Errorf("jobtriage %s: %v", strings.Join(args, " "), err)
	}
}

func failedCount(t *testing.T, dsn string) int {
	t.Helper()
	out, err := exec.Command(binary(t), "failed", "--ndjson", "--dsn", dsn).Output()
	if err != nil {
		t.Fatalf("failed --ndjson: %v", err)
	}
	return bytes.Count(out, []byte("\n"))
}

// gzipRecords counts the records of a gzip archive (not its batch trailers).
func gzipRecords(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return bytes.Count(b, []byte("\n")) - bytes.Count(b, []byte(`"trailer":`))
}

// TestCrontab runs each crontab line as cron would (/bin/sh, \% → %), with
// its paths moved into a temporary directory and the environment file
// naming a demo database.
func TestCrontab(t *testing.T) {
	text, err := os.ReadFile("cron/jobtriage.crontab")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") || regexp.MustCompile(`^[A-Z_]+=`).MatchString(l) {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 {
		t.Fatalf("want the prune, the metrics and the expiry line, got %d: %q", len(lines), lines)
	}
	db := demo(t)
	tmp := t.TempDir()
	env := filepath.Join(tmp, "jobtriage.env")
	if err := os.WriteFile(env, []byte("JOBTRIAGE_DSN=sqlite:"+db+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"backups", "log", "textfile", "bin"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// date answers for the night the test says (GNU date -d): the prune
	// line runs on two nights of two months.
	fakeDate := "#!/bin/sh\nexec /bin/date -d \"$FAKE_DAY\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(tmp, "bin", "date"), []byte(fakeDate), 0o755); err != nil {
		t.Fatal(err)
	}
	moved := strings.NewReplacer(`\%`, "%", "/etc/jobtriage/jobtriage.env", env, "/var/backups/jobtriage", tmp+"/backups",
		"/var/log/jobtriage", tmp+"/log", "/var/lib/node_exporter/textfile", tmp+"/textfile")
	on := func(day string) []string {
		return []string{"FAKE_DAY=" + day, "PATH=" + tmp + "/bin:" + filepath.Dir(binary(t)) + ":" + os.Getenv("PATH")}
	}
	exec := func(command string, env ...string) {
		t.Helper()
		if out, errOut, code := shell(t, command, env...); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", command, code, out, errOut)
		}
	}
	cronCommand := func(line string) string {
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("not a crontab line (5 time fields, a command): %q", line)
		}
		command := moved.Replace(strings.Join(f[5:], " "))
		if strings.Contains(command, "%") && !strings.Contains(command, "date +%") {
			t.Errorf("unescaped %% in %q: cron would cut the command there", line)
		}
		return command
	}
	run := func(line string, env ...string) string {
		t.Helper()
		command := cronCommand(line)
		exec(command, env...)
		return command
	}

	prune := run(lines[0], on("2026-11-30")...)
	if !strings.Contains(prune, " prune ") || !strings.Contains(prune, "--archive") || !strings.Contains(prune, "--yes") {
		t.Errorf("first line is not an archived prune for cron: %s", prune)
	}
	// As printed it keeps a week, and the demo spans less; the same line
	// keeping 48 hours, then on the next night (in the next month) 24,
	// shows that each night archives to a file of its own, each month
	// audits to one, and archived rows + remaining rows = all.
	exec(strings.Replace(prune, "--hours 168", "--hours 48", 1), on("2026-11-30")...)
	exec(strings.Replace(prune, "--hours 168", "--hours 24", 1), on("2026-12-01")...)
	archived := 0
	for _, day := range []string{"2026-11-30", "2026-12-01"} {
		n := gzipRecords(t, filepath.Join(tmp, "backups", "failed-"+day+".ndjson.gz"))
		if n == 0 {
			t.Errorf("the night of %s archived nothing to its own file", day)
		}
		archived += n
	}
	if archives, _ := filepath.Glob(filepath.Join(tmp, "backups", "*")); len(archives) != 2 {
		t.Errorf("want one archive per night, got %v", archives)
	}
	if left := failedCount(t, "sqlite:"+db); archived+left != demoRows {
		t.Errorf("archived %d + left %d, want %d", archived, left, demoRows)
	}
	for _, month := range []string{"2026-11", "2026-12"} {
		if b, err := os.ReadFile(filepath.Join(tmp, "log", "audit-"+month+".log")); err != nil || !bytes.Contains(b, []byte(`"prune"`)) {
			t.Errorf("audit log of %s: %v %s", month, err, b)
		}
	}

	// The expiry line deletes the archives past their retention, and only
	// them: a fresh archive and a file that is not an archive stay.
	old := time.Now().AddDate(0, 0, -100)
	for _, name := range []string{"failed-2026-08-01.ndjson.gz", "notes.txt"} {
		p := filepath.Join(tmp, "backups", name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	expire := run(lines[2])
	if !strings.Contains(expire, "find ") || !strings.Contains(expire, "-delete") {
		t.Errorf("third line is not the archives' expiry: %s", expire)
	}
	got, _ := filepath.Glob(filepath.Join(tmp, "backups", "*"))
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	if want := []string{"failed-2026-11-30.ndjson.gz", "failed-2026-12-01.ndjson.gz", "notes.txt"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after the expiry line: %v, want %v", got, want)
	}

	run(lines[1])
	prom, err := os.ReadFile(filepath.Join(tmp, "textfile", "jobtriage.prom"))
	if err != nil || !bytes.Contains(prom, []byte("jobtriage_")) {
		t.Errorf("textfile metrics: %v\n%s", err, prom)
	}
}

// TestSystemdUnit: systemd-analyze verify (the unit's ExecStart pointed at
// the built binary), then the ExecStart itself against a demo database:
// /healthz answers 200 and /metrics serves the queue gauges.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("systemd/jobtriage-watch.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Restart=on-failure", "EnvironmentFile=/etc/jobtriage/jobtriage.env", "ExecStart=/usr/bin/jobtriage "} {
		if !bytes.Contains(unit, []byte(want)) {
			t.Errorf("unit lacks %q", want)
		}
	}
	var execStart string
	for _, l := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			execStart = v
		}
	}
	args := strings.Fields(execStart)[1:]
	checkArgs(t, args)

	t.Run("systemd-analyze verify", func(t *testing.T) {
		if _, err := exec.LookPath("systemd-analyze"); err != nil {
			t.Skip("systemd-analyze is not installed here")
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "jobtriage-watch.service")
		if err := os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/bin/jobtriage"), []byte(binary(t))), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	})

	t.Run("ExecStart serves /healthz and /metrics", func(t *testing.T) {
		db := demo(t)
		addr := freeAddr(t)
		state := t.TempDir()
		for i, a := range args {
			args[i] = strings.NewReplacer("%S", state, "127.0.0.1:9187", addr).Replace(a)
		}
		c := exec.Command(binary(t), args...)
		c.Env = append(os.Environ(), "JOBTRIAGE_DSN=sqlite:"+db, "NO_COLOR=1")
		cacheRoot := t.TempDir()
		for _, l := range strings.Split(string(unit), "\n") {
			if kv, ok := strings.CutPrefix(l, "Environment="); ok {
				c.Env = append(c.Env, strings.ReplaceAll(kv, "%C", cacheRoot))
			}
		}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = c.Process.Signal(syscall.SIGTERM)
			_ = c.Wait()
		}()
		waitGet(t, "http://"+addr+metrics.PathHealth, &out)
		m := waitGet(t, "http://"+addr+metrics.PathMetrics, &out)
		if !strings.Contains(m, `jobtriage_queue_jobs{connection=`) || !strings.Contains(m, "jobtriage_build_info") {
			t.Errorf("/metrics lacks the queue gauges or build info:\n%s", m)
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// waitGet polls url until it answers 200 with what the first check read.
func waitGet(t *testing.T, url string, log *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (!strings.HasSuffix(url, metrics.PathMetrics) || bytes.Contains(b, []byte("jobtriage_queue_jobs"))) {
				return string(b)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within 20 s (%v); watcher output:\n%s", url, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, d)
	}
	return docs
}

// dig follows keys through nested maps; nil when a key is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("not a list: %#v", v)
	}
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = fmt.Sprint(x)
	}
	return out
}

// checkPod checks a pod spec: non-root, and each container with an image,
// jobtriage args the command tree accepts, no privilege escalation.
func checkPod(t *testing.T, name string, pod any) []map[string]any {
	t.Helper()
	if dig(pod, "securityContext", "runAsNonRoot") != true {
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", name)
	}
	cs, _ := dig(pod, "containers").([]any)
	if len(cs) == 0 {
		t.Fatalf("%s: no containers", name)
	}
	volumes := map[string]bool{}
	for _, v := range asList(dig(pod, "volumes")) {
		volumes[fmt.Sprint(dig(v, "name"))] = true
	}
	var out []map[string]any
	for _, c := range cs {
		cm := c.(map[string]any)
		for _, m := range asList(cm["volumeMounts"]) {
			if !volumes[fmt.Sprint(dig(m, "name"))] {
				t.Errorf("%s: volumeMount %v names no volume of the pod", name, dig(m, "name"))
			}
		}
		if img, _ := cm["image"].(string); !strings.HasPrefix(img, "ghcr.io/jobtriage/jobtriage:") {
			t.Errorf("%s: image %q", name, img)
		}
		if dig(cm, "securityContext", "allowPrivilegeEscalation") != false {
			t.Errorf("%s: allowPrivilegeEscalation is not false", name)
		}
		checkArgs(t, strs(t, cm["args"]))
		out = append(out, cm)
	}
	return out
}

func TestKubernetesManifests(t *testing.T) {
	for _, path := range []string{"kubernetes/prune-cronjob.yaml", "kubernetes/watch-deployment.yaml"} {
		docs := yamlDocs(t, path)
		var podLabels map[string]any
		for _, d := range docs {
			kind, _ := d["kind"].(string)
			name := fmt.Sprintf("%s %s/%v", path, kind, dig(d, "metadata", "name"))
			if d["apiVersion"] == nil || kind == "" || dig(d, "metadata", "name") == nil {
				t.Errorf("%s: apiVersion, kind and metadata.name are required", name)
			}
			switch kind {
			case "CronJob":
				if d["apiVersion"] != "batch/v1" || len(strings.Fields(fmt.Sprint(dig(d, "spec", "schedule")))) != 5 {
					t.Errorf("%s: apiVersion %v, schedule %v", name, d["apiVersion"], dig(d, "spec", "schedule"))
				}
				pod := dig(d, "spec", "jobTemplate", "spec", "template", "spec")
				if rp := dig(pod, "restartPolicy"); rp != "OnFailure" && rp != "Never" {
					t.Errorf("%s: a Job's restartPolicy must be OnFailure or Never, got %v", name, rp)
				}
				for _, c := range checkPod(t, name, pod) {
					runCronJobArgs(t, c)
				}
				for _, c := range asList(dig(pod, "initContainers")) {
					runExpiry(t, name, c)
				}
			case "Deployment":
				podLabels, _ = dig(d, "spec", "template", "metadata", "labels").(map[string]any)
				sel, _ := dig(d, "spec", "selector", "matchLabels").(map[string]any)
				if len(sel) == 0 || !subset(sel, podLabels) {
					t.Errorf("%s: selector %v does not match the pod labels %v", name, sel, podLabels)
				}
				for _, c := range checkPod(t, name, dig(d, "spec", "template", "spec")) {
					ports := map[string]bool{}
					for _, p := range c["ports"].([]any) {
						ports[fmt.Sprint(dig(p, "name"))] = true
					}
					for _, probe := range []string{"livenessProbe", "readinessProbe"} {
						if dig(c, probe, "httpGet", "path") != metrics.PathHealth || !ports[fmt.Sprint(dig(c, probe, "httpGet", "port"))] {
							t.Errorf("%s: %s is not GET %s on a declared port", name, probe, metrics.PathHealth)
						}
					}
				}
			case "Service":
				sel, _ := dig(d, "spec", "selector").(map[string]any)
				if len(sel) == 0 || !subset(sel, podLabels) {
					t.Errorf("%s: selector %v does not match the Deployment's pods %v", name, sel, podLabels)
				}
			default:
				t.Errorf("%s: unexpected kind", name)
			}
		}
	}
}

func subset(a, b map[string]any) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// jobNameLabel is the label Kubernetes puts on a Job's pods: the Job's
// name, which a CronJob makes unique per scheduled run.
const jobNameLabel = "metadata.labels['batch.kubernetes.io/job-name']"

// runCronJobArgs runs the CronJob container's arguments on two nights, two
// Jobs, against a demo database, the archive volume moved to a temporary
// directory: each $(VAR) is expanded as Kubernetes does, from the
// container's env, where a variable read from the Job's name differs per
// night. Each night must write an archive of its own.
func runCronJobArgs(t *testing.T, c map[string]any) {
	t.Helper()
	db, dir := demo(t), t.TempDir()
	archives := map[string]bool{}
	for night := 1; night <= 2; night++ {
		vars := map[string]string{}
		for _, e := range asList(c["env"]) {
			switch {
			case dig(e, "valueFrom", "fieldRef", "fieldPath") == jobNameLabel:
				vars[fmt.Sprint(dig(e, "name"))] = fmt.Sprintf("jobtriage-prune-%d", 29410000+night*1440)
			case dig(e, "value") != nil:
				vars[fmt.Sprint(dig(e, "name"))] = fmt.Sprint(dig(e, "value"))
			}
		}
		args := strs(t, c["args"])
		for i := range args {
			args[i] = strings.Replace(k8sExpand(args[i], vars), "/archive/", dir+"/", 1)
			if strings.Contains(args[i], "$(") {
				t.Errorf("%s: a $(VAR) the container's env does not define", args[i])
			}
			if i > 0 && args[i-1] == "--archive" {
				archives[args[i]] = true
			}
		}
		out, err := exec.Command(binary(t), append(args, "--dsn", "sqlite:"+db)...).CombinedOutput()
		if err != nil {
			t.Fatalf("night %d: jobtriage %s: %v\n%s", night, strings.Join(args, " "), err, out)
		}
	}
	if len(archives) != 2 {
		t.Errorf("two nights archived to %v, want a file each", archives)
	}
}

// k8sExpand expands $(NAME) as Kubernetes does in a container's args.
func k8sExpand(s string, vars map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// runExpiry runs an init container's command on this machine, /archive
// moved to a temporary directory: it must delete the prune's archives past
// their retention and nothing else.
func runExpiry(t *testing.T, name string, c any) {
	t.Helper()
	dir := t.TempDir()
	old := time.Now().AddDate(0, 0, -100)
	files := map[string]bool{"jobtriage-prune-29000000.ndjson.gz": false, "jobtriage-prune-29410000.ndjson.gz": true, "lost+found.txt": true}
	for f, fresh := range files {
		p := filepath.Join(dir, f)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if !fresh || f == "lost+found.txt" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	files["lost+found.txt"] = true // old, but not an archive: kept
	command := strs(t, dig(c, "command"))
	for i := range command {
		command[i] = strings.Replace(command[i], "/archive", dir, 1)
	}
	if out, err := exec.Command(command[0], command[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %v\n%s", name, command, err, out)
	}
	for f, keep := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != keep {
			t.Errorf("%s: after %v, %s exists: %v, want %v", name, command, f, err == nil, keep)
		}
	}
}

// TestRecipesRotateWhatTheyAppendTo: every file a recipe has jobtriage
// append to (an --archive, an --audit-log) is named per run, day or month
// ($(date …) in a shell, $(VAR) from the Job's name in Kubernetes), so no
// recipe grows one file forever. (Files written whole — the textfile
// metrics, the watcher's --state-file — are replaced, not appended to.)
func TestRecipesRotateWhatTheyAppendTo(t *testing.T) {
	appendFlag := regexp.MustCompile(`--(archive|audit-log)(?:=|\s+|",\s*")([^\s"',\]]+)`)
	found := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range appendFlag.FindAllStringSubmatch(string(b), -1) {
			found++
			if !strings.Contains(m[2], "$(") {
				t.Errorf("%s: --%s %s is one file every run appends to: name it per run or day", path, m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 3 { // the crontab's archive and audit log, the CronJob's archive
		t.Errorf("found %d --archive/--audit-log values in deploy/, want at least 3", found)
	}
}

// gate is a CI step's shell script and its environment.
type gate struct {
	script string
	env    map[string]string
}

// runGate runs a gate on a demo database, first as configured (the demo's
// pending jobs wait about an hour, past the default --max-age: the deploy
// must fail with exit 8 naming the breach), then with MAX_WAIT raised past
// it (it must pass).
func runGate(t *testing.T, g gate) {
	t.Helper()
	db := demo(t)
	for _, tc := range []struct {
		maxWait string
		code    int
	}{{"", exitThreshold}, {"3h", 0}} {
		env := []string{"JOBTRIAGE_DSN=sqlite:" + db}
		for k, v := range g.env {
			if k == "MAX_WAIT" && tc.maxWait != "" {
				v = tc.maxWait
			}
			if k != "JOBTRIAGE_DSN" {
				env = append(env, k+"="+v)
			}
		}
		out, errOut, code := shell(t, g.script, env...)
		if code != tc.code {
			t.Errorf("gate with %v: exit %d, want %d\n%s%s", env, code, tc.code, out, errOut)
		}
		if tc.code == exitThreshold && !strings.Contains(errOut, "oldest_pending_age") {
			t.Errorf("the failing gate does not name the breach:\n%s", errOut)
		}
		if !strings.Contains(out, "default") {
			t.Errorf("the gate printed no queue table:\n%s", out)
		}
	}
}

// ghDefault is the fallback of `${{ vars.X || 'default' }}`.
var ghDefault = regexp.MustCompile(`\|\|\s*'([^']*)'`)

func TestGitHubActionsQueueGate(t *testing.T) {
	docs := yamlDocs(t, "ci/github-actions-queue-gate.yml")
	steps, _ := dig(docs[0], "jobs", "queue-gate", "steps").([]any)
	if dig(docs[0], "jobs", "deploy", "needs") != "queue-gate" {
		t.Error("the deploy job does not need the queue gate")
	}
	var g *gate
	for _, s := range steps {
		if dig(s, "name") == "Fail the deploy when a queue is backed up" {
			g = &gate{script: fmt.Sprint(dig(s, "run")), env: map[string]string{}}
			for k, v := range dig(s, "env").(map[string]any) {
				if m := ghDefault.FindStringSubmatch(fmt.Sprint(v)); m != nil {
					g.env[k] = m[1]
				}
			}
		}
	}
	if g == nil || len(g.env) != 3 {
		t.Fatalf("no gate step with three thresholds: %+v", g)
	}
	runGate(t, *g)
}

func TestGitLabCIQueueGate(t *testing.T) {
	docs := yamlDocs(t, "ci/gitlab-ci-queue-gate.yml")
	job := dig(docs[0], "queue-gate")
	if dig(docs[0], "deploy", "stage") != "deploy" || fmt.Sprint(dig(docs[0], "deploy", "needs")) != "[queue-gate]" {
		t.Error("the deploy job does not need the queue gate")
	}
	g := gate{script: "set -e\n" + strings.Join(strs(t, dig(job, "script")), "\n"), env: map[string]string{}}
	for k, v := range dig(job, "variables").(map[string]any) {
		g.env[k] = fmt.Sprint(v)
	}
	runGate(t, g)
}

// metricName finds the jobtriage metrics an expression reads.
var metricName = regexp.MustCompile(`\bjobtriage_[a-z_]+\b`)

// byLabels finds the labels of `by (…)`.
var byLabels = regexp.MustCompile(`by \(([^)]*)\)`)

// TestPrometheusRules: every rule is complete, and reads only metrics and
// labels the exporter (alerts/metrics) serves; promtool checks and
// unit-tests the rules where it is installed.
func TestPrometheusRules(t *testing.T) {
	e := metrics.New(metrics.Options{Build: metrics.Build{Version: "1", Commit: "c", GoVersion: "go"}, Stale: time.Minute, Now: time.Now})
	e.Register("")
	e.Succeeded("", metrics.Check{At: time.Now(), Holding: true, Window: time.Minute, FailedWindow: 1,
		Queues: []metrics.Queue{{Connection: "database", Queue: "default", Pending: 1, Stuck: 1}}})
	e.CountFailure("", "database", "default")
	e.Failed("")
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]map[string]bool{} // metric → its labels
	for _, mf := range mfs {
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		served[mf.GetName()] = labels
	}

	docs := yamlDocs(t, "prometheus/jobtriage-alerts.yml")
	n := 0
	for _, grp := range docs[0]["groups"].([]any) {
		for _, r := range dig(grp, "rules").([]any) {
			n++
			name, expr := fmt.Sprint(dig(r, "alert")), fmt.Sprint(dig(r, "expr"))
			if dig(r, "alert") == nil || dig(r, "expr") == nil || dig(r, "for") == nil ||
				dig(r, "labels", "severity") == nil || dig(r, "annotations", "summary") == nil {
				t.Errorf("%s: alert, expr, for, labels.severity and annotations.summary are required", name)
			}
			for _, m := range metricName.FindAllString(expr, -1) {
				labels, ok := served[m]
				if !ok {
					t.Errorf("%s reads %s, which jobtriage does not serve", name, m)
					continue
				}
				for _, by := range byLabels.FindAllStringSubmatch(expr, -1) {
					for _, l := range strings.Split(by[1], ",") {
						// context is added when the watcher runs in contexts.
						if l = strings.TrimSpace(l); l != "context" && !labels[l] {
							t.Errorf("%s groups %s by %q, a label it does not have (%v)", name, m, l, labels)
						}
					}
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d rules", n)
	}

	t.Run("promtool", func(t *testing.T) {
		if _, err := exec.LookPath("promtool"); err != nil {
			t.Skip("promtool is not installed here (Debian: apt-get install prometheus)")
		}
		for _, args := range [][]string{{"check", "rules", "jobtriage-alerts.yml"}, {"test", "rules", "jobtriage-alerts.test.yml"}} {
			c := exec.Command("promtool", args...)
			c.Dir = "prometheus"
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	})
}

// TestVHSTape: the tape uses VHS commands only, and what it types into the
// shell runs against a demo database (the TUI on a demo database it made).
func TestVHSTape(t *testing.T) {
	text, err := os.ReadFile("vhs/demo.tape")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"Output": true, "Require": true, "Set": true, "Type": true, "Sleep": true, "Enter": true,
		"Hide": true, "Show": true, "Down": true, "Up": true, "Escape": true, "Tab": true, "Ctrl+C": true, "Screenshot": true}
	var typed []string
	for i, l := range strings.Split(string(text), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		word := strings.Fields(l)[0]
		if !known[word] {
			t.Errorf("demo.tape:%d: unknown command %q", i+1, word)
		}
		if word == "Type" {
			typed = append(typed, strings.Trim(strings.TrimSpace(strings.TrimPrefix(l, "Type")), `"`))
		}
	}
	var tui bool
	for _, s := range typed {
		if !strings.HasPrefix(s, "jobtriage ") {
			continue
		}
		args := strings.Fields(s)[1:]
		checkArgs(t, args)
		if args[0] == "tui" {
			tui = true
			if !strings.Contains(s, "sqlite:jobtriage-demo.sqlite") {
				t.Errorf("the tape's TUI is not on the demo database: %s", s)
			}
		}
	}
	if !tui {
		t.Error("the tape never starts the TUI")
	}
	// The hidden set-up line makes the demo database the TUI opens.
	dir := t.TempDir()
	setup := strings.Replace(typed[0], "$(mktemp -d)", dir, 1)
	setup = strings.TrimSuffix(setup, " && clear")
	if out, errOut, code := shell(t, setup); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", setup, code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "jobtriage-demo.sqlite")); err != nil {
		t.Errorf("the set-up line made no demo database: %v", err)
	}
}
