package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"
)

// ArchiveFlag is --archive: every row is appended whole and fsynced before its batch is deleted.
type ArchiveFlag struct {
	Path string
}

// register adds --archive; without toStdout (the TUI draws there) it offers no "-".
func (a *ArchiveFlag) register(cmd *cobra.Command, toStdout bool) {
	where := "a file, not stdout"
	if toStdout {
		where = "- for stdout"
	}
	cmd.Flags().StringVar(&a.Path, "archive", "", "before deleting, append every row whole to `PATH` and fsync it (NDJSON; gzip when PATH ends in .gz; "+where+")")
}

// set reports whether --archive was given.
func (a *ArchiveFlag) set() bool { return a.Path != "" }

// check refuses --archive - with --json: both would be stdout.
func (a *ArchiveFlag) check(jsonOut bool) error {
	if a.Path == archive.Stdout && jsonOut {
		return FlagErrorf("--archive - writes the archive to stdout, where --json would go too: archive to a file, or drop --json")
	}
	return nil
}

// out is where the report goes: stderr when the archive is stdout.
func (a *ArchiveFlag) out(ios *IOStreams) io.Writer {
	if a.Path == archive.Stdout {
		return ios.ErrOut
	}
	return ios.Out
}

// open opens the archive for appending, also as the triage.Archiver it is
// (nil, not a nil *archive.Writer, without --archive; Close takes nil).
func (a *ArchiveFlag) open(ios *IOStreams, now func() time.Time) (*archive.Writer, triage.Archiver, error) {
	if !a.set() {
		return nil, nil, nil
	}
	w, err := archive.Open(a.Path, ios.Out, now)
	if err != nil {
		return nil, nil, err
	}
	if w.Cut > 0 {
		fmt.Fprintf(ios.ErrOut, "archive %s: cut off a last batch without its trailer (%d bytes) left by an interrupted run; its rows were not deleted and are archived again\n", a.Path, w.Cut)
	}
	return w, w, nil
}

// args are the flag as the audit log records it.
func (a *ArchiveFlag) args() []string {
	if !a.set() {
		return nil
	}
	return []string{"--archive", a.Path}
}

// archiveDoc is the "archive" member of prune, flush and forget --json; null without --archive.
type archiveDoc struct {
	Path string `json:"path"`
	// Written counts the records appended (dry run: that would be).
	Written int64 `json:"written"`
	// Already counts deleted rows the archive held whole and identical (a
	// run interrupted before their delete committed), not written again.
	Already int64 `json:"already_archived"`
}

// doc is the archiveDoc of a dry run (its count) or a run (its writer).
func (a *ArchiveFlag) doc(w *archive.Writer, dryCount int64) *archiveDoc {
	switch {
	case !a.set():
		return nil
	case w == nil:
		return &archiveDoc{Path: a.Path, Written: dryCount}
	}
	return &archiveDoc{Path: a.Path, Written: w.Written, Already: w.Skipped}
}

// phrase is the text report's archive clause.
func (d *archiveDoc) phrase(dry bool) string {
	switch {
	case d == nil:
		return ""
	case dry:
		return fmt.Sprintf("; each row would first be archived to %s", d.Path)
	case d.Already > 0:
		return fmt.Sprintf("; archived to %s first (%s written, %s already there)", d.Path, countNoun(d.Written, "row"), countNoun(d.Already, "row"))
	}
	return fmt.Sprintf("; archived to %s first (%s written)", d.Path, countNoun(d.Written, "row"))
}
