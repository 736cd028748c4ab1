package dml

import "time"

// finalMetrics names the job's counters as Spark's operationMetrics for
// the operation.
func (j *job) finalMetrics(out *outcome, rewriteMs int64) map[string]int64 {
	j.mu.Lock()
	c := j.metrics
	j.mu.Unlock()
	// Spark's commitInfo names no change-file bytes (its commands count
	// them, but DeltaOperationMetrics leaves them out of the commit).
	var addedFiles, addedBytes, changeFiles, removedBytes int64
	if out.data != nil {
		addedFiles, addedBytes = int64(len(out.data.Adds)), out.data.NumBytes
	}
	if out.changes != nil {
		changeFiles = int64(len(out.changes.Files))
	}
	for _, a := range out.removed {
		removedBytes += a.Size
	}
	m := map[string]int64{
		"executionTimeMs": time.Since(j.start).Milliseconds(),
		"scanTimeMs":      j.scanMs,
		"rewriteTimeMs":   rewriteMs,
	}
	dvAdded, dvRemoved, dvUpdated := c["dvAdded"], c["dvRemoved"], c["dvUpdated"]
	switch j.op {
	case opMerge:
		m["numSourceRows"] = c["sourceRows"]
		m["materializeSourceTimeMs"] = j.sourceMs
		m["numTargetRowsInserted"] = c["inserted"]
		m["numTargetRowsUpdated"] = c["updated"]
		m["numTargetRowsMatchedUpdated"] = c["matchedUpdated"]
		m["numTargetRowsNotMatchedBySourceUpdated"] = c["updated"] - c["matchedUpdated"]
		m["numTargetRowsDeleted"] = c["deleted"]
		m["numTargetRowsMatchedDeleted"] = c["matchedDeleted"]
		m["numTargetRowsNotMatchedBySourceDeleted"] = c["deleted"] - c["matchedDeleted"]
		m["numTargetRowsCopied"] = c["copied"]
		m["numOutputRows"] = c["copied"] + c["updated"] + c["inserted"]
		m["numTargetFilesAdded"] = addedFiles
		m["numTargetFilesRemoved"] = int64(len(out.removed))
		m["numTargetChangeFilesAdded"] = changeFiles
		m["numTargetBytesAdded"] = addedBytes
		m["numTargetBytesRemoved"] = removedBytes
		m["numTargetDeletionVectorsAdded"] = dvAdded
		m["numTargetDeletionVectorsRemoved"] = dvRemoved
		m["numTargetDeletionVectorsUpdated"] = dvUpdated
	default:
		if j.op == opDelete {
			m["numDeletedRows"] = c["deleted"]
		} else {
			m["numUpdatedRows"] = c["updated"]
		}
		m["numCopiedRows"] = c["copied"]
		m["numAddedFiles"] = addedFiles
		m["numRemovedFiles"] = int64(len(out.removed))
		m["numAddedChangeFiles"] = changeFiles
		m["numAddedBytes"] = addedBytes
		m["numRemovedBytes"] = removedBytes
		m["numDeletionVectorsAdded"] = dvAdded
		m["numDeletionVectorsRemoved"] = dvRemoved
		m["numDeletionVectorsUpdated"] = dvUpdated
	}
	return m
}
