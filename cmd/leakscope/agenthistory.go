package main

import (
	"flag"

	"github.com/leakscope/leakscope/agent"
)

// historyFlags adds the agent's history flags to fs and returns the
// configuration they give once fs is parsed.
func historyFlags(fs *flag.FlagSet) func() agent.HistoryConfig {
	var (
		keep     = agent.DefaultHistory
		maxBytes = byteSize(agent.DefaultHistoryMax)
		grace    = agent.DefaultHistoryGrace
	)
	fs.DurationVar(&keep, "history", keep, "how far back the rolling history of each process's goroutine and heap profiles reaches; every capture starts with it (0 = no history)")
	fs.Var(&maxBytes, "history-max", "largest size of the history on disk in `bytes`, all processes together; one process takes at most an eighth (suffixes K, M, G, T)")
	fs.DurationVar(&grace, "history-grace", grace, "how long the history of a process that exited is kept")
	return func() agent.HistoryConfig {
		return agent.HistoryConfig{Keep: keep, MaxBytes: int64(maxBytes), Grace: grace}
	}
}
