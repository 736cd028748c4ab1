//go:build !race

package dml_test

const raceEnabled = false
