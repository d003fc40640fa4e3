package analysis

// Plural writes a count with its noun for people: "1 goroutine",
// "2 goroutines", "2.5 minutes". Every view (CLI, reports, the workbench's
// answers) words counts through it.
func Plural(n float64, noun string) string { return plural(n, noun) }
