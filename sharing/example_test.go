package sharing_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/deltalog"
	"github.com/lakelog/lakelog/objstore"
	"github.com/lakelog/lakelog/sharing"
)

// Serve a table to one recipient and ask, as a client would, for the
// shares it reads and the table's version.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sharing-example")
	defer os.RemoveAll(dir)
	st, _ := objstore.NewLocal(dir)
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}`
	tx, _ := deltalog.Create(st, "", &actions.Metadata{SchemaString: schema})
	tx.Commit(ctx)

	cfg, err := sharing.ParseConfig("shares.yaml", []byte(`version: 1
accessLog: off
shares:
- name: sales
  schemas:
  - name: eu
    tables:
    - name: orders
      location: `+dir+`
recipients:
- name: acme
  token: an-example-token-of-32-characters-or-more
  shares: [sales]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := sharing.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler()) // srv.Serve(ctx, listener) in a program
	defer hs.Close()

	get := func(path string) *http.Response {
		req, _ := http.NewRequest("GET", hs.URL+"/delta-sharing"+path, nil)
		req.Header.Set("Authorization", "Bearer an-example-token-of-32-characters-or-more")
		resp, _ := http.DefaultClient.Do(req)
		return resp
	}
	resp := get("/shares")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(body))
	resp = get("/shares/sales/schemas/eu/tables/orders/version")
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Delta-Table-Version"))

	p, _ := cfg.Profile("acme", "https://sharing.example.com/delta-sharing", "")
	fmt.Println(p.Endpoint, strings.HasPrefix(p.BearerToken, "an-example"))
	// Output:
	// {"items":[{"name":"sales"}]}
	// 200 0
	// https://sharing.example.com/delta-sharing true
}
