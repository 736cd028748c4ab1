package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"sync"
)

// ErrInjected is wrapped by every error a [FaultyStore] injects, so a test
// can tell an injected failure from a real one with errors.Is.
var ErrInjected = errors.New("objstore: injected fault")

// ErrLostResponse is the error of a call whose operation was performed but
// whose reply was dropped, as by [LoseResponse]. It wraps [ErrInjected].
// The caller cannot know whether the operation happened; for a Put it did.
var ErrLostResponse = fmt.Errorf("objstore: response lost: %w", ErrInjected)

// OpAny matches every operation in [FailNth], [FailMatching] and
// [LoseResponse].
const OpAny Op = ""

// Call is one operation on a [FaultyStore], as injectors see it. For List,
// Key is the prefix.
type Call struct {
	Op  Op
	Key string
}

// Injector decides the fate of calls to a [FaultyStore]. A non-nil before
// fails the call without touching the inner store. Otherwise a non-nil after
// lets the call reach the inner store and then replaces its result, as if
// the reply were lost. Injectors must be safe for concurrent use.
type Injector interface {
	Inject(c Call) (before, after error)
}

// Func is an [Injector] written as a function, for custom rules.
type Func func(c Call) (before, after error)

// Inject implements [Injector].
func (f Func) Inject(c Call) (before, after error) { return f(c) }

// InjectedError is the error a [FaultyStore] returns for an injected fault.
// It matches [ErrInjected] with errors.Is and unwraps to the injector's
// error, so errors.Is also sees that (for example [ErrExists], or
// [ErrLostResponse]).
type InjectedError struct {
	Call Call
	// Err is the error the injector chose; it may be nil.
	Err error
}

func (e *InjectedError) Error() string {
	msg := fmt.Sprintf("objstore: injected fault: %s %q", e.Call.Op, e.Call.Key)
	if e.Err != nil && e.Err != ErrInjected {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the injector's error.
func (e *InjectedError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrInjected].
func (e *InjectedError) Is(target error) bool { return target == ErrInjected }

// FaultyStore wraps a [Store] and fails calls as its injectors decide. Each
// call is shown to the injectors in the order they were added, and the
// first one that returns a non-nil error decides; later injectors do not
// see that call. It is safe for concurrent use.
//
// It does not implement [RandomAccess], so [OpenObject] reads through
// GetRange and the injectors see every read.
type FaultyStore struct {
	inner Store
	mu    struct {
		sync.RWMutex
		injectors []Injector
	}
}

var (
	_ Store       = (*FaultyStore)(nil)
	_ RangeReader = (*FaultyStore)(nil)
)

// Faulty wraps inner with the given injectors.
func Faulty(inner Store, injectors ...Injector) *FaultyStore {
	f := &FaultyStore{inner: inner}
	f.Add(injectors...)
	return f
}

// Add appends injectors, which see the calls that start after it returns.
func (f *FaultyStore) Add(injectors ...Injector) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.injectors = append(f.mu.injectors, injectors...)
}

// Inner returns the wrapped store, to inspect it without faults.
func (f *FaultyStore) Inner() Store { return f.inner }

// decide asks the injectors about c and wraps what they say.
func (f *FaultyStore) decide(c Call) (before, after error) {
	f.mu.RLock()
	injectors := f.mu.injectors
	f.mu.RUnlock()
	for _, inj := range injectors {
		b, a := inj.Inject(c)
		switch {
		case b != nil:
			return &InjectedError{Call: c, Err: b}, nil
		case a != nil:
			return nil, &InjectedError{Call: c, Err: a}
		}
	}
	return nil, nil
}

// Get implements [Store].
func (f *FaultyStore) Get(ctx context.Context, key string) ([]byte, error) {
	before, after := f.decide(Call{OpGet, key})
	if before != nil {
		return nil, before
	}
	b, err := f.inner.Get(ctx, key)
	if after != nil {
		return nil, after
	}
	return b, err
}

// GetRange implements [Store].
func (f *FaultyStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	before, after := f.decide(Call{OpGetRange, key})
	if before != nil {
		return nil, before
	}
	b, err := f.inner.GetRange(ctx, key, off, n)
	if after != nil {
		return nil, after
	}
	return b, err
}

// GetRangeInto implements [RangeReader]; its faults are GetRange's.
func (f *FaultyStore) GetRangeInto(ctx context.Context, key string, off int64, p []byte) (int, error) {
	before, after := f.decide(Call{OpGetRange, key})
	if before != nil {
		return 0, before
	}
	n, err := GetRangeInto(ctx, f.inner, key, off, p)
	if after != nil {
		return 0, after
	}
	return n, err
}

// Head implements [Store].
func (f *FaultyStore) Head(ctx context.Context, key string) (ObjectInfo, error) {
	before, after := f.decide(Call{OpHead, key})
	if before != nil {
		return ObjectInfo{}, before
	}
	info, err := f.inner.Head(ctx, key)
	if after != nil {
		return ObjectInfo{}, after
	}
	return info, err
}

// Put implements [Store]. An injected error before the call leaves the body
// unread.
func (f *FaultyStore) Put(ctx context.Context, key string, body io.Reader, opts PutOptions) error {
	before, after := f.decide(Call{OpPut, key})
	if before != nil {
		return before
	}
	err := f.inner.Put(ctx, key, body, opts)
	if after != nil {
		return after
	}
	return err
}

// Delete implements [Store].
func (f *FaultyStore) Delete(ctx context.Context, key string) error {
	before, after := f.decide(Call{OpDelete, key})
	if before != nil {
		return before
	}
	err := f.inner.Delete(ctx, key)
	if after != nil {
		return after
	}
	return err
}

// List implements [Store]. The injectors are asked when iteration begins.
// An error injected after the call lets the inner listing run to its end
// and then yields only that error.
func (f *FaultyStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		before, after := f.decide(Call{OpList, prefix})
		if before != nil {
			yield(ObjectInfo{}, before)
			return
		}
		for info, err := range f.inner.List(ctx, prefix, startAfter) {
			if after != nil {
				if err != nil {
					break
				}
				continue
			}
			if !yield(info, err) || err != nil {
				return
			}
		}
		if after != nil {
			yield(ObjectInfo{}, after)
		}
	}
}

