package phpconf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxConfigFiles bounds how many files EvalConfigDir reads; an app has a
// few dozen.
const maxConfigFiles = 1000

// EvalConfigDir evaluates every *.php file under configDir (normally
// ctx.Root/config) the way Laravel's LoadConfiguration loads them: config/queue.php becomes the key
// "queue", config/services/mail.php the key "services.mail" (nested), in
// natural order of those keys, so a file nested in a directory lands
// inside the array of a file of the directory's name. Each file is
// evaluated as ctx.Root/config/<name> whatever configDir is: positions
// read "config/queue.php", and __DIR__ is ctx.Root/config. A file that cannot be
// evaluated becomes a KindUnknown value under its key and its error is
// returned, joined with the others, next to the rest of the result.
func EvalConfigDir(configDir string, ctx EvalContext) (*Value, error) {
	dir := configDir
	type file struct{ key, rel, path string }
	var files []file
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") { // Symfony Finder skips dot files and directories
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".php") {
			return nil
		}
		if len(files) >= maxConfigFiles {
			return fmt.Errorf("more than %d config files", maxConfigFiles)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		key := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".php"), "/", ".")
		files = append(files, file{key: key, rel: "config/" + filepath.ToSlash(rel), path: path})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(files, func(i, j int) bool { return naturalLess(files[i].key, files[j].key) })
	root := &Value{Kind: KindArray, Pos: Pos{File: "config", Line: 1}}
	var errs []error
	for _, f := range files {
		var v *Value
		src, err := os.ReadFile(f.path)
		if err == nil && len(src) > maxSourceBytes {
			err = fmt.Errorf("%s: larger than %d bytes", f.rel, maxSourceBytes)
		}
		if err == nil {
			v, err = EvalConfig(f.rel, src, ctx)
		}
		if err != nil {
			errs = append(errs, err)
			v = &Value{Kind: KindUnknown, Pos: Pos{File: f.rel, Line: 1}, Expr: collapseExpr("require " + f.rel)}
		}
		setDotted(root, f.key, v)
	}
	return root, errors.Join(errs...)
}

// setDotted is Laravel's Arr::set: each dot-separated segment but the last
// names an array, created (or replacing a non-array) as needed.
func setDotted(root *Value, key string, v *Value) {
	segs := strings.Split(key, ".")
	cur := root
	for _, s := range segs[:len(segs)-1] {
		next := cur.entry(s)
		if next == nil || next.Kind != KindArray {
			next = &Value{Kind: KindArray, Pos: v.Pos}
			newArrayBuilder(cur).setExisting(s, next)
		}
		cur = next
	}
	newArrayBuilder(cur).setExisting(segs[len(segs)-1], v)
}

// naturalLess orders like PHP's SORT_NATURAL for file names: runs of
// digits compare by value, everything else byte by byte.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			da, db := digitRun(a), digitRun(b)
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}
