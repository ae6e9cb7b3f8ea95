package sqlstore

// DefaultMySQLSockets lets the external tests point the "localhost" socket
// search at paths of their choosing.
var DefaultMySQLSockets = &defaultMySQLSockets

// SetLiveIDsConcatMax sets the store's group_concat_max_len for the live
// ids (a small one cuts the list, which must then be read as rows).
func SetLiveIDsConcatMax(s *Store, v string) { s.liveIDsConcatMax = v }
