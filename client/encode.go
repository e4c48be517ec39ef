package client

import (
	"errors"
	"fmt"

	jsoniter "github.com/json-iterator/go"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
)

// enc encodes request bodies as encoding/json would (MarshalJSON methods
// of metav1.Time, resource.Quantity and the like included), faster.
var enc = jsoniter.ConfigCompatibleWithStandardLibrary

// ProtobufMarshaler is an object type with a generated protobuf Marshal,
// as every k8s.io/api type has. Such objects are sent in protobuf unless
// the Client's Options.Encoding, or its kube.Config's Encoding.ContentType,
// says JSON.
type ProtobufMarshaler interface {
	Marshal() ([]byte, error)
}

// encodeJSON marshals obj for res and makes sure its top level names res's
// apiVersion and kind: missing ones are added (typed objects usually leave
// TypeMeta empty), different ones are an error, found before anything is
// sent.
func encodeJSON(obj any, res kube.Resource) ([]byte, error) {
	b, err := enc.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the %T: %w", obj, err)
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("the %T does not encode to a JSON object", obj)
	}
	apiVersion, kind, known := typeOfObject(obj)
	if !known {
		if apiVersion, kind, err = typeOf(b); err != nil {
			return nil, fmt.Errorf("encoding the %T: %w", obj, err)
		}
	}
	if err := checkType(res, apiVersion, kind); err != nil {
		return nil, err
	}
	if apiVersion != "" && (kind != "" || res.Kind == "") {
		return b, nil
	}
	return addType(b, res, apiVersion == "", kind == "" && res.Kind != ""), nil
}

// typeOfObject reads apiVersion and kind from the object itself, when its
// type says where they are: unstructured objects (GetAPIVersion, GetKind)
// and types embedding metav1.TypeMeta (GetObjectKind), whose JSON then
// holds them exactly when they are set. known is false for other types,
// whose encoding must be read.
func typeOfObject(obj any) (apiVersion, kind string, known bool) {
	switch o := obj.(type) {
	case interface {
		GetAPIVersion() string
		GetKind() string
	}:
		return o.GetAPIVersion(), o.GetKind(), true
	case interface{ GetObjectKind() schema.ObjectKind }:
		if tm, ok := o.GetObjectKind().(*metav1.TypeMeta); ok && tm != nil {
			return tm.APIVersion, tm.Kind, true
		}
	}
	return "", "", false
}

// typeOf reads the top-level apiVersion and kind of a JSON object.
func typeOf(b []byte) (apiVersion, kind string, err error) {
	iter := enc.BorrowIterator(b)
	defer enc.ReturnIterator(iter)
	iter.ReadMapCB(func(it *jsoniter.Iterator, key string) bool {
		switch {
		case key == "apiVersion" && it.WhatIsNext() == jsoniter.StringValue:
			apiVersion = it.ReadString()
		case key == "kind" && it.WhatIsNext() == jsoniter.StringValue:
			kind = it.ReadString()
		default:
			it.Skip()
		}
		return true
	})
	if iter.Error != nil {
		return "", "", iter.Error
	}
	return apiVersion, kind, nil
}

// checkType refuses an object of another kind or version than res's.
func checkType(res kube.Resource, apiVersion, kind string) error {
	if kind != "" && res.Kind != "" && kind != res.Kind {
		return &InputError{What: "kind", Err: fmt.Errorf("object of kind %q given to resource %s of kind %q", kind, res, res.Kind)}
	}
	if apiVersion != "" && apiVersion != res.GroupVersion() {
		return &InputError{What: "apiVersion", Err: fmt.Errorf("object of apiVersion %q given to resource %s of %q", apiVersion, res, res.GroupVersion())}
	}
	return nil
}

// addType inserts apiVersion and kind at the start of the object b.
func addType(b []byte, res kube.Resource, version, kind bool) []byte {
	out := make([]byte, 0, len(b)+len(res.Kind)+len(res.GroupVersion())+30)
	out = append(out, '{')
	if version {
		out = append(out, `"apiVersion":`...)
		out = appendString(out, res.GroupVersion())
	}
	if kind {
		if version {
			out = append(out, ',')
		}
		out = append(out, `"kind":`...)
		out = appendString(out, res.Kind)
	}
	rest := b[1:]
	if !isEmptyObject(rest) {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	b, _ := enc.Marshal(s) // a string always encodes
	return append(dst, b...)
}

func isEmptyObject(rest []byte) bool {
	for _, c := range rest {
		switch c {
		case ' ', '\t', '\n', '\r':
		case '}':
			return true
		default:
			return false
		}
	}
	return true
}

// encodeProtobuf encodes obj in the API server's protobuf envelope.
func encodeProtobuf(obj ProtobufMarshaler, res kube.Resource) ([]byte, error) {
	if res.Kind == "" {
		return nil, errors.New("protobuf bodies need the Client's Kind")
	}
	raw, err := obj.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encoding the %T in protobuf: %w", obj, err)
	}
	return pbwire.Wrap(make([]byte, 0, len(raw)+len(res.Kind)+len(res.GroupVersion())+16), res.GroupVersion(), res.Kind, raw), nil
}
