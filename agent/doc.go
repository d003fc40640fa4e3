// Package agent is leakscope's node agent: it watches chosen Go processes
// (by pid, by executable name, or every Go process serving net/http/pprof),
// keeps a cheap rolling watch of their goroutine count and heap in use,
// and on a trigger — its own growth rule or an Alertmanager webhook —
// captures the process, writes the leak report and postmortem, and uploads
// the bundle to a workbench through a bounded spool directory.
package agent
