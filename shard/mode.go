package shard

import "fmt"

// Mode is how the replicas of a ring divide the objects they watch (see
// the package doc for the trade-offs).
type Mode int

const (
	// Filter: every replica watches every object and reconciles only its
	// own keys. The default.
	Filter Mode = iota
	// Label: the owner of a key labels its primary object
	// LabelKey(ring)=<identity>; each replica watches only the objects
	// labelled with its identity and the unlabelled ones.
	Label
)

func (m Mode) String() string {
	switch m {
	case Filter:
		return "filter"
	case Label:
		return "label"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// LabelKey is the label that names the owner of an object in Label mode:
// "shard.kwatch.dev/<ring>".
func LabelKey(ring string) string { return "shard.kwatch.dev/" + ring }
