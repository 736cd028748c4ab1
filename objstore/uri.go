package objstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
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

// RootURI is the URI of a store's root as other engines open it (Iceberg
// readers, Presto and Trino reading a symlink manifest): file:// with an
// absolute path for a local folder, s3:// and gs:// as they are, and
// mem:// for an in-memory store. A store whose location no other engine
// opens (az:// has no abfss:// mapping yet) is an error.
func RootURI(store Store) (string, error) {
	loc := Location(store)
	switch {
	case strings.HasPrefix(loc, "s3://"), strings.HasPrefix(loc, "gs://"), strings.HasPrefix(loc, "file://"):
		return loc, nil
	case strings.HasPrefix(loc, "mem://"), loc == "", strings.HasPrefix(loc, "a "):
		return "mem://", nil
	case strings.Contains(loc, "://"):
		return "", fmt.Errorf("objstore: the store at %s has no location other engines open", loc)
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return "", fmt.Errorf("objstore: %w", err)
	}
	return "file://" + filepath.ToSlash(abs), nil
}
