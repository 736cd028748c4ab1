package objstore_test

import (
	"errors"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakelog/lakelog/objstore"
)

var errDisk = errors.New("disk on fire")

func TestFaultyPassesThroughWithoutInjectors(t *testing.T) {
	mem := objstore.NewMem()
	f := objstore.Faulty(mem)
	mustPut(t, f, "a", "1")
	if b, err := f.Get(t.Context(), "a"); err != nil || string(b) != "1" {
		t.Fatalf("Get = %q, %v", b, err)
	}
	if f.Inner() != objstore.Store(mem) {
		t.Error("Inner is not the wrapped store")
	}
}

func TestFaultyConformance(t *testing.T) {
	// A FaultyStore whose injectors never fire is a correct store.
	objstoretestRun(t, func(t *testing.T) objstore.Store {
		return objstore.Faulty(objstore.NewMem(),
			objstore.FailMatching(objstore.OpPut, "never/*", errDisk),
			objstore.LoseResponse(objstore.OpGet, "never"))
	})
}

func TestFailNth(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem(), objstore.FailNth(objstore.OpPut, 3, errDisk))
	var errs []error
	for i := range 5 {
		errs = append(errs, put(t, f, "k"+string(rune('0'+i)), "v", objstore.PutOptions{}))
	}
	for i, err := range errs {
		if i == 2 {
			if !errors.Is(err, errDisk) || !errors.Is(err, objstore.ErrInjected) {
				t.Errorf("3rd put = %v, want errDisk and ErrInjected", err)
			}
			var ie *objstore.InjectedError
			if !errors.As(err, &ie) || ie.Call != (objstore.Call{Op: objstore.OpPut, Key: "k2"}) {
				t.Errorf("3rd put error carries %+v, want the call", ie)
			}
			continue
		}
		if err != nil {
			t.Errorf("put %d = %v, want nil", i+1, err)
		}
	}
	// Other ops do not count and the failed put wrote nothing.
	if got := listKeys(t, f, "", ""); !slices.Equal(got, []string{"k0", "k1", "k3", "k4"}) {
		t.Errorf("List = %q", got)
	}
}

func TestFailNthAnyOpAndNilError(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem(), objstore.FailNth(objstore.OpAny, 2, nil))
	mustPut(t, f, "a", "1")
	_, err := f.Get(t.Context(), "a")
	if !errors.Is(err, objstore.ErrInjected) {
		t.Fatalf("2nd call = %v, want ErrInjected", err)
	}
	if strings.Count(err.Error(), "injected") != 1 {
		t.Errorf("message repeats itself: %q", err)
	}
	if _, err := f.Get(t.Context(), "a"); err != nil {
		t.Errorf("3rd call = %v, want nil", err)
	}
}

func TestFailMatching(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem(), objstore.FailMatching(objstore.OpPut, "_delta_log/*.json", errDisk))
	for i := range 3 {
		err := put(t, f, "_delta_log/0"+string(rune('0'+i))+".json", "v", objstore.PutOptions{IfAbsent: true})
		if !errors.Is(err, errDisk) || !errors.Is(err, objstore.ErrInjected) {
			t.Errorf("commit put %d = %v, want errDisk", i, err)
		}
	}
	// '*' does not cross '/', other names and other ops pass.
	mustPut(t, f, "_delta_log/_sidecars/x.json", "s")
	mustPut(t, f, "_delta_log/00.checkpoint.parquet", "c")
	mustPut(t, f, "part=1/a.json", "d")
	if got := listKeys(t, f, "", ""); len(got) != 3 {
		t.Errorf("List = %q, want the 3 unmatched puts", got)
	}
}

func TestFailMatchingBadGlobFailsLoudly(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem(), objstore.FailMatching(objstore.OpGet, "[", errDisk))
	if _, err := f.Get(t.Context(), "x"); !errors.Is(err, path.ErrBadPattern) || !errors.Is(err, objstore.ErrInjected) {
		t.Errorf("Get with a bad glob = %v, want ErrBadPattern", err)
	}
	mustPut(t, f, "x", "other ops pass")
}

func TestFailMatchingList(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem(), objstore.FailMatching(objstore.OpList, "_delta_log/", errDisk))
	mustPut(t, f, "_delta_log/00.json", "v")
	n := 0
	for _, err := range f.List(t.Context(), "_delta_log/", "") {
		n++
		if !errors.Is(err, errDisk) {
			t.Errorf("List yielded %v, want errDisk", err)
		}
	}
	if n != 1 {
		t.Errorf("failed List yielded %d times, want 1", n)
	}
	if got := listKeys(t, f, "", ""); len(got) != 1 {
		t.Errorf("List of another prefix = %q", got)
	}
}

