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
	"syscall"
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
	"serve":   {"serve the workbench in the browser", runServe},
	"agent":   {"watch Go processes on a node; capture, report and upload on growth or alert", runAgent},
	"export":  {"write bundles as Parquet (hive layout) for DuckDB, Trino, Spark, ClickHouse", runExport},
}

// usageError marks bad command-line usage; it makes the process exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "leakscope:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// run dispatches to a subcommand; it is main without the process exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(stdout, "leakscope", version())
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		printUsage(stderr)
		return usagef("unknown command %q", args[0])
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
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
	fmt.Fprint(w, `
Run "leakscope COMMAND --help" for a command's flags.
Exit status: 0 success, 1 failure (reason on stderr), 2 bad usage.
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
