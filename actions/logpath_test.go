package actions

import "testing"

func TestParseLogPath(t *testing.T) {
	cases := []struct {
		name string
		want LogPath
		ok   bool
	}{
		{"00000000000000000042.json", LogPath{Type: LogCommit, Version: 42}, true},
		{"00000000000000000042.crc", LogPath{Type: LogChecksum, Version: 42}, true},
		{"00000000000000000010.checkpoint.parquet", LogPath{Type: LogCheckpoint, Version: 10}, true},
		{"00000000000000000010.checkpoint.0000000002.0000000003.parquet", LogPath{Type: LogMultiPartCheckpoint, Version: 10, Part: 2, NumParts: 3}, true},
		{"00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet", LogPath{Type: LogUUIDCheckpoint, Version: 2, UUID: "3a0d65cd-4056-49b8-937b-95f9e3ee90e5", Ext: "parquet"}, true},
		{"00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json", LogPath{Type: LogUUIDCheckpoint, Version: 2, UUID: "3a0d65cd-4056-49b8-937b-95f9e3ee90e5", Ext: "json"}, true},
		{"00000000000000000004.00000000000000000006.compacted.json", LogPath{Type: LogCompactedCommit, Version: 4, EndVersion: 6}, true},
		{"_last_checkpoint", LogPath{Type: LogLastCheckpoint}, true},
		// Not log files.
		{"00000000000000000006.00000000000000000004.compacted.json", LogPath{}, false},
		{"00000000000000000010.checkpoint.0000000004.0000000003.parquet", LogPath{}, false},
		{"00000000000000000010.checkpoint.not-a-uuid.parquet", LogPath{}, false},
		{"0000000000000000042.json", LogPath{}, false},
		{"0000000000000000004x.json", LogPath{}, false},
		{"99999999999999999999.json", LogPath{}, false}, // overflows int64
		{".00000000000000000001.json.tmp", LogPath{}, false},
		{".s3-optimization-0", LogPath{}, false},
		{"00000000000000000001.json.tmp", LogPath{}, false},
		{"", LogPath{}, false},
	}
	for _, c := range cases {
		got, ok := ParseLogPath(c.name)
		if ok != c.ok {
			t.Errorf("ParseLogPath(%q) ok = %v, want %v", c.name, ok, c.ok)
			continue
		}
		c.want.Name = c.name
		if got != c.want {
			t.Errorf("ParseLogPath(%q) = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestLogNamesRoundTrip(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 123456789, 1<<62 + 5} {
		p, ok := ParseLogPath(CommitName(v))
		if !ok || p.Type != LogCommit || p.Version != v {
			t.Errorf("commit %d: %+v %v", v, p, ok)
		}
		p, ok = ParseLogPath(CheckpointName(v))
		if !ok || p.Type != LogCheckpoint || p.Version != v {
			t.Errorf("checkpoint %d: %+v %v", v, p, ok)
		}
	}
}

// FuzzParseLogPath: never panics; a parsed name reprints to itself.
func FuzzParseLogPath(f *testing.F) {
	for _, s := range []string{
		"00000000000000000042.json", "00000000000000000010.checkpoint.parquet",
		"00000000000000000010.checkpoint.0000000002.0000000003.parquet",
		"00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json",
		"00000000000000000004.00000000000000000006.compacted.json", "_last_checkpoint", "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p, ok := ParseLogPath(name)
		if !ok {
			return
		}
		if p.Name != name {
			t.Fatalf("Name %q != input %q", p.Name, name)
		}
		switch p.Type {
		case LogCommit:
			if CommitName(p.Version) != name {
				t.Fatalf("commit %q reprints as %q", name, CommitName(p.Version))
			}
		case LogCheckpoint:
			if CheckpointName(p.Version) != name {
				t.Fatalf("checkpoint %q reprints as %q", name, CheckpointName(p.Version))
			}
		case LogMultiPartCheckpoint:
			if p.Part < 1 || p.Part > p.NumParts {
				t.Fatalf("%q: part %d of %d", name, p.Part, p.NumParts)
			}
		case LogCompactedCommit:
			if p.EndVersion < p.Version {
				t.Fatalf("%q: end %d < start %d", name, p.EndVersion, p.Version)
			}
		}
	})
}
