package kube

import (
	"fmt"
	"mime"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// The encodings Config.Encoding.ContentType may ask for.
const (
	ContentTypeJSON     = "application/json"
	ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"
)

// IsProtobuf reports whether a Content-Type header names the API server's
// protobuf encoding (with or without ";stream=watch").
func IsProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == ContentTypeProtobuf
}

// checkContentType validates Config.Encoding.ContentType.
func checkContentType(ct string) error {
	switch ct {
	case "", ContentTypeJSON, ContentTypeProtobuf:
		return nil
	}
	return fmt.Errorf("kube: Config.Encoding.ContentType %q is not supported; want %q or %q",
		pbwire.Clip(ct), ContentTypeJSON, ContentTypeProtobuf)
}