// orInjected returns err, or ErrInjected when err is nil.
func orInjected(err error) error {
	if err == nil {
		return ErrInjected
	}
	return err
}

// matchOp reports whether op is selected by want, where OpAny selects all.
func matchOp(want, op Op) bool { return want == OpAny || want == op }

// FailNth fails the nth call (counting from 1) of op that reaches this
// injector, once, with err (or just [ErrInjected] when err is nil) before
// the call is made. Calls decided by an earlier injector do not count.
func FailNth(op Op, n int, err error) Injector {
	err = orInjected(err)
	var mu sync.Mutex
	seen := 0
	return Func(func(c Call) (error, error) {
		if !matchOp(op, c.Op) {
			return nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == n {
			return err, nil
		}
		return nil, nil
	})
}

// FailMatching fails, before they are made, all calls of op whose key
// matches glob, with err (or just [ErrInjected] when err is nil). glob is
// a [path.Match] pattern: '*' and '?' do not cross '/', so
// "_delta_log/*.json" matches the commits but not
// "_delta_log/_sidecars/x.parquet", and there is no "**". A malformed glob
// fails every call of op, so the test notices. Wrap it in [Times] to fail
// only the first calls.
func FailMatching(op Op, glob string, err error) Injector {
	err = orInjected(err)
	return Func(func(c Call) (error, error) {
		if !matchOp(op, c.Op) {
			return nil, nil
		}
		ok, merr := path.Match(glob, c.Key)
		if merr != nil {
			return fmt.Errorf("objstore: FailMatching glob %q: %w", glob, merr), nil
		}
		if ok {
			return err, nil
		}
		return nil, nil
	})
}

// LoseResponse lets every call of op whose key matches glob (as in
// [FailMatching]) reach the inner store and then fails it with
// [ErrLostResponse], as if the network dropped the reply: a Put is written
// but its caller sees an error. Wrap it in [Times] to lose only the first
// replies, for example Times(1, LoseResponse(OpPut, "_delta_log/*.json")).
func LoseResponse(op Op, glob string) Injector {
	return Func(func(c Call) (error, error) {
		if !matchOp(op, c.Op) {
			return nil, nil
		}
		ok, merr := path.Match(glob, c.Key)
		if merr != nil {
			return fmt.Errorf("objstore: LoseResponse glob %q: %w", glob, merr), nil
		}
		if ok {
			return nil, ErrLostResponse
		}
		return nil, nil
	})
}

// Times lets inj decide at most n calls: once inj has returned a non-nil
// error n times, it is no longer asked and every call passes.
func Times(n int, inj Injector) Injector {
	var mu sync.Mutex
	fired := 0
	return Func(func(c Call) (error, error) {
		mu.Lock()
		defer mu.Unlock()
		if fired >= n {
			return nil, nil
		}
		before, after := inj.Inject(c)
		if before != nil || after != nil {
			fired++
		}
		return before, after
	})
}

// Location implements [Locator]: the wrapped store's.
func (f *FaultyStore) Location() string { return Location(f.inner) }
