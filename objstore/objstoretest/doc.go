// Package objstoretest is the conformance suite for [objstore.Store]
// implementations. Every store lakelog ships passes [Run]: the in-memory and
// local stores always, the cloud stores against their emulators.
//
// The suite checks what the rest of lakelog relies on: whole-object round
// trips (empty, small, larger than 1 MiB), overwrite, create-if-absent that
// never clobbers and has exactly one winner among racing writers, ErrNotFound
// for missing keys, GetRange edges, idempotent Delete, List in byte order
// of the full key with prefix and strictly-after startAfter, early exit
// from List, keys with spaces, '%', '=', ':', '+', '#', '?', unicode and emoji,
// atomic visibility of a Put whose body fails, and cancelled contexts.
//
// Each subtest calls newStore for a store of its own, which must start
// empty: a fresh folder, a fresh in-memory store, or a fresh prefix in a
// bucket. The suite never assumes two stores share anything. A store
// package runs it from its tests:
//
//	func TestConformance(t *testing.T) {
//		objstoretest.Run(t, func(t *testing.T) objstore.Store {
//			s, err := objstore.NewLocal(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Options tune it for a store that needs it: [WithRaceRounds] and
// [WithRaceWriters] size the create-if-absent race (200 rounds of 32
// writers by default), and [SkipCancellation] is for a store that cannot
// observe its context.
package objstoretest
