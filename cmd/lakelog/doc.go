// Command lakelog creates, writes, reads and inspects Delta Lake tables on
// local disk and object storage. Run "lakelog help" for the verbs.
package main
