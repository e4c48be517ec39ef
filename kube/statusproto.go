package kube

import "github.com/kwatch/kwatch/internal/pbwire"

// readProtoStatus reads a metav1.Status message (without envelope).
func readProtoStatus(b []byte) (wireStatus, error) {
	w := wireStatus{Kind: "Status"}
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		switch {
		case f.Num == 1 && f.Wire == pbwire.Bytes:
			// A broken ListMeta only loses the continue token (field 3).
			_ = pbwire.EachBytesField(f.Data, func(num int, data []byte) {
				if num == 3 {
					w.Metadata.Continue = string(data)
				}
			})
		case f.Num == 2 && f.Wire == pbwire.Bytes:
			w.Status = string(f.Data)
		case f.Num == 3 && f.Wire == pbwire.Bytes:
			w.Message = string(f.Data)
		case f.Num == 4 && f.Wire == pbwire.Bytes:
			w.Reason = string(f.Data)
		case f.Num == 5 && f.Wire == pbwire.Bytes:
			w.Details = readStatusDetails(f.Data)
		case f.Num == 6 && f.Wire == pbwire.Varint:
			w.Code = int32(f.Val)
		}
	}
	return w, s.Err()
}

func readStatusDetails(b []byte) *statusDetails {
	d := &statusDetails{}
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		switch {
		case f.Num == 1 && f.Wire == pbwire.Bytes:
			d.Name = string(f.Data)
		case f.Num == 2 && f.Wire == pbwire.Bytes:
			d.Group = string(f.Data)
		case f.Num == 3 && f.Wire == pbwire.Bytes:
			d.Kind = string(f.Data)
		case f.Num == 4 && f.Wire == pbwire.Bytes && len(d.Causes) < maxStatusCauses:
			d.Causes = append(d.Causes, readStatusCause(f.Data))
		case f.Num == 5 && f.Wire == pbwire.Varint:
			d.RetryAfterSeconds = int32(f.Val)
		case f.Num == 6 && f.Wire == pbwire.Bytes:
			d.UID = string(f.Data)
		}
	}
	return d
}

func readStatusCause(b []byte) (c statusCause) {
	_ = pbwire.EachBytesField(b, func(num int, data []byte) {
		switch num {
		case 1:
			c.Reason = string(data)
		case 2:
			c.Message = string(data)
		case 3:
			c.Field = string(data)
		}
	})
	return c
}

// statusFromProtobuf builds the StatusError of an enveloped Status body;
// ok is false when the body is not one.
func statusFromProtobuf(body []byte) (*StatusError, bool) {
	env, err := pbwire.Unwrap(body)
	if err != nil || env.Kind != "Status" {
		return nil, false
	}
	w, err := readProtoStatus(env.Raw)
	if err != nil {
		return nil, false
	}
	return w.toError(), true
}
