// Command leakscope captures, ingests, analyses and serves Go leak
// evidence: pprof dumps, execution traces and eBPF event streams gathered
// into capture bundles.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

// command is one subcommand of the CLI.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the table of subcommands. Each lives in a file of its own
// (ingest.go, inspect.go, …) as runNAME.
var commands = map[string]command{
	"ingest":  {"turn pprof files, goroutine dumps and execution traces into a bundle", runIngest},
	"inspect": {"print a bundle's tables, row counts, sources and time range", runInspect},
	"capture": {"record a live Go process into a bundle (pprof, trace, eBPF)", runCapture},
	"upload":  {"send a bundle to a workbench", runUpload},
	"report":  {"write a leak report or postmortem of a bundle", runReport},
	"pack":    {"pack a bundle directory into one .tar.zst (or .tar.gz) archive", runPack},
	"serve":   {"serve the workbench in the browser", runServe},
	"agent":   {"watch Go processes on a node; capture, report and upload on growth or alert", runAgent},
	"export":  {"write bundles as Parquet (hive layout) for DuckDB, Trino, Spark, ClickHouse", runExport},
}

// usageError marks bad command-line usage; it makes the process exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	ctx, stop := signalContext()
	err := withGrace(ctx, stopGraceFrom(os.Getenv("LEAKSCOPE_STOP_GRACE")), func() error { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// signalled is the cause of main's context once SIGINT or SIGTERM came.
type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return "received " + s.sig.String() }

// signalContext returns a context cancelled, with a signalled cause, by
// the first SIGINT or SIGTERM; stop releases the signals.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := <-ch; ok {
			cancel(signalled{s.(syscall.Signal)})
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(ch)
		cancel(nil)
	}
}

// stopGrace is how long a command has, after SIGINT or SIGTERM, to stop
// on its own before the process exits without it: every command stops
// within a second. What a command writes survives a kill at any point
// (bundle transactions, a capture's flushed batches, the agent's spool,
// the workbench's store), so stopping where it stands loses only the work
// in flight.
const stopGrace = 800 * time.Millisecond

// stopGraceFrom is stopGrace, or the duration env gives
// (LEAKSCOPE_STOP_GRACE, e.g. "30s") for a machine too slow to close a
// bundle within it, such as one emulating another architecture.
func stopGraceFrom(env string) time.Duration {
	if d, err := time.ParseDuration(env); err == nil && d > 0 {
		return d
	}
	return stopGrace
}

// errStopped is the error of a command that did not stop within
// stopGrace of a signal.
var errStopped = errors.New("interrupted: stopped where it stood (what it had written is kept, as after a kill)")

// stoppedError is errStopped with the cause of the context's end (a
// signalled one for a signal).
type stoppedError struct{ cause error }

func (stoppedError) Error() string     { return errStopped.Error() }
func (stoppedError) Is(err error) bool { return err == errStopped }

// withGrace runs fn and returns its error; once ctx is done, it waits at
// most grace more for fn before returning errStopped (fn is left running:
// the process is about to exit).
func withGrace(ctx context.Context, grace time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return stoppedError{context.Cause(ctx)}
	}
}

// exitCode is the process's exit status for a command's err: 0, 1 for a
// failure, 2 for bad usage, and 128 plus the signal's number for a
// command the signal stopped where it stood, as a shell reports a process
// the signal killed.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	printLine(stderr, "leakscope:", err)
	var ue usageError
	var st stoppedError
	var sig signalled
	switch {
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &st) && errors.As(st.cause, &sig):
		return 128 + int(sig.sig)
	}
	return 1
}

// run dispatches to a subcommand; it is main without the process exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	if args[0] == "help" {
		return help(ctx, args[1:], stdout)
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(stdout, "leakscope", version())
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return unknownCommand(args[0], stderr)
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

// help implements "leakscope help [COMMAND]": the command's own --help,
// on standard output.
func help(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	if len(args) > 1 {
		return usagef("help: give one command, not %d", len(args))
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return unknownCommand(args[0], stdout)
	}
	err := cmd.run(ctx, []string{"--help"}, stdout, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// unknownCommand lists the commands and names the nearest one.
func unknownCommand(name string, w io.Writer) error {
	printUsage(w)
	if near := nearestCommand(name); near != "" {
		return usagef("unknown command %q; did you mean %q?", name, near)
	}
	return usagef("unknown command %q (run \"leakscope help\" for the list)", name)
}

// nearestCommand returns the command whose name is closest to name in
// edit distance (at most a third of its length, and at least one edit
// allowed), or one that name is a prefix of; "" when none is close.
func nearestCommand(name string) string {
	best, bestD := "", 1<<30
	for c := range commands {
		d := editDistance(strings.ToLower(name), c)
		if len(name) >= 2 && strings.HasPrefix(c, strings.ToLower(name)) {
			d = min(d, 1)
		}
		if d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	if bestD <= max(1, len(best)/3) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `leakscope finds goroutine and heap leaks in Go services from pprof dumps,
execution traces and eBPF events gathered into capture bundles.

Usage: leakscope COMMAND [flags] [args]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `  help     print this list, or a command's flags (help COMMAND)
  version  print leakscope's version (also --version)

Run "leakscope help COMMAND" (or "leakscope COMMAND --help") for a command's flags.
A BUNDLE is a bundle directory (NAME.lsb) or an archive of one (NAME.tar.zst).
Exit status: 0 success, 1 failure (reason on stderr), 2 bad usage,
130 (SIGINT) or 143 (SIGTERM) when stopped where it stood by the signal.
`)
}

// newFlagSet returns a flag set whose --help prints a usage line and
// description before the flags.
func newFlagSet(name, usage, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: leakscope %s\n\n%s\n", usage, description)
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(stderr, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments
// ("ingest a.pb.gz -o B"), and returns the positional arguments. Flag
// errors become usage errors.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}
