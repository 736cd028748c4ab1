package objstore_test

import (
	"testing"

	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/objstore/objstoretest"
)

func TestMemConformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store { return objstore.NewMem() })
}

func TestLocalConformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := objstore.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestLocalConformanceNamedTemp runs the suite with the named temporary
// files that systems without O_TMPFILE use for create-if-absent.
func TestLocalConformanceNamedTemp(t *testing.T) {
	defer objstore.NamedCreatesOnly()()
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := objstore.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// objstoretestRun runs the suite with fewer race rounds, for wrappers whose
// race behaviour is their inner store's, already tested in full.
func objstoretestRun(t *testing.T, newStore func(t *testing.T) objstore.Store) {
	objstoretest.Run(t, newStore, objstoretest.WithRaceRounds(20))
}
