package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/lakelog/lakelog/sharing"
)

func init() {
	register(&verb{
		name: "share", section: sectionOther,
		args:    []arg{{name: "serve|profile"}, {name: "RECIPIENT", optional: true}},
		summary: "serve the tables of a share configuration over the Delta Sharing protocol to pandas, Spark and BI tools (serve), or write a recipient's .share profile (profile RECIPIENT)",
		flags: []flagDef{
			{name: "config", kind: textFlag, arg: "FILE", required: true, hint: "(the shares, tables and recipients: lakelog share --help)", help: "the share configuration (YAML): shares of schemas of tables, recipients and their tokens"},
			{name: "listen", kind: textFlag, arg: "ADDR", help: "serve: listen on ADDR (host:port; port 0 picks a free one) instead of the configuration's host and port"},
			{name: "endpoint", kind: textFlag, arg: "URL", help: "profile: the server's URL as the recipient reaches it, prefix included (default: the configuration's publicUrl, else its host, port and endpoint)"},
			{name: "out", kind: textFlag, arg: "FILE", help: "profile: write the profile to FILE (default RECIPIENT.share), readable by its owner only"},
			{name: "new-token", kind: boolFlag, help: "profile: make a new token for the recipient and print the tokenSha256 to put in the configuration"},
		},
		more: shareHelp,
		run:  runShare,
	})
}

const shareHelp = `The configuration is the reference server's YAML with recipients added:

  version: 1
  host: 0.0.0.0
  port: 8080
  endpoint: /delta-sharing
  preSignedUrlTimeoutSeconds: 3600
  shares:
  - name: sales
    schemas:
    - name: eu
      tables:
      - name: orders
        location: s3://bucket/tables/orders
        historyShared: true        # versions, timestamps and the change feed
        startVersion: 0            # versions before it are not shared
        changeDataFeedShared: true
  recipients:
  - name: acme
    tokenSha256: 64 hex digits     # or token: the token itself
    expirationTime: 2027-01-01T00:00:00Z
    shares: [sales]

Optional: publicUrl (the URL recipients reach), ssl (certificateFile,
certificateKeyFile), limits (maxRequestBytes, requestsPerSecond, burst,
maxPageSize), accessLog (stderr, stdout, off or a file),
urlSigningKeyFile. Files of S3, GCS and Azure tables are given out as the
store's presigned URLs; files of local tables as URLs of this server.
serve checks the configuration and every table before it listens, answers
GET /health, and on an interrupt finishes the requests in flight.`

func runShare(ctx context.Context, c *call) error {
	cfg, err := sharing.LoadConfig(c.text("config"))
	if err != nil {
		return err
	}
	switch c.args[0] {
	case "serve":
		if len(c.args) > 1 {
			return usagef("share serve takes no RECIPIENT")
		}
		return serveShares(ctx, c, cfg)
	case "profile":
		if len(c.args) < 2 {
			return usagef("share profile needs the RECIPIENT whose profile to write")
		}
		return writeProfile(c, cfg, c.args[1])
	}
	return usagef("unknown share action %q (the actions are serve and profile)", c.args[0])
}

func serveShares(ctx context.Context, c *call, cfg *sharing.Config) error {
	srv, err := sharing.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	addr := cfg.Addr()
	if l := c.text("listen"); l != "" {
		addr = l
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("share serve: %w", err)
	}
	scheme := "http"
	if cfg.SSL != nil {
		scheme = "https"
	}
	fmt.Fprintf(c.stderr, "lakelog share: serving %d shares at %s://%s%s (health: /health)\n", len(cfg.Shares), scheme, ln.Addr(), cfg.Endpoint)
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("share serve: %w", err)
	}
	fmt.Fprintln(c.stderr, "lakelog share: stopped")
	return nil
}

func writeProfile(c *call, cfg *sharing.Config, name string) error {
	token, hash := "", ""
	if c.on("new-token") {
		token, hash = sharing.NewToken()
	}
	p, err := cfg.Profile(name, c.text("endpoint"), token)
	if errors.Is(err, sharing.ErrNoToken) {
		return fmt.Errorf("%w: run with --new-token to make one, then put the tokenSha256 it prints in the configuration", err)
	}
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	out := c.text("out")
	if out == "" {
		out = name + ".share"
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(out, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote %s: the profile of recipient %s for %s\n", out, name, p.Endpoint)
	if hash != "" {
		fmt.Fprintf(c.stdout, "put this in the recipient's entry of %s (replacing its token):\n  tokenSha256: %s\n", c.text("config"), hash)
	}
	return nil
}
