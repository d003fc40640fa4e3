// Package export writes capture bundles in formats that query engines read
// directly, so many nodes' captures can be queried together: every table
// as Parquet in a hive layout (node=…/capture=…/TABLE.parquet), plus the
// analysis report's suspects and a one-row captures table.
package export
