//go:build race

package dml_test

const raceEnabled = true
