// Package sharingload is the load test of the Delta Sharing server
// (package sharing) on 127.0.0.1: N clients query the latest version and
// follow the change data feed while a writer commits, every answer
// checked against the table's own log (no wrong or missing file), with
// latency percentiles per request kind and the server process's peak
// heap reported. It asserts correctness only, never a speed; run it at
// a tiny size anywhere and at full size on a quiet machine:
//
//	go test ./bench/sharingload -run TestSharingLoad -v \
//	    -sharing.clients 16 -sharing.commits 300 -sharing.interval 100ms -sharing.rows 2000
package sharingload
