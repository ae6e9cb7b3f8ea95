package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/internal/atomicfile"
)

// stateVersion is the version of the state file's format; a file of another
// version is ignored (and replaced at the next save).
const stateVersion = 1

// maxStateBytes bounds what is read of a state file: it holds at most
// maxKeys keys of bounded size, so anything larger is not ours.
const maxStateBytes = 16 << 20

// DefaultStatePath is the state file of app under the user state directory
// ($XDG_STATE_HOME, else ~/.local/state, read through getenv): one file per
// app, named by a hash of its ID, so watchers of two apps on one machine
// keep apart. "" when there is no such directory (state in memory only).
func DefaultStatePath(getenv func(string) string, app alerts.App) string {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(app.ID()))
	return filepath.Join(dir, "jobtriage", "watch-"+hex.EncodeToString(sum[:6])+".json")
}

// stateFile is the persisted alert state: every pending or firing key and
// the detail its alerts carry. Writer and Seq say who saved it last, so a
// watcher that took the lock back can tell whether another one notified in
// between.
type stateFile struct {
	Version int          `json:"version"`
	App     alerts.App   `json:"app"`
	Writer  string       `json:"writer"`
	Seq     int64        `json:"seq"`
	SavedAt time.Time    `json:"saved_at"`
	LastID  int64        `json:"last_id"`
	Keys    []stateEntry `json:"keys"`
}

type stateEntry struct {
	alerts.Saved
	Detail alerts.Detail `json:"detail"`
}

// loadState reads path; a missing file is no state. A file of another
// version or another app is ignored with ok false.
func loadState(path string, app alerts.App) (st stateFile, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stateFile{}, false, nil
	}
	if err != nil {
		return stateFile{}, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return stateFile{}, false, err
	}
	if !info.Mode().IsRegular() || info.Size() > maxStateBytes {
		return stateFile{}, false, fmt.Errorf("%s is not a jobtriage state file", path)
	}
	if err := json.NewDecoder(f).Decode(&st); err != nil {
		return stateFile{}, false, fmt.Errorf("%s is unreadable: %w", path, err)
	}
	if st.Version != stateVersion || st.App.ID() != app.ID() {
		return stateFile{}, false, nil
	}
	return st, true, nil
}

// saveState writes st atomically, so a crash leaves the old state or the new
// one. The file is private (0600): it holds job class names and exception
// messages.
func saveState(path string, st stateFile) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o600)
}