func TestLoseResponseWrites(t *testing.T) {
	mem := objstore.NewMem()
	f := objstore.Faulty(mem, objstore.Times(1, objstore.LoseResponse(objstore.OpPut, "_delta_log/*.json")))
	key := "_delta_log/00000000000000000001.json"
	err := put(t, f, key, "mine", objstore.PutOptions{IfAbsent: true})
	if !errors.Is(err, objstore.ErrLostResponse) || !errors.Is(err, objstore.ErrInjected) {
		t.Fatalf("put = %v, want ErrLostResponse", err)
	}
	// The write happened: the inner store has it, and a retry sees it taken.
	if b, err := mem.Get(t.Context(), key); err != nil || string(b) != "mine" {
		t.Fatalf("inner store after a lost response: %q, %v", b, err)
	}
	if err := put(t, f, key, "mine", objstore.PutOptions{IfAbsent: true}); !errors.Is(err, objstore.ErrExists) {
		t.Errorf("retry = %v, want ErrExists (Times(1) used up)", err)
	}
}

func TestLoseResponseEveryMatchingCall(t *testing.T) {
	mem := objstore.NewMem()
	mustPut(t, mem, "a", "1")
	f := objstore.Faulty(mem, objstore.LoseResponse(objstore.OpDelete, "*"))
	for range 2 {
		if err := f.Delete(t.Context(), "a"); !errors.Is(err, objstore.ErrLostResponse) {
			t.Errorf("Delete = %v, want ErrLostResponse", err)
		}
	}
	if _, err := mem.Get(t.Context(), "a"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Delete whose response was lost did not delete: %v", err)
	}
}

func TestLoseResponseList(t *testing.T) {
	mem := objstore.NewMem()
	mustPut(t, mem, "a", "1")
	mustPut(t, mem, "b", "2")
	c := objstore.Counting(mem)
	f := objstore.Faulty(c, objstore.LoseResponse(objstore.OpList, ""))
	var got []error
	for info, err := range f.List(t.Context(), "", "") {
		if err == nil {
			t.Errorf("List yielded %q despite the lost response", info.Key)
		}
		got = append(got, err)
	}
	if len(got) != 1 || !errors.Is(got[0], objstore.ErrLostResponse) {
		t.Errorf("List yielded %v, want one ErrLostResponse", got)
	}
	if c.Count(objstore.OpList) != 1 {
		t.Errorf("the inner List ran %d times, want 1", c.Count(objstore.OpList))
	}
}

func TestTimes(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem(), objstore.Times(2, objstore.FailMatching(objstore.OpPut, "*", errDisk)))
	var failed int
	for i := range 5 {
		if err := put(t, f, "k"+string(rune('0'+i)), "v", objstore.PutOptions{}); err != nil {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("%d puts failed, want 2", failed)
	}
}

func TestFuncAndOrder(t *testing.T) {
	var asked []string
	record := func(name string, before, after error) objstore.Injector {
		return objstore.Func(func(c objstore.Call) (error, error) {
			asked = append(asked, name+":"+c.Key)
			if c.Key == "stop-"+name {
				return before, after
			}
			return nil, nil
		})
	}
	f := objstore.Faulty(objstore.NewMem(), record("first", errDisk, nil), record("second", nil, errDisk))
	if err := put(t, f, "stop-first", "v", objstore.PutOptions{}); !errors.Is(err, errDisk) {
		t.Errorf("put = %v, want errDisk", err)
	}
	if err := put(t, f, "stop-second", "v", objstore.PutOptions{}); !errors.Is(err, errDisk) || !errors.Is(err, objstore.ErrInjected) {
		t.Errorf("put = %v, want errDisk", err)
	}
	if err := put(t, f, "free", "v", objstore.PutOptions{}); err != nil {
		t.Errorf("put = %v", err)
	}
	want := []string{"first:stop-first", "first:stop-second", "second:stop-second", "first:free", "second:free"}
	if !slices.Equal(asked, want) {
		t.Errorf("injectors were asked %q, want %q", asked, want)
	}
	// The before error wrote nothing; the after error wrote.
	if got := listKeys(t, f.Inner(), "", ""); !slices.Equal(got, []string{"free", "stop-second"}) {
		t.Errorf("inner store holds %q", got)
	}
}

func TestFaultyAddConcurrently(t *testing.T) {
	f := objstore.Faulty(objstore.NewMem())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				key := "k" + string(rune('a'+i)) + string(rune('a'+j%26))
				_ = f.Put(t.Context(), key, strings.NewReader("v"), objstore.PutOptions{})
				if j == 25 {
					f.Add(objstore.FailNth(objstore.OpGet, 1, errDisk))
				}
				_, _ = f.Get(t.Context(), key)
			}
		})
	}
	wg.Wait()
	// Every Add arrived: 8 FailNth(get, 1) injectors each fail one get.
	fails := 0
	for range 20 {
		if _, err := f.Get(t.Context(), "kaa"); err != nil {
			fails++
		}
	}
	if fails > 8 {
		t.Errorf("%d gets failed after the run, want at most 8", fails)
	}
}
