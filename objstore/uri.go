package objstore

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Opener opens a store rooted at a URI of one scheme, configured by opts
// (nil: the environment alone).
type Opener func(ctx context.Context, u *url.URL, opts Options) (Store, error)

// Options are one store's settings, as delta-rs's storage_options: keys
// are the names of the environment variables the store reads
// (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION, ...; AZURE_STORAGE_CONNECTION_STRING,
// AZURE_STORAGE_ACCOUNT_NAME, ...; GOOGLE_APPLICATION_CREDENTIALS,
// STORAGE_EMULATOR_HOST), in any case. A key given here is used instead
// of the environment's, for this store only; a key the store does not
// read is an error naming it.
type Options map[string]string

// Get is key's value: opts' (keys compared without case), else the
// environment's.
func (opts Options) Get(key string) string {
	if v, ok := opts.Lookup(key); ok {
		return v
	}
	return os.Getenv(key)
}

// Lookup is key's value in opts alone.
func (opts Options) Lookup(key string) (string, bool) {
	for k, v := range opts {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// Check refuses a key of opts that is not among known.
func (opts Options) Check(store string, known ...string) error {
	for k := range opts {
		if !slices.ContainsFunc(known, func(n string) bool { return strings.EqualFold(n, k) }) {
			return fmt.Errorf("%s: unknown storage option %q (known: %s)", store, k, strings.Join(known, ", "))
		}
	}
	return nil
}

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
	return OpenWith(ctx, uri, nil)
}

// OpenWith is Open with the store's settings given in opts instead of
// (or as well as) the environment. A local or mem:// URI takes none.
func OpenWith(ctx context.Context, uri string, opts Options) (Store, error) {
	scheme, _, ok := strings.Cut(uri, "://")
	if !ok || len(scheme) < 2 { // plain path; "C:\..." would have a 1-letter scheme
		if len(opts) > 0 {
			return nil, fmt.Errorf("objstore: a local path takes no storage options")
		}
		return openLocalPath(uri)
	}
	switch scheme {
	case "file", "mem":
		if len(opts) > 0 {
			return nil, fmt.Errorf("objstore: %s:// takes no storage options", scheme)
		}
		if scheme == "mem" {
			return NewMem(), nil
		}
		return openFileURI(uri)
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
	return open(ctx, u, opts)
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
