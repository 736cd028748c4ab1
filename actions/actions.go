package actions

import "encoding/json"

// Action is one line of a Delta commit file: exactly one of its fields is
// set. The JSON form is {"<kind>": {...}}, as PROTOCOL.md names the kinds.
// An action of a kind this package does not know is kept in Unknown so that
// it survives a read and rewrite.
type Action struct {
	Protocol           *Protocol           `json:"protocol,omitempty"`
	Metadata           *Metadata           `json:"metaData,omitempty"`
	Add                *Add                `json:"add,omitempty"`
	Remove             *Remove             `json:"remove,omitempty"`
	CDC                *AddCDCFile         `json:"cdc,omitempty"`
	CommitInfo         *CommitInfo         `json:"commitInfo,omitempty"`
	Txn                *Txn                `json:"txn,omitempty"`
	DomainMetadata     *DomainMetadata     `json:"domainMetadata,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
	// Unknown holds an action of an unrecognised kind, verbatim (the whole
	// one-key object). Readers ignore it, as the protocol requires.
	Unknown json.RawMessage `json:"-"`
}

// Protocol is the protocol action: the versions and table features a client
// must support to read or write the table.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitzero"`
	WriterFeatures   []string `json:"writerFeatures,omitzero"`
}

// Format names the data files' format; always parquet in practice.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action: the table's identity, schema, partition
// columns and properties.
type Metadata struct {
	ID               string            `json:"id"`
	Name             *string           `json:"name,omitempty"`
	Description      *string           `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
	Configuration    map[string]string `json:"configuration"`
}

// DeletionVector describes the rows of a data file that are deleted
// (PROTOCOL.md "Deletion Vector Descriptor").
type DeletionVector struct {
	// StorageType is "u" (relative path from a UUID), "i" (inline) or "p"
	// (absolute path).
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
	MaxRowIndex    *int64 `json:"maxRowIndex,omitempty"`
}

// UniqueID identifies the deletion vector within the table:
// storageType + pathOrInlineDv, plus "@offset" when an offset is set.
func (dv *DeletionVector) UniqueID() string {
	if dv == nil {
		return ""
	}
	id := dv.StorageType + dv.PathOrInlineDv
	if dv.Offset != nil {
		id += "@" + itoa(int64(*dv.Offset))
	}
	return id
}

// Add is the add action: a data file that becomes part of the table.
// Path is a relative URI (percent-encoded) or an absolute one.
type Add struct {
	Path                    string             `json:"path"`
	PartitionValues         map[string]*string `json:"partitionValues"`
	Size                    int64              `json:"size"`
	ModificationTime        int64              `json:"modificationTime"`
	DataChange              bool               `json:"dataChange"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitzero"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      *string            `json:"clusteringProvider,omitempty"`
}

// Remove is the remove action: a data file that leaves the table. It stays
// as a tombstone until VACUUM's retention passes.
type Remove struct {
	Path                    string             `json:"path"`
	DeletionTimestamp       *int64             `json:"deletionTimestamp,omitempty"`
	DataChange              bool               `json:"dataChange"`
	ExtendedFileMetadata    *bool              `json:"extendedFileMetadata,omitempty"`
	PartitionValues         map[string]*string `json:"partitionValues,omitzero"`
	Size                    *int64             `json:"size,omitempty"`
	Stats                   string             `json:"stats,omitempty"`
	Tags                    map[string]string  `json:"tags,omitzero"`
	DeletionVector          *DeletionVector    `json:"deletionVector,omitempty"`
	BaseRowID               *int64             `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64             `json:"defaultRowCommitVersion,omitempty"`
}

// AddCDCFile is the cdc action: a file of change data written by the commit.
type AddCDCFile struct {
	Path            string             `json:"path"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	DataChange      bool               `json:"dataChange"`
	Tags            map[string]string  `json:"tags,omitzero"`
}

// Txn is the txn (SetTransaction) action: the latest version an application
// has committed, for idempotent writes.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// DomainMetadata is the domainMetadata action: named configuration owned by
// a system or user domain.
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// CheckpointMetadata is the checkpointMetadata action of a V2 checkpoint.
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitzero"`
}

// Sidecar is the sidecar action of a V2 checkpoint: a file under
// _delta_log/_sidecars holding some of the checkpoint's file actions.
type Sidecar struct {
	Path             string            `json:"path"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitzero"`
}

func itoa(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// RemoveOf is the remove action that retires the active file a, as Spark
// writes it: at deletionTimestamp (Unix milliseconds), with dataChange
// (false for a rearrangement such as OPTIMIZE), and with the extended file
// metadata (partition values, size, stats, tags) and a's deletion vector
// and row-tracking fields, so that a reader of the remove needs nothing
// else.
func RemoveOf(a *Add, deletionTimestamp int64, dataChange bool) *Remove {
	ext := true
	size := a.Size
	return &Remove{
		Path:                    a.Path,
		DeletionTimestamp:       &deletionTimestamp,
		DataChange:              dataChange,
		ExtendedFileMetadata:    &ext,
		PartitionValues:         a.PartitionValues,
		Size:                    &size,
		Stats:                   a.Stats,
		Tags:                    a.Tags,
		DeletionVector:          a.DeletionVector,
		BaseRowID:               a.BaseRowID,
		DefaultRowCommitVersion: a.DefaultRowCommitVersion,
	}
}

// Change data (PROTOCOL.md "Change Data Files"): the folder under the
// table root that holds change data files, their column that says what a
// row is, and its values.
const (
	ChangeDataDir    = "_change_data/"
	ChangeTypeColumn = "_change_type"

	ChangeInsert          = "insert"
	ChangeDelete          = "delete"
	ChangeUpdatePreimage  = "update_preimage"
	ChangeUpdatePostimage = "update_postimage"
)
