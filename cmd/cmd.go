// Package cmd is jobtriage's command line: flags, IO streams, output formats
// and exit codes. It never writes SQL; it wires a triage.Store lazily.
package cmd

// ExitCode is the process exit status; README documents every value.
type ExitCode int

// Main runs the command line and returns the exit code.
func Main() ExitCode {
	return 0
}
