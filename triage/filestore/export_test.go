package filestore

// Len is the number of entries in the file.
func (s *Store) Len() int { return len(s.Rows) }

// Path is the file the store was read from.
func (s *Store) Path() string { return s.path }
