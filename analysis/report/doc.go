// Package report renders an [analysis.Report] as Markdown, self-contained
// HTML (inline CSS, SVG charts and flame graphs) or JSON, either as a leak
// report or as a postmortem write-up (summary, impact, timeline, root-cause
// candidates with stacks and source lines, evidence, usual fixes).
//
// The JSON form is the stable contract of `leakscope report --format json`
// (docs/DESIGN.md); the Markdown and HTML forms are for people and may
// change.
package report
