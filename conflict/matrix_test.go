package conflict_test

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lakelog/lakelog/actions"
	"github.com/lakelog/lakelog/conflict"
	"github.com/lakelog/lakelog/expr"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/matrix.txt with the outcomes the checker gives")

const matrixFile = "testdata/matrix.txt"

// TestMatrix runs every case of testdata/matrix.txt: our operation against
// one winning commit, on a table layout at an isolation level, and compares
// the outcome and the files named with the file. The vocabulary of
// operations and the table they run on are described at the top of the
// file and built by the functions below.
func TestMatrix(t *testing.T) {
	data, err := os.ReadFile(matrixFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var (
		rows     []matrixRow
		failures []string
	)
	for i, line := range lines {
		row, ok, err := parseMatrixLine(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", matrixFile, i+1, err)
		}
		if !ok {
			rows = append(rows, matrixRow{raw: line})
			continue
		}
		outcome, files, err := runCase(row)
		if err != nil {
			t.Fatalf("%s:%d: %v", matrixFile, i+1, err)
		}
		if !*rewrite && (outcome != row.outcome || files != row.files) {
			failures = append(failures, fmt.Sprintf("%s:%d: %s vs %s (%s, %s)\n\twant %s %s\n\tgot  %s %s",
				matrixFile, i+1, row.ours, row.winner, row.table, row.iso, row.outcome, row.files, outcome, files))
		}
		row.outcome, row.files = outcome, files
		rows = append(rows, row)
	}
	if *rewrite {
		if err := os.WriteFile(matrixFile, []byte(formatMatrix(rows)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, f := range failures {
		t.Error(f)
	}
	if len(failures) > 0 {
		t.Log("if the new outcomes are right, run go test ./conflict -run TestMatrix -rewrite and review the diff")
		return
	}
	if formatted := formatMatrix(rows); formatted != string(data) {
		t.Errorf("%s is not in canonical form; run with -rewrite", matrixFile)
	}
}

// matrixRow is one line of the matrix: a case, or (raw set) a comment or
// blank line kept as it is.
type matrixRow struct {
	raw                      string
	ours, winner, table, iso string
	outcome, files           string
	why                      string
}

func parseMatrixLine(line string) (matrixRow, bool, error) {
	trimmed := strings.TrimSpace(line)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return matrixRow{}, false, nil
	}
	text, why, _ := strings.Cut(line, "#")
	f := strings.Fields(text)
	if len(f) != 4 && len(f) != 6 {
		return matrixRow{}, false, fmt.Errorf("want 4 fields (ours winner table iso) or 6 (... outcome files), got %d: %q", len(f), line)
	}
	r := matrixRow{ours: f[0], winner: f[1], table: f[2], iso: f[3], why: strings.TrimSpace(why)}
	if len(f) == 6 {
		r.outcome, r.files = f[4], f[5]
	}
	return r, true, nil
}

// formatMatrix prints the rows with the case columns aligned.
func formatMatrix(rows []matrixRow) string {
	var width [6]int
	cols := func(r matrixRow) [6]string {
		return [6]string{r.ours, r.winner, r.table, r.iso, r.outcome, r.files}
	}
	for _, r := range rows {
		if r.raw != "" || r.ours == "" {
			continue
		}
		for i, c := range cols(r) {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		if r.ours == "" {
			b.WriteString(r.raw + "\n")
			continue
		}
		var line strings.Builder
		for i, c := range cols(r) {
			line.WriteString(c)
			if i < len(width)-1 || r.why != "" {
				line.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		if r.why != "" {
			line.WriteString("# " + r.why)
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// runCase builds the case's transaction and winner and runs Check.
func runCase(r matrixRow) (outcome, files string, err error) {
	layout, ok := layouts[r.table]
	if !ok {
		return "", "", fmt.Errorf("unknown table layout %q (part, flat, flat-nostats)", r.table)
	}
	iso, ok := isolations[r.iso]
	if !ok {
		return "", "", fmt.Errorf("unknown isolation %q (WS, S, SI)", r.iso)
	}
	ours, err := buildOp(r.ours, layout, "o")
	if err != nil {
		return "", "", fmt.Errorf("ours: %w", err)
	}
	win, err := buildOp(r.winner, layout, "w")
	if err != nil {
		return "", "", fmt.Errorf("winner: %w", err)
	}
	tbl := layout.table()
	tx, err := ours.txn(tbl, iso)
	if err != nil {
		return "", "", err
	}
	cerr := conflict.Check(tx, tbl, win.winner(readVersion+1))
	if cerr == nil {
		return "rebase", "-", nil
	}
	var ce *conflict.Error
	if !errors.As(cerr, &ce) {
		return "", "", fmt.Errorf("Check returned %T, not *conflict.Error: %v", cerr, cerr)
	}
	if ce.WinningVersion != readVersion+1 {
		return "", "", fmt.Errorf("WinningVersion %d, want %d", ce.WinningVersion, readVersion+1)
	}
	files = "-"
	if len(ce.Paths) > 0 {
		files = strings.Join(ce.Paths, ",")
	} else if ce.AppID != "" {
		files = "appId=" + ce.AppID
	}
	return kindName(ce.Kind), files, nil
}

func kindName(k error) string {
	for _, n := range []struct {
		err  error
		name string
	}{
		{conflict.ErrProtocolChanged, "ProtocolChanged"},
		{conflict.ErrMetadataChanged, "MetadataChanged"},
		{conflict.ErrConcurrentAppend, "ConcurrentAppend"},
		{conflict.ErrConcurrentDeleteRead, "ConcurrentDeleteRead"},
		{conflict.ErrConcurrentDeleteDelete, "ConcurrentDeleteDelete"},
		{conflict.ErrConcurrentTransaction, "ConcurrentTransaction"},
	} {
		if k == n.err {
			return n.name
		}
	}
	return fmt.Sprintf("unknown(%v)", k)
}

var isolations = map[string]conflict.Isolation{
	"WS": conflict.WriteSerializable,
	"S":  conflict.Serializable,
	"SI": conflict.SnapshotIsolation,
}

// The table every case starts from, at readVersion: columns country, id
// and v; four files, two per country, ids 1-100 and 101-200.
const readVersion = 10

var readProtocol = &actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}

type dataFile struct {
	name    string
	country string
	lo, hi  int64
}

var tableFiles = []dataFile{
	{"a", "nl", 1, 100},
	{"b", "nl", 101, 200},
	{"c", "de", 1, 100},
	{"d", "de", 101, 200},
}

// layout is how the table is stored: partitioned by country or not, and
// whether add actions carry stats.
type layout struct {
	partitioned bool
	stats       bool
}

var layouts = map[string]layout{
	"part":         {partitioned: true, stats: true},
	"flat":         {partitioned: false, stats: true},
	"flat-nostats": {partitioned: false, stats: false},
}

func (l layout) table() *actions.TableConfig {
	schema, err := actions.ParseDDL("country string, id long, v string")
	if err != nil {
		panic(err)
	}
	var parts []string
	if l.partitioned {
		parts = []string{"country"}
	}
	return tableConfig(schema, parts, nil)
}

// tableConfig is the configuration of a table with schema, partition
// columns and properties, under a protocol that supports what they need.
func tableConfig(schema *actions.StructType, parts []string, conf map[string]string) *actions.TableConfig {
	text, err := actions.SchemaString(schema)
	if err != nil {
		panic(err)
	}
	md := &actions.Metadata{SchemaString: text, PartitionColumns: parts, Configuration: conf}
	c, err := actions.NewTableConfig(&actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7}, md)
	if err != nil {
		panic(err)
	}
	return c.WithProtocol(c.MinimalProtocol())
}

func (l layout) path(f dataFile) string {
	if l.partitioned {
		return "country=" + f.country + "/" + f.name + ".parquet"
	}
	return f.name + ".parquet"
}

func (l layout) add(f dataFile, dataChange bool) *actions.Add {
	a := &actions.Add{Path: l.path(f), PartitionValues: map[string]*string{}, Size: 1000, DataChange: dataChange}
	if l.partitioned {
		c := f.country
		a.PartitionValues["country"] = &c
	}
	if l.stats {
		minV := map[string]any{"id": f.lo, "v": "a"}
		maxV := map[string]any{"id": f.hi, "v": "z"}
		if !l.partitioned {
			minV["country"], maxV["country"] = f.country, f.country
		}
		s := fmt.Sprintf(`{"numRecords":%d,"minValues":%s,"maxValues":%s,"nullCount":{"id":0,"v":0}}`, f.hi-f.lo+1, jsonObject(minV), jsonObject(maxV))
		a.Stats = s
	}
	return a
}

func (l layout) remove(f dataFile, dataChange bool) *actions.Remove {
	add := l.add(f, dataChange)
	ts := int64(1)
	return &actions.Remove{Path: add.Path, DeletionTimestamp: &ts, DataChange: dataChange, PartitionValues: add.PartitionValues}
}

func jsonObject(m map[string]any) string {
	var parts []string
	for _, k := range []string{"country", "id", "v"} {
		switch v := m[k].(type) {
		case nil:
		case string:
			parts = append(parts, strconv.Quote(k)+":"+strconv.Quote(v))
		case int64:
			parts = append(parts, strconv.Quote(k)+":"+strconv.FormatInt(v, 10))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// target is what an operation's predicate selects: rows of one country (or
// all) with ids in [lo, hi].
type target struct {
	country string // "" for every country
	lo, hi  int64
	pred    string
}

var targets = map[string]target{
	"nl":   {"nl", math.MinInt64, math.MaxInt64, "country = 'nl'"},
	"nl.a": {"nl", math.MinInt64, 50, "country = 'nl' AND id <= 50"},
	"nl.b": {"nl", 151, math.MaxInt64, "country = 'nl' AND id > 150"},
	"de":   {"de", math.MinInt64, math.MaxInt64, "country = 'de'"},
	"all":  {"", math.MinInt64, math.MaxInt64, "TRUE"},
}

func (t target) matches(f dataFile) bool {
	return (t.country == "" || t.country == f.country) && f.lo <= t.hi && t.lo <= f.hi
}

func (t target) covers(f dataFile) bool {
	return t.matches(f) && t.lo <= f.lo && f.hi <= t.hi
}

// rest is what remains of f when t's rows are taken out (t must match f
// without covering it): the id range on the far side of t.
func (t target) rest(f dataFile, tag string) dataFile {
	r := dataFile{name: f.name + "-" + tag, country: f.country, lo: f.lo, hi: f.hi}
	switch {
	case t.lo <= f.lo:
		r.lo = t.hi + 1
	case t.hi >= f.hi:
		r.hi = t.lo - 1
	}
	return r
}

// read is the files a scan for t reads: those the layout cannot skip.
func (l layout) read(t target) []dataFile {
	var out []dataFile
	for _, f := range tableFiles {
		if t.matches(f) || (!l.stats && !(l.partitioned && t.country != "" && t.country != f.country)) {
			out = append(out, f)
		}
	}
	return out
}

// op is an operation's effect: what it read and the actions it commits.
type op struct {
	operation string
	acts      []actions.Action
	preds     []string
	readFiles []string
	readWhole bool
	appIDs    []string
	noInfo    bool // the winner's commit has no commitInfo
}

// buildOp builds an operation of the vocabulary (see testdata/matrix.txt)
// by our side (tag "o") or the winner's ("w").
func buildOp(spec string, l layout, tag string) (*op, error) {
	name, arg := spec, ""
	if i := strings.IndexByte(spec, '('); i >= 0 && strings.HasSuffix(spec, ")") {
		name, arg = spec[:i], spec[i+1:len(spec)-1]
	}
	tg, hasTarget := targets[arg]
	needTarget := func() error {
		if !hasTarget {
			return fmt.Errorf("%s needs a target (nl, nl.a, nl.b, de, all), got %q", name, arg)
		}
		return nil
	}
	o := &op{}
	newFile := func(prefix string, country string, lo, hi int64) dataFile {
		if country == "" {
			country = "nl"
		}
		return dataFile{name: prefix + "-" + tag, country: country, lo: lo, hi: hi}
	}
	addFile := func(f dataFile, dataChange bool) {
		o.acts = append(o.acts, actions.Action{Add: l.add(f, dataChange)})
	}
	removeFile := func(f dataFile, dataChange bool) {
		o.acts = append(o.acts, actions.Action{Remove: l.remove(f, dataChange)})
	}
	scan := func(t target) []dataFile {
		o.preds = append(o.preds, t.pred)
		files := l.read(t)
		for _, f := range files {
			o.readFiles = append(o.readFiles, l.path(f))
		}
		return files
	}
	// rewrite removes the rows of t from the files it read: a file with
	// no row left is removed, one with some is rewritten.
	rewrite := func(t target, files []dataFile) {
		for _, f := range files {
			if !t.matches(f) {
				continue
			}
			removeFile(f, true)
			if !t.covers(f) {
				addFile(t.rest(f, tag), true)
			}
		}
	}
	switch name {
	case "append", "append-noinfo", "append-hi", "stream":
		// A blind append of rows for every id (append-hi: ids the table
		// does not have), into country arg.
		country := arg
		lo, hi := int64(1), int64(1000)
		if name == "append-hi" {
			lo, hi = 5000, 5999
		}
		if name == "stream" {
			country = "nl"
			o.appIDs = []string{arg}
			o.acts = append(o.acts, actions.Action{Txn: &actions.Txn{AppID: arg, Version: map[string]int64{"o": 6, "w": 5}[tag]}})
			o.operation = "STREAMING UPDATE"
		} else {
			o.operation = "WRITE"
		}
		if country != "nl" && country != "de" {
			return nil, fmt.Errorf("%s needs a country (nl, de), got %q", name, arg)
		}
		addFile(newFile("new", country, lo, hi), true)
		o.noInfo = name == "append-noinfo"
	case "insert-select":
		// INSERT INTO t SELECT ... FROM t: reads the whole table.
		if arg != "nl" && arg != "de" {
			return nil, fmt.Errorf("%s needs a country (nl, de), got %q", name, arg)
		}
		o.operation = "WRITE"
		o.readWhole = true
		for _, f := range tableFiles {
			o.readFiles = append(o.readFiles, l.path(f))
		}
		addFile(newFile("new", arg, 1, 1000), true)
	case "delete", "update":
		if err := needTarget(); err != nil {
			return nil, err
		}
		o.operation = strings.ToUpper(name)
		rewrite(tg, scan(tg))
		if name == "update" {
			// The updated rows go to a new file (for a whole-file
			// update, its only replacement).
			addFile(newFile("upd", tg.country, max(tg.lo, 1), min(tg.hi, 200)), true)
		}
	case "merge":
		// MERGE INTO t USING s ON t.<target> AND t.id = s.id: matched
		// rows are updated, the others inserted.
		if err := needTarget(); err != nil {
			return nil, err
		}
		o.operation = "MERGE"
		rewrite(tg, scan(tg))
		addFile(newFile("merged", tg.country, max(tg.lo, 1), min(tg.hi, 1000)), true)
	case "optimize":
		// OPTIMIZE WHERE <target>: compacts each country's files into
		// one, without changing data.
		if err := needTarget(); err != nil {
			return nil, err
		}
		o.operation = "OPTIMIZE"
		byCountry := map[string][]dataFile{}
		var order []string
		for _, f := range scan(tg) {
			if !tg.matches(f) {
				continue
			}
			key := f.country
			if !l.partitioned {
				key = ""
			}
			if _, ok := byCountry[key]; !ok {
				order = append(order, key)
			}
			byCountry[key] = append(byCountry[key], f)
			removeFile(f, false)
		}
		for _, key := range order {
			fs := byCountry[key]
			c := dataFile{name: "opt-" + tag, country: fs[0].country, lo: fs[0].lo, hi: fs[0].hi}
			if key != "" {
				c.name = "opt-" + key + "-" + tag
			}
			for _, f := range fs[1:] {
				c.lo, c.hi = min(c.lo, f.lo), max(c.hi, f.hi)
			}
			addFile(c, false)
		}
	case "replace-where", "overwrite":
		// replaceWhere: every row the target selects is replaced with
		// new rows; overwrite is replaceWhere of the whole table.
		if name == "overwrite" {
			if arg != "" {
				return nil, fmt.Errorf("overwrite takes no argument")
			}
			tg = targets["all"]
		} else if err := needTarget(); err != nil {
			return nil, err
		}
		o.operation = "WRITE"
		rewrite(tg, scan(tg))
		addFile(newFile("new", tg.country, 1, 1000), true)
	case "fsck":
		// Removes the files of a target by name without reading them,
		// as FSCK REPAIR TABLE does with missing files.
		if err := needTarget(); err != nil {
			return nil, err
		}
		o.operation = "FSCK"
		for _, f := range tableFiles {
			if tg.matches(f) {
				removeFile(f, true)
			}
		}
	case "alter":
		// ALTER TABLE SET TBLPROPERTIES: a new metaData, nothing read.
		o.operation = "SET TBLPROPERTIES"
		o.acts = append(o.acts, actions.Action{Metadata: metadataFor(l, map[string]string{"owner": tag})})
	case "add-constraint":
		// ALTER TABLE ADD CONSTRAINT: a new metaData, after checking
		// every row of the table.
		o.operation = "ADD CONSTRAINT"
		o.acts = append(o.acts, actions.Action{Metadata: metadataFor(l, map[string]string{"delta.constraints.pos": "id > 0"})})
		scan(targets["all"])
	case "upgrade":
		// Enables deletion vectors: reader 3 / writer 7.
		o.operation = "UPGRADE PROTOCOL"
		o.acts = append(o.acts, actions.Action{Protocol: &actions.Protocol{
			MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"},
			WriterFeatures: []string{"appendOnly", "invariants", "deletionVectors"},
		}})
	case "upgrade-same":
		// Moves to table features without adding one: (1, 7) with the
		// features writer version 2 implies.
		o.operation = "UPGRADE PROTOCOL"
		o.acts = append(o.acts, actions.Action{Protocol: &actions.Protocol{
			MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"appendOnly", "invariants"},
		}})
	case "domain":
		o.operation = "SET DOMAIN"
		o.acts = append(o.acts, actions.Action{DomainMetadata: &actions.DomainMetadata{Domain: arg, Configuration: "{}"}})
	default:
		return nil, fmt.Errorf("unknown operation %q", spec)
	}
	return o, nil
}

func metadataFor(l layout, conf map[string]string) *actions.Metadata {
	md := &actions.Metadata{
		ID:               "00000000-0000-0000-0000-000000000001",
		Format:           actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     `{"type":"struct","fields":[{"name":"country","type":"string","nullable":true,"metadata":{}},{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"v","type":"string","nullable":true,"metadata":{}}]}`,
		PartitionColumns: []string{},
		Configuration:    conf,
	}
	if l.partitioned {
		md.PartitionColumns = []string{"country"}
	}
	return md
}

// blind is deltalog's rule for commitInfo.isBlindAppend: only
// data-changing adds (or no file actions), nothing read.
func (o *op) blind() bool {
	if o.readWhole || len(o.preds) > 0 || len(o.readFiles) > 0 {
		return false
	}
	for _, a := range o.acts {
		if a.Remove != nil || (a.Add != nil && !a.Add.DataChange) {
			return false
		}
	}
	return true
}

func (o *op) txn(tbl *actions.TableConfig, iso conflict.Isolation) (*conflict.Txn, error) {
	tx := &conflict.Txn{
		ReadVersion:    readVersion,
		Isolation:      iso,
		ReadFiles:      o.readFiles,
		ReadWholeTable: o.readWhole,
		ReadAppIDs:     o.appIDs,
		ReadProtocol:   readProtocol,
		Actions:        o.acts,
		IsBlindAppend:  o.blind(),
	}
	for _, p := range o.preds {
		e, err := expr.Parse(p)
		if err != nil {
			return nil, err
		}
		if e, err = expr.BindPredicate(e, tbl.Schema()); err != nil {
			return nil, err
		}
		tx.ReadPredicates = append(tx.ReadPredicates, e)
	}
	return tx, nil
}

func (o *op) winner(version int64) conflict.Winner {
	w := conflict.Winner{Version: version}
	if !o.noInfo {
		blind := o.blind()
		w.Actions = append(w.Actions, actions.Action{CommitInfo: &actions.CommitInfo{Operation: o.operation, IsBlindAppend: &blind}})
	}
	w.Actions = append(w.Actions, o.acts...)
	return w
}
