// Package multiwriter runs many OS processes committing to one Delta table
// at once and checks that the log holds every commit exactly once. The
// processes are the test binary itself, re-executed: a test package calls
// MaybeChild from its TestMain, then Run from a test.
package multiwriter
