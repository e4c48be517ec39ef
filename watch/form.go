package watch

import (
	"fmt"
	"net/url"
	"strconv"
)

// Form is what a list or a watch asks the server to send of each object:
// the object, its metadata, or the server's printed Table. It is one value
// because the forms exclude each other. The zero value, FormObject, is the
// whole object.
type Form int

const (
	// FormObject asks for whole objects, in protobuf or JSON (see
	// chooseEncoding).
	FormObject Form = iota
	// FormMetadata asks for PartialObjectMetadata(List): objects carry
	// only apiVersion, kind and metadata.
	FormMetadata
	// FormTable asks for the server's printed Table (AcceptTable), as
	// kubectl get does, each row carrying its object's
	// PartialObjectMetadata. A list's rows and each watch event's object
	// come as a Table; see DecodeList for how rows become items.
	FormTable
	// FormTableObject is FormTable with each row carrying its whole object
	// (includeObject=Object), for a printer that also needs the object.
	FormTableObject
)

// IsTable reports whether f asks for the server's Table.
func (f Form) IsTable() bool { return f == FormTable || f == FormTableObject }

// String is the constant's name without "Form".
func (f Form) String() string {
	switch f {
	case FormObject:
		return "Object"
	case FormMetadata:
		return "Metadata"
	case FormTable:
		return "Table"
	case FormTableObject:
		return "TableObject"
	}
	return "Form(" + strconv.Itoa(int(f)) + ")"
}

// Valid reports whether f is one of the constants.
func (f Form) Valid() bool { return f >= FormObject && f <= FormTableObject }

// check refuses a value that is none of the constants; where names the
// field ("ListOptions.Form").
func (f Form) check(where string) error {
	if !f.Valid() {
		return fmt.Errorf("watch: %s %v is not one of FormObject, FormMetadata, FormTable, FormTableObject", where, f)
	}
	return nil
}

// setQuery sets the includeObject parameter FormTableObject needs.
func (f Form) setQuery(q url.Values) {
	if f == FormTableObject {
		q.Set("includeObject", "Object")
	}
}
