package sim

import (
	"bytes"
	"net/http"
)

// trackLocked does for a write what the real server does besides storing it:
// for a client's write, validation (validate.go; a create was validated before
// its existence check) and metadata.managedFields (managedfields.go); for an
// in-process write whose object has no managedFields, the stored ones are kept,
// as the real server keeps them for a client that does not send them. The
// caller holds store.mu for writing.
func (s *Server) trackLocked(op *writeOp, cur *object) *StatusError {
	if op.owner == nil {
		if cur == nil || !bytes.Contains(cur.meta(), []byte(`"managedFields"`)) {
			return nil
		}
		md := metadataOf(op.m)
		if _, ok := md["managedFields"]; ok {
			return nil
		}
		var stored struct {
			Metadata struct {
				ManagedFields []any `json:"managedFields"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(cur.raw, &stored); err == nil && stored.Metadata.ManagedFields != nil {
			md["managedFields"] = stored.Metadata.ManagedFields
		}
		return nil
	}
	if cur != nil {
		if serr := validateObject(op.r, op.m, op.name, false); serr != nil {
			return serr
		}
	}
	if op.tracked {
		if md := metadataOf(op.m); op.trackedFields != nil {
			md["managedFields"] = op.trackedFields
		} else {
			delete(md, "managedFields")
		}
		return nil
	}
	if op.owner.now.IsZero() {
		op.owner.now = s.store.clock()
	}
	if op.r.info.key() == "namespaces" {
		// Defaulting, which the real server does before tracking fields, sets
		// this label (completeMeta sets it again on every write).
		lbl, _ := metadataOf(op.m)["labels"].(map[string]any)
		if lbl == nil {
			lbl = map[string]any{}
			metadataOf(op.m)["labels"] = lbl
		}
		lbl["kubernetes.io/metadata.name"] = op.name
	}
	var live map[string]any
	if cur != nil {
		if err := json.Unmarshal(cur.raw, &live); err != nil {
			return newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
		}
	}
	recordUpdate(op.r, op.owner, live, op.m)
	return nil
}

// rvMember is how the resourceVersion member of a stored object's metadata starts.
const rvMember = `,"resourceVersion":"`

// withoutRV is a copy of o without metadata.resourceVersion: the answer to a dry
// run that creates, which the real server gives no resourceVersion.
func withoutRV(o *object) *object {
	start := o.rvOff - len(rvMember)
	end := o.rvOff + o.rvLen + 1 // the closing quote
	if start < 0 || end > len(o.raw) || string(o.raw[start:o.rvOff]) != rvMember {
		return o
	}
	c := *o
	c.raw = append(append(make([]byte, 0, len(o.raw)), o.raw[:start]...), o.raw[end:]...)
	c.metaEnd -= end - start
	return &c
}
