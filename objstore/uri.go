package objstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// Opener opens a store rooted at a URI of one scheme.
type Opener func(ctx context.Context, u *url.URL) (Store, error)

var openers struct {
	sync.RWMutex
	byScheme map[string]Opener
}

// Register makes Open understand a URI scheme ("s3", "gs", "az"). The cloud
// store packages register themselves when imported; a program that wants
// them imports them, as database/sql drivers are imported. It is the only
// package-level state here: it holds openers, never stores.
func Register(scheme string, open Opener) {
	openers.Lock()
	defer openers.Unlock()
	if openers.byScheme == nil {
		openers.byScheme = map[string]Opener{}
	}
	openers.byScheme[scheme] = open
}

// Open returns the store rooted at uri: a plain path or file:// URI (local
// disk), mem:// (a new, empty in-memory store on every call), or a scheme
// registered with Register (s3://bucket/prefix, gs://bucket/prefix,
// az://container/prefix).
func Open(ctx context.Context, uri string) (Store, error) {
	scheme, _, ok := strings.Cut(uri, "://")
	if !ok || len(scheme) < 2 { // plain path; "C:\..." would have a 1-letter scheme
		return openLocalPath(uri)
	}
	switch scheme {
	case "file":
		return openFileURI(uri)
	case "mem":
		return NewMem(), nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("objstore: parse %q: %w", uri, err)
	}
	openers.RLock()
	open := openers.byScheme[scheme]
	openers.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("objstore: unsupported URI scheme %q in %q (is its store package imported?)", scheme, uri)
	}
	return open(ctx, u)
}
