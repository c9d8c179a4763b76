// Package report turns experiment results into the files that go with
// BENCHMARKS.md: a CSV table and a PNG line plot (drawn with gonum/plot).
package report
