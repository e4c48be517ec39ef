package watch

import "github.com/kwatch/kwatch/kube"

// encoding is what a list or a watch asks the server for and how it reads
// the answer: chosen once, by chooseEncoding, for both.
type encoding[T Object] struct {
	accept string         // the Accept header
	codec  *protoCodec[T] // decodes a protobuf answer; nil when none was asked for
}

// asked is what the caller's options say of the encoding (ListOptions and
// WatchOptions carry the same two fields).
type asked struct {
	form Form
	json bool
}

// chooseEncoding picks, in this order: the server's Table (kubectl's
// printing) when asked; PartialObjectMetadata (as metaAccept, the list or
// the watch form) when only metadata is; JSON when asked; else protobuf
// when the client and T allow it (protoAccept), else JSON. Table and
// metadata are JSON only: kwatch decodes neither from protobuf.
func chooseEncoding[T Object](c *kube.Client, a asked, metaAccept string) encoding[T] {
	switch {
	case a.form.IsTable():
		return encoding[T]{accept: AcceptTable}
	case a.form == FormMetadata:
		return encoding[T]{accept: metaAccept}
	case a.json:
		return encoding[T]{accept: acceptJSON}
	}
	accept, codec := protoAccept[T](c)
	return encoding[T]{accept: accept, codec: codec}
}

// protobuf reports whether an answer of contentType is decoded as protobuf:
// false for JSON (which every request accepts), errWrongEncoding for
// protobuf nobody asked for.
func (e encoding[T]) protobuf(contentType string) (bool, error) {
	switch {
	case !kube.IsProtobuf(contentType):
		return false, nil
	case e.codec == nil:
		return false, errWrongEncoding
	}
	return true, nil
}
