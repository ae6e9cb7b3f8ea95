package sqlstore

// DefaultMySQLSockets lets the external tests point the "localhost" socket
// search at paths of their choosing.
var DefaultMySQLSockets = &defaultMySQLSockets
