package deltalog

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakelog/lakelog/actions"
)

// Domain metadata (PROTOCOL.md "Domain Metadata") is named configuration
// that lives in the log beside the table's metadata: one live
// domainMetadata action per domain, replaced by a later one and dropped by
// a removed=true tombstone. Domains named "delta.*" are the system's
// (delta.rowTracking, delta.clustering): only lakelog itself writes them,
// and only those it implements. Any other name is a user domain, open to
// programs through SetDomainMetadata and RemoveDomainMetadata.
//
// Two commits that write the same domain conflict (conflict.Check's
// ConcurrentTransaction rule), except delta.rowTracking, whose high-water
// mark the commit loop recomputes on every attempt.

// ErrReservedDomain is returned when a program sets or removes a system
// domain (a name starting with "delta.").
var ErrReservedDomain = errors.New("domain is reserved for the system")

// ErrNoSuchDomain is returned when a program removes a domain the table
// does not have.
var ErrNoSuchDomain = errors.New("no such domain")

// systemDomainPrefix starts the names of the domains the protocol reserves.
const systemDomainPrefix = "delta."

// IsSystemDomain reports whether domain is reserved for the system (its
// name starts with "delta.", in any case, as Spark compares it).
func IsSystemDomain(domain string) bool {
	return len(domain) >= len(systemDomainPrefix) && strings.EqualFold(domain[:len(systemDomainPrefix)], systemDomainPrefix)
}

// SetDomainMetadata sets the configuration of the user domain in this
// commit (any text; JSON by convention). A table whose protocol lacks the
// domainMetadata writer feature gets it in this commit (the protocol is
// upgraded to writer version 7 as needed, as delta-kernel's
// withDomainMetadataSupported does). Errors: ErrReservedDomain for a
// "delta.*" name, an empty name, or the domain already set or removed in
// this transaction.
func (tx *Transaction) SetDomainMetadata(domain, configuration string) error {
	if err := tx.checkUserDomain(domain, "set"); err != nil {
		return err
	}
	tx.addDomain(actions.DomainMetadata{Domain: domain, Configuration: configuration})
	return nil
}

// RemoveDomainMetadata removes the user domain in this commit: a
// removed=true tombstone carrying the domain's last configuration, as
// Spark writes it. Errors: those of SetDomainMetadata, and ErrNoSuchDomain
// when the snapshot the transaction read has no such domain.
func (tx *Transaction) RemoveDomainMetadata(domain string) error {
	if err := tx.checkUserDomain(domain, "remove"); err != nil {
		return err
	}
	var cur actions.DomainMetadata
	ok := false
	if tx.snap != nil {
		cur, ok = tx.snap.Domain(domain)
	}
	if !ok {
		return fmt.Errorf("deltalog: remove domain %q of %s: %w", domain, tx.display(), ErrNoSuchDomain)
	}
	tx.addDomain(actions.DomainMetadata{Domain: domain, Configuration: cur.Configuration, Removed: true})
	return nil
}

func (tx *Transaction) checkUserDomain(domain, verb string) error {
	switch {
	case domain == "":
		return fmt.Errorf("deltalog: %s domain metadata of %s: the domain name is empty", verb, tx.display())
	case IsSystemDomain(domain):
		return fmt.Errorf("deltalog: %s domain %q of %s: %w (names starting with %q are the protocol's)", verb, domain, tx.display(), ErrReservedDomain, systemDomainPrefix)
	}
	for _, a := range tx.acts {
		if a.DomainMetadata != nil && a.DomainMetadata.Domain == domain {
			return fmt.Errorf("deltalog: %s domain %q of %s: this transaction already writes it (a commit holds one action per domain)", verb, domain, tx.display())
		}
	}
	return nil
}

// addDomain adds the action and, when the protocol lacks the
// domainMetadata writer feature, enables it (as kernel's
// withDomainMetadataSupported).
func (tx *Transaction) addDomain(d actions.DomainMetadata) {
	tx.acts = append(tx.acts, actions.Action{DomainMetadata: &d})
	if c, err := tx.config(); err == nil && !c.Supports(actions.FeatureDomainMetadata) {
		_ = tx.EnableFeatures(actions.FeatureDomainMetadata)
	}
}

// checkDomains is validate's part for domain metadata: at most one action
// per domain, no system domain from a caller (Add), and the
// domainMetadata writer feature in the protocol the commit leaves.
func (tx *Transaction) checkDomains(p *actions.Protocol) error {
	seen := map[string]bool{}
	for _, a := range tx.acts {
		d := a.DomainMetadata
		if d == nil {
			continue
		}
		switch {
		case d.Domain == "":
			return fmt.Errorf("a domainMetadata action has an empty domain name")
		case seen[d.Domain]:
			return fmt.Errorf("domain %q is written twice in one commit (PROTOCOL.md allows one domainMetadata action per domain)", d.Domain)
		case IsSystemDomain(d.Domain):
			return fmt.Errorf("domain %q: %w; lakelog writes the system domains it implements itself", d.Domain, ErrReservedDomain)
		}
		seen[d.Domain] = true
	}
	for d := range seen {
		if !p.HasWriterFeature(actions.FeatureDomainMetadata) {
			return fmt.Errorf("domain %q: the table's protocol (%d, %d) lacks the %s writer feature (Transaction.SetDomainMetadata adds it)", d, p.MinReaderVersion, p.MinWriterVersion, actions.FeatureDomainMetadata)
		}
	}
	return nil
}
