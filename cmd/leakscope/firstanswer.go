package main

import (
	"io"
	"time"

	"github.com/leakscope/leakscope/agent"
	"github.com/leakscope/leakscope/analysis"
)

// firstAnswerHook is capture's FirstDump for --first-answer FILE: the
// preliminary report, and a line on stderr saying where and what it
// found.
func firstAnswerHook(file string, stderr io.Writer) func(string) {
	start := time.Now()
	return func(dir string) {
		rep, err := agent.WriteFirstAnswer(dir, file, analysis.Options{})
		if err != nil {
			printf(stderr, "first answer: %v\n", err)
			return
		}
		printf(stderr, "first answer after %s: %s; preliminary report %s\n", time.Since(start).Round(100*time.Millisecond), agent.TopSuspect(rep), file)
	}
}
