package cmd

// SetStdoutTTY, SetStdinTTY and SetStderrTTY let tests pretend; nothing
// but tests sets what isatty reported.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }
func (s *IOStreams) SetStdinTTY(v bool)  { s.stdinTTY = v }
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }
