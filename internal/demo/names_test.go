package demo

// ScenarioNames lists every kind of failure the generator knows (the tests
// walk them all; callers name them by the Scenario* constants).
func ScenarioNames() []string {
	var names []string
	for _, s := range scenarios() {
		names = append(names, s.name)
	}
	return names
}
